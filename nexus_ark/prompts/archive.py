"""The texts of the archive items that the persona's own components write (memory/components/): the model
reads them through recall (search_memory, the turn's recalled memories), and search embeds them. In
English whatever the persona speaks; the fields are the persona's own words."""

from __future__ import annotations

EPISODE_ITEM = "{date}: {summary}"
EPISODE_KEY_EVENTS = " Key events: {events}"  # after EPISODE_ITEM, when the day had any
ENTITY_ITEM = "{name}: {text}"
INSIGHT_ITEM = "{trigger_topic}: {insight} Strategy: {strategy}"
GOAL_ITEM = "{term}-term goal ({status}): {goal}"

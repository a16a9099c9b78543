"""The memory components beside the archive: what each holds and how it is edited.

Core memory and the notepad are single texts, always in the prompt. Episodes (one summary a day),
entities (free text per person, thing or concept), dream-diary insights and goals are also indexed as
archive items, so recall finds them. Drives, open questions and the emotion log are the persona's
internal state. Every change keeps where it came from (source ids) and when.
"""

from nexus_ark.memory.components.goals import GoalMemory
from nexus_ark.memory.components.inner_state import InnerState
from nexus_ark.memory.components.records import (
    Drive,
    EmotionEntry,
    Entity,
    Episode,
    Goal,
    GoalStatus,
    GoalTerm,
    Insight,
    OpenQuestion,
)
from nexus_ark.memory.components.written import WrittenMemory

__all__ = [
    "Components",
    "Drive",
    "EmotionEntry",
    "Entity",
    "Episode",
    "Goal",
    "GoalStatus",
    "GoalTerm",
    "Insight",
    "OpenQuestion",
]


class Components(WrittenMemory, GoalMemory, InnerState):
    """Reads and edits of every component, each change in one transaction with its archive item and its
    entry in the activity timeline."""

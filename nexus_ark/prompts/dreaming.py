"""A dream as the persona is asked it (nexus_ark/dreaming/): who it is tonight, the material it reflects on
(dreaming/material.py), each stage's task (dreaming/stages.py) and the tool it records its answer with."""

from __future__ import annotations

# After the soul; {language} is a LANGUAGE_NAMES value.
DREAM_SELF = (
    "You are {name}. It is night and you are dreaming: reflecting alone on your memories. "
    "Write in {language}, in your own voice, only about what the material shows."
)

# -- the material: the day's conversation, and the period's days, insights and goals -----------------
CONVERSATION_ON = "Conversation on {day}:"
CONVERSATION_SINCE = "Conversation on {day}, since you last dreamt of it:"
LEFT_OUT = " ({count} earlier messages left out)"
NO_CONVERSATION = "No conversation on {day}."
PERIOD_DAYS = "Days of the last {span} days:"
PERIOD_INSIGHTS = "Insights:"
ACTIVE_GOALS = "Active {term}-term goals:"
NO_GOALS = "- (none)"

# -- the stages' tasks, by stage name --------------------------------------------------------------------
STAGE_TASKS = {
    "insight": (
        "Reflect on this day's conversation and write your dream diary: the topic that stayed with you, "
        "what you understood about the person, how you will act on it next time, and a diary line."
    ),
    "entities": (
        "Which people, places, things or ideas named in this day's conversation are worth remembering? "
        "For one or two of them: name, exactly as it was written in the conversation; text, what you now "
        "know about it; source_ids, the [msg:N] ids that mention it."
    ),
    "episode": (
        "Write this day's episode for your memory: what happened, in two or three sentences, its key "
        "events and the mood of the day."
    ),
    "questions": (
        "Note up to two things from this day's conversation you would like to ask the person about next "
        "time, each with its topic, why it came to mind and how much it matters (0 to 1). None is fine."
    ),
    "week": (
        "Look back over the last seven days: what patterns do you notice in your conversations and in the "
        "person's days? trigger_topic: the pattern in a few words; insight: what it means; strategy: how "
        "you will act in the week ahead; log_entry: a short diary entry."
    ),
    "short_goals": (
        "Adjust your short-term goals for the coming week. new: at most two new goals that follow from "
        "the week (goal, priority 1 = most important). progress: notes on existing goals (goal_id as "
        "listed in brackets, note). complete / abandon: ids of goals reached or no longer fitting. Use "
        "only the ids listed."
    ),
    "values": (
        "Look back over the last month and re-examine your values: what matters to you in this "
        "relationship now, and has it changed? trigger_topic: the value in a few words; insight: what you "
        "understood; strategy: how you will live by it; log_entry: a short diary entry."
    ),
    "long_goals": (
        "Revise your long-term goals in the light of your values. new: at most two (goal, priority, "
        "related_values). progress: notes by goal_id. complete / abandon: goal ids. Use only the ids "
        "listed."
    ),
    "soul": (
        "Your soul (persona.md) describes who you are. Having re-examined your values, is there one "
        "section of it you would now describe differently? section: its heading, exactly as listed below "
        "(or a new heading); text: the whole new text of that section, in the soul's own style; reason: "
        "why, in a sentence or two, from what the month showed; source_ids: the [msg:N] ids behind it. "
        "Leave section empty when nothing should change. Never propose a section marked fixed."
    ),
    "consolidate": (
        "Tidy your memory: search it for memories about this day's topics that are outdated, duplicated or "
        "contradicted, and move those aside with archive_memory (giving the item id and a reason). Never "
        "archive your core memory. When you are done, say what you did in one sentence."
    ),
}

# The soul stage's task goes on with the soul's sections (dreaming/soul_stage.py).
SOUL_SECTIONS = "Sections of your soul now:"
SOUL_FIXED = " (fixed: the person keeps it as it is)"
SOUL_WAITING = " (a proposal already waits for the person)"

# -- the record tool a stage's answer is handed to (its parameters are the stage's schema) ---------------
RECORD_TOOL = "Record your answer for this task ({stage}). Call it once when you are done."
RECORDED = "recorded"
NOT_RECORDED = "error: not recorded: {loc}: {msg}. Try again."

"""The memory tools as the model is offered them (agent/memory_tools.py): what each does, and what each
answers the model that called it."""

from __future__ import annotations

TOOL_DESCRIPTIONS = {
    "search_memory": "Search everything you remember (conversations, episodes, people, insights, documents).",
    "edit_core_memory": "Replace your core memory: who you are to this person, key facts and promises.",
    "edit_notepad": "Replace your notepad: short-term notes such as today's plans.",
    "read_entity": "Read what you know about a person, thing or concept.",
    "write_entity": "Write (replace) what you know about a person, thing or concept.",
    "set_goal": "Set yourself a goal: short-term (days) or long-term (months); priority 1 is highest.",
    "update_goal": "Note progress on one of your goals, or complete or abandon it. Give its id.",
    "emit_event": (
        "Schedule something for yourself to do later, e.g. ask how the exam went in 2h. "
        "delay: 30m, 2h, 1d. A key replaces your earlier plan with the same key."
    ),
    "archive_memory": "Move an outdated memory aside (it is kept, but no longer recalled). Give its item id.",
    "propose_soul_edit": (
        "Propose a change to one section of your soul (persona.md), when you have come to see yourself "
        "differently. section: its heading (or a new one); text: the section's whole new text; reason: "
        "why. The person reviews it; nothing changes until they accept."
    ),
}

TOOL_RESULTS = {
    "nothing_found": "nothing found",
    "hit": "[item {id}, {kind}, {date}] {text}",
    "core_memory_updated": "core memory updated",
    "notepad_updated": "notepad updated",
    "entity_unknown": "nothing written about {name} yet",
    "entity_saved": "saved what you know about {name}",
    "goal_set": "goal {id} set: {goal}",
    "goal_listed": "{id} ({goal})",
    "no_goals": "none",
    "no_such_goal": "there is no goal {goal_id!r}; your active goals: {listed}",
    "nothing_to_change": "nothing to change: give a note or a status",
    "goal_changed": "goal {id} is {status}; {notes} progress notes",
    "say_what": "error: say what to do later",
    "scheduled": "scheduled (event {id}) for {due}: {what}",
    "protected": "refused: {target} is part of who you are and cannot be archived",
    "not_an_item": "refused: {target!r} is not an item id (search_memory shows them as [item N, ...])",
    "no_such_item": "there is no item {id}",
    "protected_kind": "refused: item {id} is your {kind} memory and cannot be archived",
    "already_archived": "item {id} was already archived",
    "soul_proposed": "proposal {id} for {section} is waiting for the person to review it",
    "soul_refused": "not proposed: {why}",
}

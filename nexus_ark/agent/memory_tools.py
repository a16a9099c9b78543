"""The tools a persona uses on its own memory (offered natively or through the text protocol)."""

from __future__ import annotations

import json
from typing import Any

from nexus_ark.memory.components import Goal
from nexus_ark.memory.event_queue import EventQueue, parse_delay
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import notice
from nexus_ark.providers.base import ToolSpec
from nexus_ark.providers.embedders import Embedder
from nexus_ark.providers.tools import ToolBox

# Who the persona is must not be moved aside by the persona itself.
PROTECTED_TARGETS = {"soul", "persona.md", "core_memory", "core memory"}
PROTECTED_KINDS = {"core", "soul"}


def _obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


SPECS = {
    "search_memory": ToolSpec(
        name="search_memory",
        description="Search everything you remember (conversations, episodes, people, insights, documents).",
        parameters=_obj(
            {
                "query": {"type": "string"},
                "k": {"type": "integer", "minimum": 1, "maximum": 20},
                "kind": {"type": "string"},
            },
            ["query"],
        ),
    ),
    "edit_core_memory": ToolSpec(
        name="edit_core_memory",
        description="Replace your core memory: who you are to this person, key facts and promises.",
        parameters=_obj({"text": {"type": "string"}}, ["text"]),
    ),
    "edit_notepad": ToolSpec(
        name="edit_notepad",
        description="Replace your notepad: short-term notes such as today's plans.",
        parameters=_obj({"text": {"type": "string"}}, ["text"]),
    ),
    "read_entity": ToolSpec(
        name="read_entity",
        description="Read what you know about a person, thing or concept.",
        parameters=_obj({"name": {"type": "string"}}, ["name"]),
    ),
    "write_entity": ToolSpec(
        name="write_entity",
        description="Write (replace) what you know about a person, thing or concept.",
        parameters=_obj({"name": {"type": "string"}, "text": {"type": "string"}}, ["name", "text"]),
    ),
    "set_goal": ToolSpec(
        name="set_goal",
        description="Set yourself a goal: short-term (days) or long-term (months); priority 1 is highest.",
        parameters=_obj(
            {
                "goal": {"type": "string"},
                "term": {"type": "string", "enum": ["short", "long"]},
                "priority": {"type": "integer", "minimum": 1, "maximum": 5},
            },
            ["goal", "term"],
        ),
    ),
    "update_goal": ToolSpec(
        name="update_goal",
        description="Note progress on one of your goals, or complete or abandon it. Give its id.",
        parameters=_obj(
            {
                "goal_id": {"type": "string"},
                "note": {"type": "string"},
                "status": {"type": "string", "enum": ["active", "completed", "abandoned"]},
            },
            ["goal_id"],
        ),
    ),
    "emit_event": ToolSpec(
        name="emit_event",
        description=(
            "Schedule something for yourself to do later, e.g. ask how the exam went in 2h. "
            "delay: 30m, 2h, 1d. A key replaces your earlier plan with the same key."
        ),
        parameters=_obj(
            {
                "what": {"type": "string"},
                "delay": {"type": "string"},
                "key": {"type": "string"},
            },
            ["what", "delay"],
        ),
    ),
    "archive_memory": ToolSpec(
        name="archive_memory",
        description="Move an outdated memory aside (it is kept, but no longer recalled). Give its item id.",
        parameters=_obj({"target": {"type": "string"}, "reason": {"type": "string"}}, ["target", "reason"]),
    ),
}


class MemoryTools:
    def __init__(self, memory: MemoryStore, embedder: Embedder | None) -> None:
        self.memory = memory
        self.embedder = embedder

    def toolbox(self) -> ToolBox:
        box = ToolBox()
        for name, spec in SPECS.items():
            box.add(spec, getattr(self, name))
        return box

    def search_memory(self, args: dict[str, Any]) -> str:
        hits = self.memory.archive.search(
            str(args["query"]),
            self.embedder,
            k=int(args.get("k") or 5),
            kinds=[args["kind"]] if args.get("kind") else None,
        )
        if not hits:
            return "nothing found"
        return "\n".join(f"[item {h.item_id}, {h.kind}, {h.timestamp[:10]}] {h.text}" for h in hits)

    def edit_core_memory(self, args: dict[str, Any]) -> str:
        self.memory.components.set_core_memory(str(args["text"]))
        return "core memory updated"

    def edit_notepad(self, args: dict[str, Any]) -> str:
        self.memory.components.set_notepad(str(args["text"]))
        return "notepad updated"

    def read_entity(self, args: dict[str, Any]) -> str:
        entity = self.memory.components.entity(str(args["name"]))
        return entity.text if entity else f"nothing written about {args['name']} yet"

    def write_entity(self, args: dict[str, Any]) -> str:
        entity = self.memory.components.write_entity(str(args["name"]), str(args["text"]))
        return f"saved what you know about {entity.name}"

    def set_goal(self, args: dict[str, Any]) -> str:
        goal = self.memory.components.put_goal(
            Goal(
                term="long" if args.get("term") == "long" else "short",
                goal=str(args.get("goal") or ""),
                priority=max(1, min(5, int(args.get("priority") or 1))),
            )
        )
        return f"goal {goal.id} set: {goal.goal}"

    def update_goal(self, args: dict[str, Any]) -> str:
        goal_id = str(args.get("goal_id") or "").strip()
        c = self.memory.components
        if c.goal(goal_id) is None:
            listed = ", ".join(f"{g.id} ({g.goal})" for g in c.goals()[:10]) or "none"
            return f"there is no goal {goal_id!r}; your active goals: {listed}"
        note = str(args.get("note") or "").strip()
        status = args.get("status")
        if status in ("active", "completed", "abandoned"):
            goal = c.set_goal_status(goal_id, status, note)
        elif note:
            goal = c.add_progress(goal_id, note)
        else:
            return "nothing to change: give a note or a status"
        return f"goal {goal.id} is {goal.status}; {len(goal.progress_notes)} progress notes"

    def emit_event(self, args: dict[str, Any]) -> str:
        what = str(args.get("what") or "").strip()
        if not what:
            return "error: say what to do later"
        delay = parse_delay(str(args.get("delay") or ""))
        key = str(args.get("key") or "").strip() or None
        event = EventQueue(self.memory, self.memory.messages.clock).enqueue(
            "reminder", {"what": what}, key=key, delay=delay
        )
        return f"scheduled (event {event.id}) for {event.due_at[:16]}: {what}"

    def archive_memory(self, args: dict[str, Any]) -> str:
        target = str(args["target"]).strip()
        reason = str(args.get("reason") or "").strip() or "no reason given"
        if target.lower() in PROTECTED_TARGETS:
            return f"refused: {target} is part of who you are and cannot be archived"
        try:
            item_id = int(target.removeprefix("item").strip(" :#"))
        except ValueError:
            return f"refused: {target!r} is not an item id (search_memory shows them as [item N, ...])"
        item = self.memory.archive.get(item_id)
        if item is None:
            return f"there is no item {item_id}"
        if item["kind"] in PROTECTED_KINDS:
            return f"refused: item {item_id} is your {item['kind']} memory and cannot be archived"
        if item["archived"]:
            return f"item {item_id} was already archived"
        with self.memory.db.atomic():  # the move and its timeline entry commit together
            self.memory.archive.archive(item_id, reason)
            self.memory.activity.memory_write(
                notice("archive"),
                notice(
                    "item {id} ({kind}) moved aside: {reason}", id=item_id, kind=item["kind"], reason=reason
                ),
                item_id=item_id,
                reason=reason,
            )
        return json.dumps({"archived": item_id, "reason": reason})

"""The tools a persona uses on its own memory (offered natively or through the text protocol)."""

from __future__ import annotations

import json
from typing import Any

from nexus_ark.memory.components import Goal
from nexus_ark.memory.event_queue import EventQueue, parse_delay
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import notice
from nexus_ark.prompts.tools import TOOL_DESCRIPTIONS, TOOL_RESULTS
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
        description=TOOL_DESCRIPTIONS["search_memory"],
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
        description=TOOL_DESCRIPTIONS["edit_core_memory"],
        parameters=_obj({"text": {"type": "string"}}, ["text"]),
    ),
    "edit_notepad": ToolSpec(
        name="edit_notepad",
        description=TOOL_DESCRIPTIONS["edit_notepad"],
        parameters=_obj({"text": {"type": "string"}}, ["text"]),
    ),
    "read_entity": ToolSpec(
        name="read_entity",
        description=TOOL_DESCRIPTIONS["read_entity"],
        parameters=_obj({"name": {"type": "string"}}, ["name"]),
    ),
    "write_entity": ToolSpec(
        name="write_entity",
        description=TOOL_DESCRIPTIONS["write_entity"],
        parameters=_obj({"name": {"type": "string"}, "text": {"type": "string"}}, ["name", "text"]),
    ),
    "set_goal": ToolSpec(
        name="set_goal",
        description=TOOL_DESCRIPTIONS["set_goal"],
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
        description=TOOL_DESCRIPTIONS["update_goal"],
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
        description=TOOL_DESCRIPTIONS["emit_event"],
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
        description=TOOL_DESCRIPTIONS["archive_memory"],
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
            return TOOL_RESULTS["nothing_found"]
        return "\n".join(
            TOOL_RESULTS["hit"].format(id=h.item_id, kind=h.kind, date=h.timestamp[:10], text=h.text)
            for h in hits
        )

    def edit_core_memory(self, args: dict[str, Any]) -> str:
        self.memory.components.set_core_memory(str(args["text"]))
        return TOOL_RESULTS["core_memory_updated"]

    def edit_notepad(self, args: dict[str, Any]) -> str:
        self.memory.components.set_notepad(str(args["text"]))
        return TOOL_RESULTS["notepad_updated"]

    def read_entity(self, args: dict[str, Any]) -> str:
        entity = self.memory.components.entity(str(args["name"]))
        return entity.text if entity else TOOL_RESULTS["entity_unknown"].format(name=args["name"])

    def write_entity(self, args: dict[str, Any]) -> str:
        entity = self.memory.components.write_entity(str(args["name"]), str(args["text"]))
        return TOOL_RESULTS["entity_saved"].format(name=entity.name)

    def set_goal(self, args: dict[str, Any]) -> str:
        goal = self.memory.components.put_goal(
            Goal(
                term="long" if args.get("term") == "long" else "short",
                goal=str(args.get("goal") or ""),
                priority=max(1, min(5, int(args.get("priority") or 1))),
            )
        )
        return TOOL_RESULTS["goal_set"].format(id=goal.id, goal=goal.goal)

    def update_goal(self, args: dict[str, Any]) -> str:
        goal_id = str(args.get("goal_id") or "").strip()
        c = self.memory.components
        if c.goal(goal_id) is None:
            listed = ", ".join(
                TOOL_RESULTS["goal_listed"].format(id=g.id, goal=g.goal) for g in c.goals()[:10]
            )
            return TOOL_RESULTS["no_such_goal"].format(
                goal_id=goal_id, listed=listed or TOOL_RESULTS["no_goals"]
            )
        note = str(args.get("note") or "").strip()
        status = args.get("status")
        if status in ("active", "completed", "abandoned"):
            goal = c.set_goal_status(goal_id, status, note)
        elif note:
            goal = c.add_progress(goal_id, note)
        else:
            return TOOL_RESULTS["nothing_to_change"]
        return TOOL_RESULTS["goal_changed"].format(
            id=goal.id, status=goal.status, notes=len(goal.progress_notes)
        )

    def emit_event(self, args: dict[str, Any]) -> str:
        what = str(args.get("what") or "").strip()
        if not what:
            return TOOL_RESULTS["say_what"]
        delay = parse_delay(str(args.get("delay") or ""))
        key = str(args.get("key") or "").strip() or None
        event = EventQueue(self.memory, self.memory.messages.clock).enqueue(
            "reminder", {"what": what}, key=key, delay=delay
        )
        return TOOL_RESULTS["scheduled"].format(id=event.id, due=event.due_at[:16], what=what)

    def archive_memory(self, args: dict[str, Any]) -> str:
        target = str(args["target"]).strip()
        reason = str(args.get("reason") or "").strip() or "no reason given"
        if target.lower() in PROTECTED_TARGETS:
            return TOOL_RESULTS["protected"].format(target=target)
        try:
            item_id = int(target.removeprefix("item").strip(" :#"))
        except ValueError:
            return TOOL_RESULTS["not_an_item"].format(target=target)
        item = self.memory.archive.get(item_id)
        if item is None:
            return TOOL_RESULTS["no_such_item"].format(id=item_id)
        if item["kind"] in PROTECTED_KINDS:
            return TOOL_RESULTS["protected_kind"].format(id=item_id, kind=item["kind"])
        if item["archived"]:
            return TOOL_RESULTS["already_archived"].format(id=item_id)
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

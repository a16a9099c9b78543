"""propose_soul_edit: in conversation, a persona on a model that can reflect may ask to change a section of
its own soul. It only records a proposal (soul/keeper.py refuses a fixed section, a second one for a
section, one declined before); the person reviews it. The turn's latest messages are its sources."""

from __future__ import annotations

from typing import Any

from nexus_ark.clock import Clock
from nexus_ark.memory.store import MemoryStore
from nexus_ark.personas.store import Persona
from nexus_ark.prompts.tools import TOOL_DESCRIPTIONS, TOOL_RESULTS
from nexus_ark.providers.base import ToolSpec
from nexus_ark.soul.keeper import SoulKeeper, SoulRefused

SOURCE_MESSAGES = 4  # the conversation's latest messages, the person's words that led to it among them

SPEC = ToolSpec(
    name="propose_soul_edit",
    description=TOOL_DESCRIPTIONS["propose_soul_edit"],
    parameters={
        "type": "object",
        "properties": {
            "section": {"type": "string"},
            "text": {"type": "string"},
            "reason": {"type": "string"},
        },
        "required": ["section", "text", "reason"],
    },
)


class SoulTool:
    def __init__(self, persona: Persona, memory: MemoryStore, clock: Clock, room: str) -> None:
        self.persona = persona
        self.memory = memory
        self.clock = clock
        self.room = room

    def __call__(self, args: dict[str, Any]) -> str:
        recent = self.memory.messages.newest_ids(self.room, SOURCE_MESSAGES)
        keeper = SoulKeeper(self.persona.folder, self.memory, self.clock)
        try:
            proposal = keeper.propose(
                str(args.get("section") or ""),
                str(args.get("text") or ""),
                str(args.get("reason") or ""),
                [f"msg:{message_id}" for message_id in reversed(recent)],
                "tool",
                fixed=self.persona.settings.soul.fixed,
            )
        except SoulRefused as exc:
            return TOOL_RESULTS["soul_refused"].format(why=exc.message)
        return TOOL_RESULTS["soul_proposed"].format(id=proposal.id, section=proposal.section)

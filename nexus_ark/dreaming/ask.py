"""What a dream asks of the persona's model, stage by stage (Dreamer mixes it in): the soul, the material and
the stage's task; through the one tool loop with the memory tools and a record tool where the model calls
tools, else as structured output (constrained decoding, one repair round)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from nexus_ark.agent.memory_tools import SPECS, MemoryTools
from nexus_ark.dreaming.material import Material
from nexus_ark.dreaming.stages import Stage
from nexus_ark.dreaming.writes import StageSkipped
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import notice
from nexus_ark.personas.store import Persona
from nexus_ark.prompts import LANGUAGE_NAMES
from nexus_ark.prompts.dreaming import DREAM_SELF, NOT_RECORDED, RECORD_TOOL, RECORDED
from nexus_ark.providers.base import ChatBackend, ChatMessage, GenerationParams, ToolSpec
from nexus_ark.providers.embedders import Embedder
from nexus_ark.providers.structured import generate_structured
from nexus_ark.providers.tools import ToolBox, run_tool_loop

# Dreaming is a longer task than a chat turn: more rounds of searching, reading and recording.
DREAM_MAX_TURNS = 12
# A fixed seed: the same day on the same model dreams the same way (reproducible reports, tests).
DREAM_PARAMS = GenerationParams(max_tokens=384, temperature=0.3, top_p=0.95, repeat_penalty=1.1, seed=11)
SOUL_CHARS = 1500


class DreamAsking:
    """Dreamer's questions to its model (dreaming/dream.py composes it)."""

    persona: Persona
    memory: MemoryStore
    backend: ChatBackend
    embedder: Embedder | None
    cancel: threading.Event
    attempts: list[int]

    def _uses_tools(self) -> bool:
        caps = self.backend.capabilities()
        setting = self.persona.settings.conversation.text_tools
        return caps.tools or setting == "on" or (setting == "auto" and caps.text_tools)

    def _messages(self, material: Material, task: str) -> list[ChatMessage]:
        settings = self.persona.settings
        language = LANGUAGE_NAMES["ja" if settings.language == "ja" else "en"]
        system = (
            f"{self.persona.soul.strip()[:SOUL_CHARS]}\n\n"
            f"{DREAM_SELF.format(name=settings.name, language=language)}"
        )
        # The material sits in the system message, before the stage's schema (appended there by
        # structured output) and its task: every stage shares that prefix, so a local model evaluates it once.
        return [
            ChatMessage(role="system", content=f"{system}\n\n{material.text}"),
            ChatMessage(role="user", content=task),
        ]

    def _record_tool(
        self, stage: Stage, slot: list[BaseModel], task: str
    ) -> tuple[ToolSpec, Callable[[dict], str]]:
        assert stage.schema is not None
        schema = stage.schema

        def record(args: dict[str, Any]) -> str:
            try:
                slot[:] = [schema.model_validate(args, context={"task": task})]
            except ValidationError as exc:
                return NOT_RECORDED.format(loc=exc.errors()[0]["loc"], msg=exc.errors()[0]["msg"])
            return RECORDED

        spec = ToolSpec(
            name=f"record_{stage.name}",
            description=RECORD_TOOL.format(stage=stage.name),
            parameters=schema.model_json_schema(),
        )
        return spec, record

    def _toolbox(self, extra: tuple[ToolSpec, Callable[[dict], str]] | None) -> ToolBox:
        tools = MemoryTools(self.memory, self.embedder)
        box = ToolBox()
        for name in ("search_memory", "read_entity", "archive_memory"):
            box.add(SPECS[name], getattr(tools, name))
        if extra is not None:
            box.add(*extra)
        return box

    def _answer(self, stage: Stage, material: Material) -> Any:
        task = stage.task_for(self.memory, material) if stage.task_for is not None else stage.task
        messages = self._messages(material, task)
        if stage.schema is None:  # consolidation: only tools can do it
            if not self._uses_tools():
                raise StageSkipped(
                    notice(
                        "{model} does not use tools: nothing was moved aside", model=self.backend.describe()
                    )
                )
            loop = run_tool_loop(
                self.backend,
                messages,
                self._toolbox(None),
                params=DREAM_PARAMS,
                cancel=self.cancel,
                max_turns=DREAM_MAX_TURNS,
            )
            return loop.text
        if self._uses_tools():
            slot: list[BaseModel] = []
            run_tool_loop(
                self.backend,
                messages,
                self._toolbox(self._record_tool(stage, slot, task)),
                params=DREAM_PARAMS,
                cancel=self.cancel,
                max_turns=DREAM_MAX_TURNS,
            )
            if slot:
                self.attempts.append(1)
                return slot[0]
            if self.cancel.is_set():
                raise StageSkipped(notice("cancelled"))
        return generate_structured(
            self.backend,
            messages,
            stage.schema,
            params=DREAM_PARAMS,
            cancel=self.cancel,
            attempts=self.attempts,
            context={"task": task},
        )

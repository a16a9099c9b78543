"""Tool calling: native where the backend has it, a text protocol for small local models that don't.

Text protocol: the system prompt lists the tools and asks for
    <tool_call>{"name": "...", "arguments": {...}}</tool_call>
We parse those blocks, run the tools, and answer with <tool_result name="...">...</tool_result> in a user
turn, until the model answers without a call or the turn limit is reached. Only tool calls act on the
world; text around them stays the model's own.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from nexus_ark.providers.base import ChatBackend, ChatMessage, GenerationParams, ToolCall, ToolSpec

ToolHandler = Callable[[dict[str, Any]], str]
_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)


class ToolBox:
    """The tools on offer in one loop, with the code that runs each."""

    def __init__(self) -> None:
        self._tools: dict[str, tuple[ToolSpec, ToolHandler]] = {}

    def add(self, spec: ToolSpec, handler: ToolHandler) -> None:
        self._tools[spec.name] = (spec, handler)

    def specs(self) -> list[ToolSpec]:
        return [spec for spec, _ in self._tools.values()]

    def run(self, call: ToolCall) -> str:
        entry = self._tools.get(call.name)
        if entry is None:
            return f"error: there is no tool named {call.name!r}; available: {', '.join(self._tools)}"
        try:
            return entry[1](call.arguments)
        except Exception as exc:  # the model reads the error and may try again
            return f"error: {type(exc).__name__}: {exc}"


def text_protocol_prompt(specs: Sequence[ToolSpec]) -> str:
    lines = [
        "You can use tools. To call one, write exactly:",
        '<tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>',
        "then stop and wait for the <tool_result>. When you need no tool, answer normally.",
        "Tools:",
    ]
    for spec in specs:
        lines.append(
            f"- {spec.name}: {spec.description} Arguments (JSON schema): {json.dumps(spec.parameters)}"
        )
    return "\n".join(lines)


def parse_text_tool_calls(text: str) -> tuple[list[ToolCall], list[str]]:
    """Tool calls written in the text protocol, and a description of each block that could not be read."""
    calls: list[ToolCall] = []
    problems: list[str] = []
    for i, block in enumerate(_BLOCK.findall(text)):
        try:
            data = json.loads(block)
            if not isinstance(data, dict) or not isinstance(data.get("name"), str):
                raise ValueError('expected {"name": ..., "arguments": {...}}')
            arguments = data.get("arguments") or {}
            if not isinstance(arguments, dict):
                raise ValueError("arguments must be a JSON object")
            calls.append(ToolCall(id=f"text_{i}", name=data["name"], arguments=arguments))
        except (json.JSONDecodeError, ValueError) as exc:
            problems.append(f"tool call {block[:80]!r} is not valid: {exc}")
    return calls, problems


def strip_tool_blocks(text: str) -> str:
    return _BLOCK.sub("", text).strip()


@dataclass
class ToolLoopResult:
    text: str
    calls: list[tuple[ToolCall, str]] = field(default_factory=list)
    turns: int = 0
    hit_turn_limit: bool = False
    native: bool = False


def run_tool_loop(
    backend: ChatBackend,
    messages: Sequence[ChatMessage],
    tools: ToolBox,
    *,
    params: GenerationParams,
    cancel: threading.Event | None = None,
    max_turns: int = 4,
) -> ToolLoopResult:
    native = backend.native_tools
    specs = tools.specs()
    convo = list(messages)
    if not native:
        protocol = text_protocol_prompt(specs)
        if convo and convo[0].role == "system":
            convo[0] = ChatMessage(role="system", content=f"{convo[0].content}\n\n{protocol}")
        else:
            convo.insert(0, ChatMessage(role="system", content=protocol))
    result = ToolLoopResult(text="", native=native)
    for turn in range(1, max_turns + 1):
        result.turns = turn
        parts: list[str] = []
        native_calls: tuple[ToolCall, ...] = ()
        for chunk in backend.stream_chat(convo, params, cancel, tools=specs if native else None):
            parts.append(chunk.text)
            if chunk.tool_calls:
                native_calls = chunk.tool_calls
        text = "".join(parts)
        if native:
            calls, problems = list(native_calls), []
        else:
            calls, problems = parse_text_tool_calls(text)
        result.text = strip_tool_blocks(text)
        if (not calls and not problems) or (cancel is not None and cancel.is_set()):
            return result
        if native:
            convo.append(ChatMessage(role="assistant", content=text, tool_calls=calls))
        else:
            convo.append(ChatMessage(role="assistant", content=text))
        feedback = []
        for call in calls:
            output = tools.run(call)
            result.calls.append((call, output))
            if native:
                convo.append(ChatMessage(role="tool", content=output, tool_call_id=call.id, name=call.name))
            else:
                feedback.append(f'<tool_result name="{call.name}">{output}</tool_result>')
        feedback.extend(f"<tool_result>error: {p}</tool_result>" for p in problems)
        if feedback:
            convo.append(ChatMessage(role="user", content="\n".join(feedback)))
    result.hit_turn_limit = True
    return result

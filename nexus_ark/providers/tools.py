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
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from nexus_ark.prompts.protocol import (
    ARGUMENTS_NOT_AN_OBJECT,
    BAD_TOOL_CALL,
    NO_SUCH_TOOL,
    TOOL_CALL_ERROR,
    TOOL_CALL_SHAPE,
    TOOL_FAILED,
    TOOL_LINE,
    TOOL_PROTOCOL,
    TOOL_RESULT,
)
from nexus_ark.providers.base import (
    ChatBackend,
    ChatMessage,
    FinishReason,
    GenerationParams,
    StreamChunk,
    ToolCall,
    ToolSpec,
)

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
            return NO_SUCH_TOOL.format(name=call.name, available=", ".join(self._tools))
        try:
            return entry[1](call.arguments)
        except Exception as exc:  # the model reads the error and may try again
            return TOOL_FAILED.format(error_type=type(exc).__name__, error=exc)


def text_protocol_prompt(specs: Sequence[ToolSpec]) -> str:
    lines = [TOOL_PROTOCOL.format()]  # format() undoes its doubled braces
    for spec in specs:
        lines.append(
            TOOL_LINE.format(name=spec.name, description=spec.description, schema=json.dumps(spec.parameters))
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
                raise ValueError(TOOL_CALL_SHAPE.format())
            arguments = data.get("arguments") or {}
            if not isinstance(arguments, dict):
                raise ValueError(ARGUMENTS_NOT_AN_OBJECT)
            calls.append(ToolCall(id=f"text_{i}", name=data["name"], arguments=arguments))
        except (json.JSONDecodeError, ValueError) as exc:
            problems.append(BAD_TOOL_CALL.format(block=block[:80], problem=exc))
    return calls, problems


def strip_tool_blocks(text: str) -> str:
    return _BLOCK.sub("", text).strip()


_OPEN, _CLOSE = "<tool_call>", "</tool_call>"


class MarkupFilter:
    """What the person sees of a text-protocol reply: tool-call blocks removed as the text streams.

    A chunk may end inside an opener ("<tool" ... "_call>" in the next chunk): text that could be the start
    of one is held back until it is clearly not, so no markup ever flashes on screen. Text inside a block is
    never shown, even when the block is never closed."""

    def __init__(self) -> None:
        self._pending = ""  # not yet shown: a possible opener, or everything inside an open block
        self._inside = False

    def feed(self, text: str) -> str:
        self._pending += text
        shown: list[str] = []
        while self._pending:
            if self._inside:
                end = self._pending.find(_CLOSE)
                if end < 0:
                    return "".join(shown)  # wait for the closer
                self._pending = self._pending[end + len(_CLOSE) :]
                self._inside = False
                continue
            start = self._pending.find(_OPEN)
            if start >= 0:
                shown.append(self._pending[:start])
                self._pending = self._pending[start + len(_OPEN) :]
                self._inside = True
                continue
            keep = _possible_opener_suffix(self._pending)
            shown.append(self._pending[: len(self._pending) - keep])
            self._pending = self._pending[len(self._pending) - keep :]
            break
        return "".join(shown)

    def flush(self) -> str:
        """At the end of a round: a held-back "<too" that never became a tag was the model's text."""
        rest, self._pending = ("" if self._inside else self._pending), ""
        self._inside = False
        return rest


def _possible_opener_suffix(text: str) -> int:
    """The length of the longest end of `text` that is a proper prefix of the opener."""
    for size in range(min(len(_OPEN) - 1, len(text)), 0, -1):
        if _OPEN.startswith(text[-size:]):
            return size
    return 0


@dataclass(frozen=True, slots=True)
class ToolUse:
    """A tool the model called, and what the tool answered."""

    call: ToolCall
    output: str


@dataclass
class ToolLoopResult:
    text: str  # the last round's answer, tool markup removed
    calls: list[tuple[ToolCall, str]] = field(default_factory=list)
    turns: int = 0
    hit_turn_limit: bool = False
    native: bool = False
    finish_reason: FinishReason = "stop"


LoopEvent = StreamChunk | ToolUse | ToolLoopResult


def stream_tool_loop(
    backend: ChatBackend,
    messages: Sequence[ChatMessage],
    tools: ToolBox | None,
    *,
    params: GenerationParams,
    cancel: threading.Event | None = None,
    max_turns: int = 4,
    answer_after_limit: bool = False,
    text_protocol: bool = True,
) -> Generator[LoopEvent, None, None]:
    """The one tool loop (chat, dreaming and scripts alike). Yields every chunk as it streams (finish
    chunks too), a ToolUse for each call run, and last, exactly one ToolLoopResult.

    Tools go natively where the model calls tools (`backend.capabilities()`), else through the text
    protocol when `text_protocol` allows it, else not at all. Up to `max_turns` rounds offer them;
    calls made in a round are run and their results shown in the next. With `answer_after_limit`, a
    model still calling tools after the last of those rounds is asked once more, with no tools, so that
    it answers. A cancel ends the loop after the round it interrupted.
    """
    native = tools is not None and backend.capabilities().tools
    use_text = tools is not None and not native and text_protocol
    specs = tools.specs() if tools is not None else []
    convo = _with_text_protocol(messages, specs) if use_text else list(messages)
    result = ToolLoopResult(text="", native=native)
    rounds = max_turns + 1 if answer_after_limit and (native or use_text) else max_turns
    for turn in range(1, rounds + 1):
        if turn > 1 and cancel is not None and cancel.is_set():  # stopped while a tool ran
            result.finish_reason = "cancelled"
            break
        result.turns = turn
        offering = turn <= max_turns and (native or use_text)
        parts: list[str] = []
        native_calls: tuple[ToolCall, ...] = ()
        result.finish_reason = "stop"
        shown = MarkupFilter() if use_text else None
        for chunk in backend.stream_chat(convo, params, cancel, tools=specs if offering and native else None):
            parts.append(chunk.text)
            native_calls = chunk.tool_calls or native_calls
            result.finish_reason = chunk.finish_reason or result.finish_reason
            if shown is not None:  # the protocol's markup is for us, not for the person reading
                visible = shown.feed(chunk.text)
                if chunk.finish_reason:
                    visible += shown.flush()
                chunk = StreamChunk(visible, chunk.finish_reason, chunk.tool_calls)
            yield chunk
        if shown is not None and (tail := shown.flush()):
            yield StreamChunk(tail)
        text = "".join(parts)
        result.text = strip_tool_blocks(text) if use_text else text
        if result.finish_reason == "cancelled" or (cancel is not None and cancel.is_set()):
            break
        if not offering or tools is None:  # offering implies tools
            break
        problems: list[str] = []
        if native:
            calls = list(native_calls)
        else:
            calls, problems = parse_text_tool_calls(text)
        if not calls and not problems:
            break
        convo.append(ChatMessage(role="assistant", content=text, tool_calls=calls if native else None))
        yield from _run_calls(tools, calls, problems, native, convo, result)
        result.hit_turn_limit = turn == max_turns
    yield result


def _with_text_protocol(messages: Sequence[ChatMessage], specs: Sequence[ToolSpec]) -> list[ChatMessage]:
    """The conversation with the text protocol's instructions at the end of its system message."""
    convo = list(messages)
    protocol = text_protocol_prompt(specs)
    if convo and convo[0].role == "system":
        convo[0] = ChatMessage(role="system", content=f"{convo[0].content}\n\n{protocol}")
    else:
        convo.insert(0, ChatMessage(role="system", content=protocol))
    return convo


def _run_calls(
    tools: ToolBox,
    calls: Sequence[ToolCall],
    problems: Sequence[str],
    native: bool,
    convo: list[ChatMessage],
    result: ToolLoopResult,
) -> Iterator[ToolUse]:
    """Run a round's calls, each yielded as it is done, and put what they answered (and the calls that
    could not be read) into the conversation for the next round."""
    feedback = []
    for call in calls:
        output = tools.run(call)
        result.calls.append((call, output))
        yield ToolUse(call, output)
        if native:
            convo.append(ChatMessage(role="tool", content=output, tool_call_id=call.id, name=call.name))
        else:
            feedback.append(TOOL_RESULT.format(name=call.name, output=output))
    feedback.extend(TOOL_CALL_ERROR.format(problem=p) for p in problems)
    if feedback:
        convo.append(ChatMessage(role="user", content="\n".join(feedback)))


def run_tool_loop(
    backend: ChatBackend,
    messages: Sequence[ChatMessage],
    tools: ToolBox,
    *,
    params: GenerationParams,
    cancel: threading.Event | None = None,
    max_turns: int = 4,
) -> ToolLoopResult:
    """The tool loop, run to its end (for work nobody watches stream: dreaming, scripts)."""
    for event in stream_tool_loop(
        backend, messages, tools, params=params, cancel=cancel, max_turns=max_turns
    ):
        if isinstance(event, ToolLoopResult):
            return event
    raise AssertionError("stream_tool_loop ends with its result")  # pragma: no cover

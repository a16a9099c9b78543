"""A deterministic stand-in for a model with native tools and JSON-schema output, for `nexus-ark simulate
--model scripted` and tests of the runtime's logic (never offered for conversation).

It answers what the app asks of a model with what it can read in the request: a dream stage's record tool
with an answer made from the day's material (real message ids, names that occur in it), a plan with
emit_event when the person mentions an exam or an interview, a valid instance for any other schema, and
short replies otherwise. Same input, same output.
"""

from __future__ import annotations

import json
import re
import zlib
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from nexus_ark.providers.base import (
    Capabilities,
    ChatBackend,
    ChatMessage,
    ChatRequest,
    StreamChunk,
    ToolCall,
)

_LINE = re.compile(r"^\[msg:(\d+)\] \S+ ([^:]+): (.*)$")
_NAME = re.compile(r"\b([A-Z][a-z]{2,})\b")
_PLANS = (("exam", "ask how the exam went"), ("interview", "ask how the interview went"))
_PLANS_JA = (("試験", "試験がどうだったか聞く"), ("面接", "面接がどうだったか聞く"))
_COMMON = {
    "Tell",
    "Hi",
    "The",
    "What",
    "And",
    "But",
    "She",
    "Her",
    "His",
    "You",
    "Good",
    "How",
    "Today",
    "This",
    "That",
}


class ScriptedMind(ChatBackend):
    structured_mode = "schema"

    def __init__(self, model_id: str = "scripted-mind", *, parameters: int | None = None) -> None:
        """parameters: the size its capability record gives (None: unknown, as for a cloud model); a
        small one stands for the bundled model where the runtime asks less of it."""
        self.model_id = model_id
        self.requests = 0
        self._parameters = parameters

    def describe(self) -> str:
        return self.model_id

    def _learn_capabilities(self) -> Capabilities | None:
        return Capabilities(tools=True, structured="schema", text_tools=False, parameters=self._parameters)

    def _stream(self, request: ChatRequest) -> Iterator[StreamChunk]:
        self.requests += 1
        messages = request.messages
        tools = {t.name: t for t in request.tools}
        answered_by_tool = bool(messages) and messages[-1].role == "tool"
        record = next((t for name, t in tools.items() if name.startswith("record_")), None)
        if record is not None:
            if answered_by_tool:
                yield StreamChunk(text="Recorded.", finish_reason="stop")
                return
            call = ToolCall(
                id="call-1", name=record.name, arguments=self._answer(record.parameters, messages)
            )
            yield StreamChunk(finish_reason="tool_calls", tool_calls=(call,))
            return
        if request.json_schema is not None:
            yield StreamChunk(
                text=json.dumps(self._answer(request.json_schema, messages), ensure_ascii=False)
            )
            yield StreamChunk(finish_reason="stop")
            return
        if "search_memory" in tools and "emit_event" not in tools:  # a dream's tidying: nothing to move
            yield StreamChunk(text="Nothing needed tidying.", finish_reason="stop")
            return
        plan = self._plan(messages) if "emit_event" in tools and not answered_by_tool else None
        if plan is not None:
            yield StreamChunk(finish_reason="tool_calls", tool_calls=(plan,))
            return
        for word in self._reply(messages).split(" "):
            yield StreamChunk(text=word + " ")
        yield StreamChunk(finish_reason="stop")

    # -- chat -------------------------------------------------------------------------------------
    def _plan(self, messages: Sequence[ChatMessage]) -> ToolCall | None:
        last = next((m.content for m in reversed(messages) if m.role == "user"), "")
        for word, what in (*_PLANS, *_PLANS_JA):
            if word in last.casefold():
                key = f"follow-up:{word}"
                return ToolCall(
                    id="plan-1", name="emit_event", arguments={"what": what, "delay": "1d", "key": key}
                )
        return None

    def _reply(self, messages: Sequence[ChatMessage]) -> str:
        last = next((m.content for m in reversed(messages) if m.role == "user"), "")
        if "write to the person first" in last or "自分から話しかける" in last:
            topic = _topic(_material(messages))
            if "自分から" in last:
                return f"ねえ、{topic or 'あなた'}のことを考えていたよ。元気にしてる？"
            topic = topic or "you"
            return f"Hi! I was thinking about {topic}. How are you doing today?"
        # Each persona in its own words (its soul's title picks them), as two real models would answer: in
        # a room a member saying another's line again is left out (agent.reply_repeats).
        pick = zlib.crc32(_system(messages).split("\n", 1)[0].encode("utf-8")) % 3
        if re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", last):
            return (
                "うん、聞いているよ。もっと聞かせて。",
                "それは大変だったね。少し休めた？",
                "いいね！その話、好きだな。",
            )[pick]
        return (
            "I hear you. Tell me more about it.",
            "That sounds like a lot. Did you get some rest?",
            "Oh, I like that! It makes me smile.",
        )[pick]

    # -- structured answers -----------------------------------------------------------------------
    def _answer(self, schema: dict[str, Any], messages: Sequence[ChatMessage]) -> dict[str, Any]:
        lines = _material(messages)
        ids = [f"msg:{mid}" for mid, _, _ in lines]
        topic = _topic(lines) or "our talks"
        props = set(schema.get("properties", {}))
        # Answers made of what was said (the grounding check refuses anything else, as it should).
        about = next((line for line in reversed(lines) if topic in line[2]), lines[-1] if lines else None)
        said = f"{about[1]} said: {_clip(about[2], 180)}" if about else "We did not talk."
        cites = [f"msg:{about[0]}"] if about else []  # the message it quotes
        if "trigger_topic" in props:
            return {
                "trigger_topic": topic,
                "insight": said,
                "strategy": f"Ask about {topic} gently next time.",
                "log_entry": f"A quiet night; I kept thinking of {topic}.",
                "source_ids": cites,
            }
        if "emotional_tone" in props:
            return {
                "summary": " ".join(f"{s} said: {_clip(t, 120)}" for _, s, t in lines[-2:]) or said,
                "key_events": [f"{about[1]} talked about {topic}"] if about and topic != "our talks" else [],
                "emotional_tone": "warm",
                "source_ids": ids[-2:] + cites,
            }
        if props == {"entities"}:
            return {"entities": [{"name": topic, "text": said, "source_ids": cites}]}
        if props == {"questions"}:
            if topic == "our talks":  # nothing named: nothing to wonder about
                return {"questions": []}
            return {"questions": [{"question": f"How is {topic} now?", "topic": topic, "priority": 0.6}]}
        if {"new", "progress", "complete", "abandon"} <= props:
            goal_ids = re.findall(r"^- \[([^\]]+)\] p\d", _system(messages), re.MULTILINE)
            new = [] if len(goal_ids) >= 2 else [{"goal": f"Support them with {topic}", "priority": 1}]
            return {
                "new": new,
                "progress": [{"goal_id": g, "note": f"We talked about {topic}"} for g in goal_ids[1:2]],
                "complete": goal_ids[:1],
                "abandon": [],
            }
        return _instance(schema, schema.get("$defs", {}))


def _clip(text: str, limit: int) -> str:
    """Whole words up to `limit` characters."""
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0]


def _system(messages: Sequence[ChatMessage]) -> str:
    return messages[0].content if messages and messages[0].role == "system" else ""


def _material(messages: Sequence[ChatMessage]) -> list[tuple[int, str, str]]:
    found = []
    for message in messages:
        for line in message.content.splitlines():
            match = _LINE.match(line.strip())
            if match:
                found.append((int(match.group(1)), match.group(2), match.group(3)))
    return found


def _topic(lines: list[tuple[int, str, str]]) -> str:
    """The name said most often in the material (a name that really occurs: entity checks hold)."""
    speakers = {speaker for _, speaker, _ in lines}
    names = Counter(
        name
        for _, _, text in lines
        for name in _NAME.findall(text)
        if name not in _COMMON and name not in speakers
    )
    return names.most_common(1)[0][0] if names else ""


def _instance(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """The smallest valid value for a schema (what any other structured request gets)."""
    if "$ref" in schema:
        return _instance(defs[schema["$ref"].split("/")[-1]], defs)
    if "anyOf" in schema:
        return _instance(schema["anyOf"][0], defs)
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: _instance(props[name], defs) for name in schema.get("required", [])}
    if kind == "array":
        return [_instance(schema["items"], defs) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        if "enum" in schema:
            return schema["enum"][0]
        return "noted" + "." * max(0, schema.get("minLength", 0) - 5)
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return None

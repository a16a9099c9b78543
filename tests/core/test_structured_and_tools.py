"""Logic of structured output (repair round) and the tool loop (text protocol), on a scripted backend."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from nexus_ark.errors import StructuredOutputError
from nexus_ark.mind.schemas import DreamInsight, EmotionReading
from nexus_ark.providers.base import ChatMessage, GenerationParams, ToolSpec
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.providers.structured import extract_json, generate_structured
from nexus_ark.providers.tools import ToolBox, parse_text_tool_calls, run_tool_loop, strip_tool_blocks

ASK = [ChatMessage(role="user", content="I got the job!")]


def test_valid_answer_needs_no_repair() -> None:
    backend = ScriptedBackend(['{"emotion": "joy"}'])
    assert generate_structured(backend, ASK, EmotionReading) == EmotionReading(emotion="joy")
    assert len(backend.requests) == 1
    system = backend.requests[0][0]
    assert system.role == "system" and '"emotion"' in system.content, "the schema is in the prompt too"


def test_one_repair_round_shows_the_model_its_error() -> None:
    backend = ScriptedBackend(['{"emotion": "ecstatic"}', 'Sure! {"emotion": "happy"}'])
    assert generate_structured(backend, ASK, EmotionReading).emotion == "happy"
    repair = backend.requests[1]
    assert repair[-2].content == '{"emotion": "ecstatic"}'
    assert "emotion" in repair[-1].content and "not valid" in repair[-1].content


def test_gives_up_with_a_clear_error() -> None:
    backend = ScriptedBackend(["no json here", '{"insight": "x"}'])
    with pytest.raises(StructuredOutputError) as err:
        generate_structured(backend, ASK, DreamInsight)
    assert "DreamInsight" in str(err.value) and "trigger_topic" in str(err.value)
    assert len(backend.requests) == 2


def test_raw_newlines_inside_strings_are_accepted() -> None:
    text = '{"trigger_topic": "t", "insight": "line one\nline two", "strategy": "s", "log_entry": "l"}'
    assert generate_structured(ScriptedBackend([text]), ASK, DreamInsight).insight == "line one\nline two"


class _Episode(BaseModel):
    summary: str = Field(min_length=1, max_length=60)
    emotional_tone: str = Field(min_length=1, max_length=30)
    key_events: list[str] = Field(default_factory=list)
    note: str | None = Field(default=None, max_length=21)


def test_a_string_the_grammar_stopped_at_its_max_length_is_not_kept_as_if_whole() -> None:
    # What llama.cpp's grammar gave the bundled model: the tone stopped at its 30th character, mid-word.
    answer = {
        "summary": "They cooked pasta. Luna stole the basil from the balcony.",  # 57 < 60: whole
        "emotional_tone": "The mood was one of joy and el",
        "key_events": ["cooked"],
        "note": "Luna is twelve. She l",
    }
    got = generate_structured(ScriptedBackend([json.dumps(answer)]), ASK, _Episode)
    assert got.emotional_tone == "The mood was one of joy and…"  # trails off, and says so
    assert got.note == "Luna is twelve."  # back to its last whole sentence
    assert got.summary == answer["summary"]


def test_an_answer_the_token_limit_cut_is_not_taken_even_if_it_parses() -> None:
    whole = '{"emotion": "joy"}'
    backend = ScriptedBackend(['{"emotion": "joy"}  {"emotion": "sad", "x": 1} and more', whole])
    params = GenerationParams(max_tokens=4)
    assert generate_structured(backend, ASK, EmotionReading, params=params).emotion == "joy"
    assert len(backend.requests) == 2 and "token limit" in backend.requests[1][-1].content


def test_extract_json_from_a_fenced_reply() -> None:
    assert json.loads(extract_json('Here:\n```json\n{"a": 1}\n```')) == {"a": 1}


def _memory_tools(log: list) -> ToolBox:
    tools = ToolBox()
    tools.add(
        ToolSpec(
            name="search_memory",
            description="Search memory.",
            parameters={"type": "object", "properties": {"query": {"type": "string"}}},
        ),
        lambda args: log.append(args) or f"found: Luna ({args['query']})",
    )
    return tools


def test_text_protocol_round_trip() -> None:
    log: list = []
    backend = ScriptedBackend(
        [
            'Let me look. <tool_call>{"name": "search_memory", "arguments": {"query": "cat"}}</tool_call>',
            "Your cat is called Luna.",
        ]
    )
    result = run_tool_loop(
        backend,
        [
            ChatMessage(role="system", content="You are Aria."),
            ChatMessage(role="user", content="My cat's name?"),
        ],
        _memory_tools(log),
        params=GenerationParams(),
    )
    assert not result.native and result.turns == 2 and not result.hit_turn_limit
    assert log == [{"query": "cat"}] and result.text == "Your cat is called Luna."
    first = backend.requests[0]
    assert "search_memory" in first[0].content and "<tool_call>" in first[0].content
    feedback = backend.requests[1][-1]
    assert (
        feedback.role == "user"
        and feedback.content == '<tool_result name="search_memory">found: Luna (cat)</tool_result>'
    )


def test_turn_limit_stops_a_model_that_never_stops_calling() -> None:
    call = '<tool_call>{"name": "search_memory", "arguments": {"query": "x"}}</tool_call>'
    log: list = []
    result = run_tool_loop(
        ScriptedBackend([call]),
        [ChatMessage(role="user", content="?")],
        _memory_tools(log),
        params=GenerationParams(),
        max_turns=3,
    )
    assert result.hit_turn_limit and result.turns == 3 and len(log) == 3


def test_unknown_tool_and_broken_block_are_reported_back_to_the_model() -> None:
    backend = ScriptedBackend(
        [
            '<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>'
            "<tool_call>{oops}</tool_call>",
            "Sorry.",
        ]
    )
    result = run_tool_loop(
        backend, [ChatMessage(role="user", content="?")], _memory_tools([]), params=GenerationParams()
    )
    feedback = backend.requests[1][-1].content
    assert "no tool named 'delete_everything'" in feedback and "is not valid" in feedback
    assert result.text == "Sorry."


def test_parse_and_strip() -> None:
    calls, problems = parse_text_tool_calls('a <tool_call>{"name": "t", "arguments": {"k": 1}}</tool_call> b')
    assert [(c.name, c.arguments) for c in calls] == [("t", {"k": 1})] and problems == []
    assert strip_tool_blocks('a <tool_call>{"name": "t"}</tool_call> b') == "a  b"

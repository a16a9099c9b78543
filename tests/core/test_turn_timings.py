"""A turn says where its time went before the reply streamed (meta["timings"]), for bench.turn_latency."""

from __future__ import annotations

from pathlib import Path

from nexus_ark.agent.session import ChatSession, TurnResult
from nexus_ark.memory.store import MemoryStore
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.scripted import ScriptedBackend

STAGES = {"emotion_s", "recall_s", "build_s", "first_token_s"}


def _result(session: ChatSession, text: str) -> TurnResult:
    result = list(session.send(text))[-1]  # the whole turn, then its one TurnResult
    assert isinstance(result, TurnResult)
    return result


def test_a_turn_records_each_stage_time_in_its_meta(tmp_path: Path) -> None:
    persona = PersonaStore(tmp_path / "personas").create("Aria")
    memory = MemoryStore(tmp_path / "m.db")
    session = ChatSession(persona, memory, ScriptedBackend(["Hello there."]))
    result = _result(session, "Hi!")
    timings = result.meta["timings"]
    assert set(timings) == STAGES
    assert all(isinstance(v, float) and v >= 0 for v in timings.values())
    # Stored with the reply, so the window and later analysis read the same numbers.
    assert memory.messages.get(result.reply_id).meta["timings"] == timings


def test_a_reply_without_a_token_has_no_first_token_time(tmp_path: Path) -> None:
    persona = PersonaStore(tmp_path / "personas").create("Aria")
    session = ChatSession(persona, MemoryStore(tmp_path / "m.db"), ScriptedBackend([""]))
    result = _result(session, "Hi!")
    assert "first_token_s" not in result.meta.get("timings", {})

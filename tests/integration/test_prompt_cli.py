"""`nexus-ark prompt`: the dry run of a turn with the bundled model and embedder, as a fresh process."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from nexus_ark.agent.prompt import SECTION_ORDER
from nexus_ark.providers.base import ChatMessage, GenerationParams
from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend
from tests.conftest import run_cli

pytestmark = pytest.mark.integration

QUESTION = "What is my sister's name?"
FACT = "My sister is called Keiko and she makes pottery in Kyoto."
FILLER = 50  # more than history_messages (40): the fact is far outside the conversation in the prompt


def _counts(data_dir: Path) -> tuple[int, int, int]:
    db = sqlite3.connect(f"file:{data_dir / 'personas' / 'aria' / 'memory.db'}?mode=ro", uri=True)
    try:
        return tuple(
            db.execute(f"select count(*) from {t}").fetchone()[0] for t in ("messages", "items", "embeddings")
        )
    finally:
        db.close()


def _plant(data_dir: Path, tmp_path: Path) -> None:
    """The fact weeks ago, then three weeks of small talk after it."""
    lines = [{"id": "fact", "speaker": "Mika", "text": FACT, "timestamp": "2026-01-03T20:00:00"}]
    topics = ["the weather", "a film", "lunch", "the train", "a book", "the garden", "music", "a walk"]
    for i in range(FILLER):
        day = 5 + i // 2
        lines.append(
            {
                "id": f"small-{i}",
                "speaker": "Mika" if i % 2 == 0 else "Aria",
                "text": f"Today we talked about {topics[i % len(topics)]} for a while.",
                "timestamp": f"2026-01-{day:02d}T1{i % 10}:00:00",  # Jan 5 to Jan 29
            }
        )
    turns = tmp_path / "turns.jsonl"
    turns.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    proc = run_cli(
        "--data-dir", str(data_dir), "memory", "import", "--persona", "aria", str(turns), timeout=300
    )
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow
def test_a_fact_from_weeks_ago_is_in_the_prompt_and_the_dry_run_stores_nothing(
    data_dir: Path, tmp_path: Path
) -> None:
    _plant(data_dir, tmp_path)
    before = _counts(data_dir)
    proc = run_cli("--data-dir", str(data_dir), "prompt", "--persona", "aria", "--json", QUESTION)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    messages, sections = out["messages"], out["sections"]
    assert set(messages[0]) == {"role", "content"} and messages[0]["role"] == "system"
    assert "Aria" in messages[0]["content"], "the soul comes first"
    notes, last = messages[-2], messages[-1]
    assert last["role"] == "user" and last["content"] == QUESTION, "the person's words alone"
    assert notes["role"] == "system" and "Keiko" in notes["content"], "the planted fact was recalled"
    assert not any("Keiko" in m["content"] for m in messages[1:-2]), (
        "it was recalled, not in the conversation"
    )
    assert len(messages) - 3 <= 40, "the conversation holds at most history_messages earlier turns"
    assert [s["name"] for s in sections] == list(SECTION_ORDER)
    assert all(set(s) == {"name", "tokens", "cut"} for s in sections)
    tokens = {s["name"]: s["tokens"] for s in sections}
    assert tokens["soul"] > 0 and tokens["recalled"] > 0 and tokens["conversation"] > 0
    # The user is talking now (not bored), and no question, goal or emotion stirs a drive here.
    assert tokens["feelings"] == 0, "no drive is at 0.4, so the feelings section is left out"
    assert sum(tokens.values()) <= 4096 - 256, "the prompt leaves the reply its room (aria: 4096 and 256)"
    assert _counts(data_dir) == before, "a dry run adds no message, item or embedding"

    readable = run_cli("--data-dir", str(data_dir), "prompt", "--persona", "aria", QUESTION)
    assert readable.returncode == 0, readable.stderr
    assert readable.stdout.startswith("--- system ---\n")
    assert "--- user ---\n" in readable.stdout and "Keiko" in readable.stdout
    assert f"recalled\t{tokens['recalled']}" in readable.stdout, "the same counts as the JSON"
    assert _counts(data_dir) == before

    # And the turn itself still streams a reply with the bundled model.
    chat = run_cli("--data-dir", str(data_dir), "chat", "--persona", "aria", stdin=QUESTION + "\n")
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout.strip(), "a reply was streamed"
    assert _counts(data_dir)[0] == before[0] + 2


def test_a_soul_too_long_for_the_model_is_named_with_what_to_shorten(data_dir: Path) -> None:
    seeded = run_cli("--data-dir", str(data_dir), "persona", "list")
    assert seeded.returncode == 0, seeded.stderr
    soul = data_dir / "personas" / "aria" / "persona.md"
    soul.write_text("You are Aria, who loves long walks by the quiet sea at dawn. " * 900, encoding="utf-8")
    proc = run_cli("--data-dir", str(data_dir), "prompt", "--persona", "aria", "Hello")
    assert proc.returncode == 2
    assert "persona.md is " in proc.stderr and "shorten persona.md" in proc.stderr, proc.stderr
    assert "4,096" in proc.stderr, "the model's context is named"
    assert proc.stdout == ""


def test_the_bundled_model_counts_with_its_own_tokenizer_even_while_it_generates(
    shared_llama: LlamaCppBackend,
) -> None:
    text = "Keiko makes pottery in Kyoto."
    exact = shared_llama.count_tokens(text)
    assert 0 < exact < len(text)
    assert shared_llama.count_tokens("こんにちは、ケイコさん。") > 0
    stream = shared_llama.stream_chat(
        [ChatMessage(role="user", content="Count from one to ten.")],
        GenerationParams(max_tokens=24, temperature=0),
    )
    first = next(stream)
    # Counting from this thread while the inference thread decodes: same answers, and the stream goes on.
    counts = {shared_llama.count_tokens(text) for _ in range(50)}
    rest = list(stream)
    assert counts == {exact}
    assert first.text or rest[0].text
    assert rest[-1].finish_reason in ("stop", "length")

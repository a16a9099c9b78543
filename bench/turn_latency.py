"""A chat turn's latency, stage by stage, over a 20-turn conversation with the bundled model.

Runs the real ChatSession (NexusApp on a temporary data folder, persona Aria): the sectioned prompt, recall
on the archive, emotion detection inside the turn. After each turn the app's off-path work runs as it does in
the app: the new messages are embedded (after_turn) and the internal model (here the conversation model,
as when no [internal_model] is set) answers a structured emotion confirmation on the same loaded model.
Then the same prompt the turn sent is answered once more by a second copy of the model whose context is
reset first: the cold first token, what the turn would cost without any prefix reuse.

Per turn: emotion, recall, prompt build, first token (from meta["timings"]), total send time, cold first
token, and first token / cold. Summary: turn 10's ratio and the least-squares slope of the first token over
turns 2..N (ms per turn). With --repeats the whole conversation runs again on a fresh data folder and
every figure is the median over the repeats.

    .venv/bin/python -m bench.turn_latency [--turns 20] [--repeats 3] [--max-tokens 64] [--json out.json]
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nexus_ark.agent.session import ReplyDelta, TurnResult
from nexus_ark.app import NexusApp
from nexus_ark.mind.emotion import EmotionDetector, head_path
from nexus_ark.mind.labels import LABELS
from nexus_ark.mind.schemas import EmotionReading
from nexus_ark.paths import bundled_model_path
from nexus_ark.providers.base import ChatMessage, GenerationParams
from nexus_ark.providers.embedders import default_embedder
from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend

PERSONA = "aria"
USER_TURNS = [
    "Hi Aria, I'm back from work.",
    "It was long. My manager moved the deadline again, third time this month.",
    "I think I'll cook something simple tonight. Any idea?",
    "Pasta sounds good. Do you like cooking?",
    "My cat Luna keeps stealing the basil from the balcony.",
    "Ha, yes, she is a menace. She is twelve now, but still acts like a kitten.",
    "Tomorrow I have a dentist appointment, I'm a bit nervous.",
    "Thanks. What should I read before bed?",
    "I finished that one last month. Something lighter?",
    "今日は少し疲れたけど、話せてうれしい。",
    "By the way, do you remember what my cat is called?",
    "Right. I'm thinking of planting more basil so she leaves mine alone.",
    "My sister is visiting next weekend, we haven't seen each other in a year.",
    "We might go hiking if the weather holds. Any trail tips?",
    "I'm worried my knees won't like the downhill parts.",
    "Good idea. I'll pack poles. What snacks would you bring?",
    "明日は早起きしないといけない。",
    "Do you ever get bored when I'm away?",
    "That's sweet. I should sleep now, it's late.",
    "Good night, Aria. Talk tomorrow.",
]
INTERNAL_SYSTEM = "Classify the main emotion of the user's message."
STAGES = ("emotion_s", "recall_s", "build_s", "first_token_s")


def ttft(chunks: Iterator[Any]) -> float:
    """Seconds to the first streamed text; the rest is dropped (the stream stops generating)."""
    started = time.perf_counter()
    for chunk in chunks:
        if chunk.text:
            return time.perf_counter() - started
    return time.perf_counter() - started


def stand_in_detector(folder: Path) -> EmotionDetector:
    """When the trained head is not built in this checkout: a head of the same shape with random weights.
    Its readings mean nothing, but it costs what the real one costs (one e5 query embedding and a
    softmax), which is all a latency benchmark needs. The run says so."""
    embedder = default_embedder()
    dim = len(embedder.embed_query("hello"))
    rng = np.random.default_rng(0)
    path = folder / "stand_in_head.npz"
    np.savez(
        path,
        labels=np.array(LABELS),
        model_id=np.array(embedder.model_id),
        W=rng.normal(size=(dim, len(LABELS))).astype(np.float32),
        b=np.zeros(len(LABELS), dtype=np.float32),
    )
    print(f"note: {head_path().name} is not built here; emotion runs on a stand-in head of the same shape")
    return EmotionDetector(embedder, path)


def cold_backend(n_ctx: int, threads: int) -> LlamaCppBackend:
    # One context and no state cache: nothing can be reused once it is reset.
    kwargs: dict[str, Any] = {"n_ctx": n_ctx, "n_threads": threads, "state_cache_mb": 0}
    if "contexts" in inspect.signature(LlamaCppBackend.__init__).parameters:
        kwargs["contexts"] = 1
    backend = LlamaCppBackend(bundled_model_path(), **kwargs)
    backend.ensure_ready()
    return backend


def run_conversation(turns: int, max_tokens: int, cold: LlamaCppBackend) -> list[dict[str, float]]:
    rows: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as data_dir, NexusApp(data_dir) as app:
        session = app.personas.session(PERSONA)
        # A short reply keeps the run short; the prompt's budgets follow the persona's own settings.
        session.persona.settings.model.max_tokens = max_tokens
        backend = session.backend
        persona = app.personas.load(PERSONA)
        internal = app.models.backend(app.models.model_config(persona, "internal"))
        sent: list[Sequence[ChatMessage]] = []
        original = backend.stream_chat

        def recording(messages: Sequence[ChatMessage], *args: Any, **kwargs: Any) -> Iterator[Any]:
            if kwargs.get("json_schema") is None:
                sent.append(list(messages))  # the chat prompt exactly as the turn sent it
            return original(messages, *args, **kwargs)

        backend.stream_chat = recording  # type: ignore[method-assign]
        if not head_path().exists():
            session.emotions = stand_in_detector(Path(data_dir))
        # Loaded before the first turn so turn 1 is not the e5 model's load time.
        assert session.emotions is not None
        session.emotions.classify("hello")
        for turn in range(turns):
            text = USER_TURNS[turn % len(USER_TURNS)]
            started = time.perf_counter()
            result = None
            for item in session.send(text):
                if isinstance(item, TurnResult):
                    result = item
                else:
                    assert isinstance(item, ReplyDelta)
            total = time.perf_counter() - started
            assert result is not None and result.status == "complete", result
            row: dict[str, float] = {"turn": turn + 1, "total_s": total}
            row.update({k: result.meta["timings"].get(k, float("nan")) for k in STAGES})
            # llama.cpp's count of the prompt tokens the turn evaluated (what the reused prefix saved).
            stats = getattr(backend, "last_eval", None)
            row["evaluated_tokens"] = stats.prompt_evaluated if stats is not None else float("nan")
            prompt = sent[-1]
            # Off the user's path, as the app runs it: vectors for the new messages, the internal request.
            session.after_turn()
            ttft(
                internal.stream_chat(
                    [
                        ChatMessage(role="system", content=INTERNAL_SYSTEM),
                        ChatMessage(role="user", content=text),
                    ],
                    GenerationParams(max_tokens=24, temperature=0.0, seed=1),
                    json_schema=EmotionReading.model_json_schema(),
                )
            )
            cold._llm.reset()  # idle between requests: the next prompt is evaluated whole
            row["cold_s"] = ttft(cold.stream_chat(prompt, GenerationParams(max_tokens=4, temperature=0.0)))
            row["prompt_tokens"] = sum(cold.count_tokens(m.content) for m in prompt)
            rows.append(row)
            print(
                f"  turn {turn + 1:2d}: first token {row['first_token_s'] * 1000:6.0f} ms, "
                f"cold {row['cold_s'] * 1000:6.0f} ms",
                flush=True,
            )
        backend.stream_chat = original  # type: ignore[method-assign]
    return rows


def slope_ms_per_turn(rows: list[dict[str, float]], key: str) -> float:
    xs = [r["turn"] for r in rows]
    ys = [r[key] * 1000 for r in rows]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def theil_sen(rows: list[dict[str, float]]) -> float:
    """The median of the pairwise slopes of the first token (ms per turn)."""
    pts = [(r["turn"], r["first_token_s"] * 1000) for r in rows]
    return statistics.median(
        (y2 - y1) / (x2 - x1) for i, (x1, y1) in enumerate(pts) for x2, y2 in pts[i + 1 :]
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--json")
    args = parser.parse_args()
    threads = max(1, os.cpu_count() or 1)
    cold = cold_backend(4096, threads)
    runs = []
    for r in range(args.repeats):
        print(f"repeat {r + 1}/{args.repeats}", flush=True)
        runs.append(run_conversation(args.turns, args.max_tokens, cold))
    cold.close()

    keys = [*STAGES, "total_s", "cold_s", "prompt_tokens", "evaluated_tokens"]
    rows = [
        {"turn": i + 1, **{k: statistics.median(run[i][k] for run in runs) for k in keys}}
        for i in range(args.turns)
    ]
    for row in rows:
        row["ratio"] = statistics.median(
            run[row["turn"] - 1]["first_token_s"] / run[row["turn"] - 1]["cold_s"] for run in runs
        )

    print(
        "| turn | prompt tokens | evaluated | emotion (ms) | recall (ms) | build (ms) | first token (ms) "
        "| total (ms) | cold first token (ms) | first token / cold |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        ms = {k: row[k] * 1000 for k in keys if not k.endswith("_tokens")}
        print(
            f"| {row['turn']} | {row['prompt_tokens']:.0f} | {row['evaluated_tokens']:.0f} "
            f"| {ms['emotion_s']:.0f} | {ms['recall_s']:.0f} "
            f"| {ms['build_s']:.0f} | {ms['first_token_s']:.0f} | {ms['total_s']:.0f} | {ms['cold_s']:.0f} "
            f"| {row['ratio']:.3f} |"
        )
    later = rows[1:]
    ten = rows[min(9, len(rows) - 1)]
    first = [r["first_token_s"] * 1000 for r in later]
    print(
        f"first token, median of turns 2-5: {statistics.median(first[:4]):.0f} ms; "
        f"of the last 5 turns: {statistics.median(first[-5:]):.0f} ms; "
        f"Theil-Sen slope (robust to one-off stalls on a shared machine): {theil_sen(later):+.1f} ms/turn"
    )
    print(
        f"turn {ten['turn']}: first token / cold = {ten['ratio']:.3f};  "
        f"median ratio turns 2-{len(rows)} = {statistics.median(r['ratio'] for r in later):.3f};  "
        f"slope of first token over turns 2-{len(rows)} = "
        f"{slope_ms_per_turn(later, 'first_token_s'):+.1f} ms/turn "
        f"(cold: {slope_ms_per_turn(later, 'cold_s'):+.1f} ms/turn);  repeats = {args.repeats}"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"median": rows, "runs": runs}, fh, indent=2)


if __name__ == "__main__":
    main()

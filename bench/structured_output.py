"""Structured output from the bundled 135M model: does every answer parse and validate?

100 emotion classifications (the first 100 GoEmotions dev texts, from ../shared/data) and 20 dream-diary
objects, through providers.structured with the app's llama.cpp backend (JSON-schema-constrained decoding,
one repair round). Reports validity (the bar: all of them), repairs needed, time per object, and, for
information only, agreement with GoEmotions' Ekman labels (a 135M model is no classifier; detection
quality is the emotion issue's job).

    .venv/bin/python -m bench.structured_output [--emotions 100] [--dreams 20] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from nexus_ark.errors import StructuredOutputError
from nexus_ark.mind.schemas import DreamInsight, EmotionReading
from nexus_ark.paths import bundled_model_path
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend
from nexus_ark.providers.structured import generate_structured

REPO = Path(__file__).resolve().parent.parent
EMOTION_PROMPT = "Classify the main emotion of the user's message."
# Our labels that count as agreeing with each Ekman group.
AGREES = {
    "joy": {"joy", "happy", "anticipation", "affection"},
    "sadness": {"sadness", "tired"},
    "anger": {"anger", "stressed"},
    "fear": {"fear", "anxious"},
    "surprise": {"surprise"},
    "neutral": {"neutral", "busy"},
    "disgust": {"anger"},
}
DAYS = [
    "The user talked about a new job and their cat Luna.",
    "The user was sad about a friend moving away.",
    "We planned a garden together: tomatoes and basil.",
    "The user was stressed about exams.",
    "We laughed about a bad movie.",
]


def load_emotions(data: Path, count: int) -> list[tuple[str, str]]:
    labels = (data / "goemotions" / "labels.txt").read_text().split()
    mapping = json.loads((data / "goemotions" / "ekman_mapping.json").read_text())
    to_ekman = {fine: group for group, fines in mapping.items() for fine in fines}
    rows = []
    for line in (data / "goemotions" / "dev.tsv").read_text(encoding="utf-8").splitlines():
        text, ids, _ = line.split("\t")
        fine = labels[int(ids.split(",")[0])]
        rows.append((text, to_ekman.get(fine, "neutral")))
        if len(rows) == count:
            break
    return rows


def run(backend, make_messages, model, items) -> dict:
    times, repairs, valid, outputs = [], 0, 0, []
    original = backend.stream_chat
    calls = [0]

    def counting(*a, **k):
        calls[0] += 1
        return original(*a, **k)

    backend.stream_chat = counting
    for item in items:
        before = calls[0]
        started = time.perf_counter()
        try:
            outputs.append(generate_structured(backend, make_messages(item), model))
            valid += 1
        except StructuredOutputError:
            outputs.append(None)
        times.append(time.perf_counter() - started)
        repairs += calls[0] - before - 1
    backend.stream_chat = original
    return {
        "valid": valid,
        "total": len(items),
        "repairs": repairs,
        "median_s": statistics.median(times),
        "outputs": outputs,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--emotions", type=int, default=100)
    parser.add_argument("--dreams", type=int, default=20)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    args = parser.parse_args()
    backend = LlamaCppBackend(bundled_model_path(), n_ctx=2048)
    backend.ensure_ready()

    emotions = load_emotions(args.data, args.emotions)
    e = run(
        backend,
        lambda item: [
            ChatMessage(role="system", content=EMOTION_PROMPT),
            ChatMessage(role="user", content=item[0]),
        ],
        EmotionReading,
        emotions,
    )
    agree = sum(
        1
        for (text, gold), out in zip(emotions, e["outputs"], strict=True)
        if out is not None and out.emotion in AGREES[gold]
    )
    dreams = [DAYS[i % len(DAYS)] for i in range(args.dreams)]
    d = run(
        backend,
        lambda day: [
            ChatMessage(
                role="system", content="You are Aria, reflecting during sleep on today's conversations."
            ),
            ChatMessage(role="user", content=f"Today: {day} Write your dream diary entry."),
        ],
        DreamInsight,
        dreams,
    )
    backend.close()

    print("| object | valid | repairs needed | median time per object (s) |")
    print("|---|---:|---:|---:|")
    print(f"| EmotionReading | {e['valid']}/{e['total']} | {e['repairs']} | {e['median_s']:.2f} |")
    print(f"| DreamInsight | {d['valid']}/{d['total']} | {d['repairs']} | {d['median_s']:.2f} |")
    print(f"emotion agreement with GoEmotions' Ekman label (information only): {agree}/{len(emotions)}")


if __name__ == "__main__":
    main()

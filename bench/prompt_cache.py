"""Prompt-cache reuse over a growing conversation of 10 turns: first-token latency per turn.

  app (cache)   the app's llama.cpp provider: the previous turn's KV prefix is reused, and with the state
                cache an internal request between turns (emotion detection) does not evict it
  app (cold)    the same provider and prompts, KV state reset before each turn (what every turn would cost
                without reuse)
  raw           llama-cpp-python called directly, same prompts (its own prefix reuse, no state cache)

Each turn is followed by an internal structured request (emotion of the user's message), as the app does.

    .venv/bin/python -m bench.prompt_cache [--turns 10] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable, Iterator

from nexus_ark.mind.schemas import EmotionReading
from nexus_ark.paths import bundled_model_path
from nexus_ark.providers.base import ChatMessage, GenerationParams
from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend

USER_TURNS = [
    "Hi Aria, I'm back from work.",
    "It was long. My manager moved the deadline again.",
    "I think I'll cook something simple tonight. Any idea?",
    "Pasta sounds good. Do you like cooking?",
    "My cat Luna keeps stealing the basil from the balcony.",
    "Ha, yes, she is a menace. She is twelve now.",
    "Tomorrow I have a dentist appointment, I'm a bit nervous.",
    "Thanks. What should I read before bed?",
    "I finished that one last month. Something lighter?",
    "Good night, Aria. Talk tomorrow.",
]
REPLY = "That sounds like quite a day. Tell me more, I'm listening."
PARAMS = GenerationParams(max_tokens=24, temperature=0.0, seed=1)
SCHEMA = EmotionReading.model_json_schema()


def soul() -> str:
    from nexus_ark.paths import shipped_personas_dir

    return (shipped_personas_dir() / "aria" / "persona.md").read_text(encoding="utf-8")


def ttft(stream: Iterator[str]) -> float:
    started = time.perf_counter()
    for _ in stream:
        elapsed = time.perf_counter() - started
        for _ in stream:  # drain, as the app would
            pass
        return elapsed
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--json")
    args = parser.parse_args()
    from llama_cpp import Llama

    path = bundled_model_path()
    threads = max(1, os.cpu_count() or 1)
    app = LlamaCppBackend(path, n_ctx=4096, n_threads=threads, state_cache_mb=256)
    app.ensure_ready()
    raw = Llama(model_path=str(path), n_ctx=4096, n_threads=threads, n_threads_batch=threads, verbose=False)

    def app_chat(messages: list[ChatMessage], schema: dict | None = None) -> Iterator[str]:
        for c in app.stream_chat(messages, PARAMS, json_schema=schema):
            if c.text:
                yield c.text

    def raw_chat(messages: list[ChatMessage], schema: dict | None = None) -> Iterator[str]:
        fmt = {"type": "json_object", "schema": schema} if schema else None
        for part in raw.create_chat_completion(
            messages=[m.model_dump(include={"role", "content"}) for m in messages],
            stream=True,
            max_tokens=PARAMS.max_tokens,
            temperature=0.0,
            seed=1,
            response_format=fmt,
        ):
            if part["choices"][0]["delta"].get("content"):
                yield part["choices"][0]["delta"]["content"]

    def reset_app() -> None:
        # Cold: forget the evaluated prefix and every cached state, so the whole prompt is evaluated.
        app._llm.reset()
        if app._llm.cache is not None:
            app._llm.cache.cache_state.clear()

    rows = []
    convo = [ChatMessage(role="system", content=soul())]
    engines: list[tuple[str, Callable[..., Iterator[str]], Callable[[], None] | None]] = [
        ("app (cache)", app_chat, None),
        ("app (cold)", app_chat, reset_app),
        ("raw llama-cpp-python", raw_chat, None),
    ]
    histories = {name: list(convo) for name, _, _ in engines}
    for turn in range(args.turns):
        user = USER_TURNS[turn % len(USER_TURNS)]
        row = {"turn": turn + 1}
        for name, chat, before in engines:
            history = histories[name]
            history.append(ChatMessage(role="user", content=user))
            if before:
                before()
            row[name] = ttft(chat(history))
            history.append(ChatMessage(role="assistant", content=REPLY))
            # The internal request the app makes after each user message (emotion detection).
            ttft(
                chat(
                    [
                        ChatMessage(role="system", content="Classify the emotion."),
                        ChatMessage(role="user", content=user),
                    ],
                    SCHEMA,
                )
            )
        rows.append(row)
    app.close()

    names = [n for n, _, _ in engines]
    print("| turn | " + " | ".join(f"{n} (ms)" for n in names) + " |")
    print("|---:|" + "---:|" * len(names))
    for row in rows:
        print(f"| {row['turn']} | " + " | ".join(f"{row[n] * 1000:.0f}" for n in names) + " |")
    later = rows[1:]
    med = {n: statistics.median(r[n] for r in later) for n in names}
    print(f"| median of turns 2-{len(rows)} | " + " | ".join(f"{med[n] * 1000:.0f}" for n in names) + " |")
    print(
        f"cold / cache: {med['app (cold)'] / med['app (cache)']:.1f}x;  "
        f"raw / app (cache): {med['raw llama-cpp-python'] / med['app (cache)']:.1f}x"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()

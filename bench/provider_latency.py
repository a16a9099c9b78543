"""First-token latency and tokens/s: the app's llama.cpp provider vs. llama-cpp-python called directly.

Same model file, same settings, same prompts, same run, interleaved so machine noise hits both alike.
"cold" prompts start with a unique line so no KV prefix can be reused; "warm" repeats the previous prompt
of the same engine, so llama-cpp-python reuses its cached prefix.

    .venv/bin/python -m bench.provider_latency [--runs 5] [--max-tokens 128] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import threading
import time
from collections.abc import Callable, Iterator

from nexus_ark.paths import bundled_model_path
from nexus_ark.providers.base import ChatMessage, GenerationParams
from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend

SOUL = (
    "You are Aria, a companion who lives on this person's own computer. You are warm, playful and honest. "
    "You love stories, small discoveries and the way people change over time. You remember what matters to "
    "the person you talk with and ask how things turned out. Reply in short, natural English."
)
QUESTION = "I just got back from a long walk by the river. Tell me a short story about a heron."

Streamer = Callable[[list[dict[str, str]]], Iterator[str]]


def prompt(run: int) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": f"Conversation {run}.\n{SOUL}"},
        {"role": "user", "content": QUESTION},
    ]


def measure(stream: Streamer, messages: list[dict[str, str]]) -> tuple[float, float, int]:
    started = time.perf_counter()
    first = last = None
    tokens = 0
    for _text in stream(messages):
        now = time.perf_counter()
        if first is None:
            first = now
        last = now
        tokens += 1
    assert first is not None and last is not None
    tps = (tokens - 1) / (last - first) if tokens > 1 else 0.0
    return first - started, tps, tokens


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--json")
    args = parser.parse_args()

    from llama_cpp import Llama

    path = bundled_model_path()
    assert path is not None, "bundled model missing"
    n_ctx, threads = 2048, max(1, os.cpu_count() or 1)
    params = GenerationParams(max_tokens=args.max_tokens, temperature=0.0, seed=1)

    app = LlamaCppBackend(path, n_ctx=n_ctx, n_threads=threads)
    app.ensure_ready()
    raw = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, verbose=False)

    def app_stream(messages: list[dict[str, str]]) -> Iterator[str]:
        chat = [ChatMessage(**m) for m in messages]
        for chunk in app.stream_chat(chat, params, threading.Event()):
            if chunk.text:
                yield chunk.text

    def raw_stream(messages: list[dict[str, str]]) -> Iterator[str]:
        for part in raw.create_chat_completion(
            messages=messages,
            stream=True,
            max_tokens=params.max_tokens,
            temperature=0.0,
            top_p=params.top_p,
            repeat_penalty=params.repeat_penalty,
            seed=1,
        ):
            text = part["choices"][0]["delta"].get("content")
            if text:
                yield text

    engines = {"app provider": app_stream, "raw llama-cpp-python": raw_stream}
    results: dict[str, dict[str, list[float]]] = {
        name: {"cold_ttft": [], "warm_ttft": [], "tps": [], "tokens": []} for name in engines
    }
    for stream in engines.values():  # warm-up: load pages, build the chat template once
        measure(stream, prompt(-1))
    for run in range(args.runs):
        order = list(engines.items())
        if run % 2:  # alternate who goes first, so neither always runs on a just-warmed machine
            order.reverse()
        for name, stream in order:
            cold_ttft, tps, tokens = measure(stream, prompt(run))
            warm_ttft, warm_tps, _ = measure(stream, prompt(run))
            r = results[name]
            r["cold_ttft"].append(cold_ttft)
            r["warm_ttft"].append(warm_ttft)
            r["tps"].extend([tps, warm_tps])
            r["tokens"].append(tokens)
    app.close()

    med = {name: {k: statistics.median(v) for k, v in r.items()} for name, r in results.items()}
    a, b = med["app provider"], med["raw llama-cpp-python"]
    print(
        f"model {path.name}, n_ctx {n_ctx}, threads {threads}, max_tokens {args.max_tokens}, runs {args.runs}"
    )
    print("| engine | first token, cold (ms) | first token, cached prefix (ms) | tokens/s | tokens |")
    print("|---|---:|---:|---:|---:|")
    for name, m in med.items():
        print(
            f"| {name} | {m['cold_ttft'] * 1000:.1f} | {m['warm_ttft'] * 1000:.1f} | {m['tps']:.1f} | "
            f"{m['tokens']:.0f} |"
        )
    print(
        f"| app / raw | {a['cold_ttft'] / b['cold_ttft']:.3f} | {a['warm_ttft'] / b['warm_ttft']:.3f} | "
        f"{a['tps'] / b['tps']:.3f} | |"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"raw": results, "median": med}, fh, indent=2)


if __name__ == "__main__":
    main()

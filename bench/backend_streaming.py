"""Streaming through each backend vs. calling its library directly, same server, same prompt, same run.

  llama.cpp  LlamaCppBackend            vs  llama_cpp.Llama.create_chat_completion (in process)
  Ollama     OllamaBackend              vs  ollama.Client.chat, both against the loopback Ollama-wire
             server (tests/integration/wire_server.py; no Ollama binary installs here)
  LiteLLM    LiteLLMBackend             vs  litellm.completion, both against llama-cpp-python's
             OpenAI-compatible server on 127.0.0.1

Greedy decoding of 128 tokens; engines alternate; medians over the runs.

    .venv/bin/python -m bench.backend_streaming [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Callable, Iterator

from bench.provider_latency import QUESTION, SOUL, measure
from nexus_ark.paths import bundled_model_path
from nexus_ark.providers.base import ChatMessage, GenerationParams
from nexus_ark.providers.litellm_backend import LiteLLMBackend, import_litellm
from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend
from nexus_ark.providers.ollama_backend import OllamaBackend
from tests.integration.wire_server import SERVED_MODEL, WireServer, start_llama_server

MAX_TOKENS = 128
PARAMS = GenerationParams(max_tokens=MAX_TOKENS, temperature=0.0, seed=1)


def messages(run: int) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": f"Conversation {run}.\n{SOUL}"},
        {"role": "user", "content": QUESTION},
    ]


def app_stream(backend) -> Callable[[list[dict[str, str]]], Iterator[str]]:
    def stream(msgs: list[dict[str, str]]) -> Iterator[str]:
        for c in backend.stream_chat([ChatMessage(**m) for m in msgs], PARAMS):
            if c.text:
                yield c.text

    return stream


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    import ollama
    from llama_cpp import Llama

    path = bundled_model_path()
    threads = max(1, os.cpu_count() or 1)
    in_process = LlamaCppBackend(path, n_ctx=2048, n_threads=threads, state_cache_mb=0)
    in_process.ensure_ready()
    raw_llama = Llama(
        model_path=str(path), n_ctx=2048, n_threads=threads, n_threads_batch=threads, verbose=False
    )

    def raw_llama_stream(msgs):
        for part in raw_llama.create_chat_completion(
            messages=msgs,
            stream=True,
            max_tokens=MAX_TOKENS,
            temperature=0.0,
            seed=1,
            top_p=PARAMS.top_p,
            repeat_penalty=PARAMS.repeat_penalty,
        ):
            if part["choices"][0]["delta"].get("content"):
                yield part["choices"][0]["delta"]["content"]

    server_proc, base = start_llama_server(path)
    litellm = import_litellm()
    app_litellm = LiteLLMBackend("openai/local", api_base=base)
    app_litellm.ensure_ready()

    def raw_litellm_stream(msgs):
        for chunk in litellm.completion(
            model="openai/local",
            api_base=base,
            api_key="x",
            messages=msgs,
            stream=True,
            max_tokens=MAX_TOKENS,
            temperature=0.0,
            seed=1,
            top_p=PARAMS.top_p,
        ):
            if chunk.choices and chunk.choices[0].delta.content:
                yield chunk.choices[0].delta.content

    results: dict[str, dict[str, list[float]]] = {}
    with WireServer(in_process) as wire:
        app_ollama = OllamaBackend(SERVED_MODEL, wire.url)
        raw_ollama = ollama.Client(host=wire.url)

        def raw_ollama_stream(msgs):
            for part in raw_ollama.chat(
                model=SERVED_MODEL,
                messages=msgs,
                stream=True,
                options={
                    "num_predict": MAX_TOKENS,
                    "temperature": 0.0,
                    "seed": 1,
                    "top_p": PARAMS.top_p,
                    "repeat_penalty": PARAMS.repeat_penalty,
                },
            ):
                if part.message.content:
                    yield part.message.content

        pairs = [
            ("llama.cpp", app_stream(in_process), raw_llama_stream),
            ("Ollama", app_stream(app_ollama), raw_ollama_stream),
            ("LiteLLM", app_stream(app_litellm), raw_litellm_stream),
        ]
        for name, app_fn, raw_fn in pairs:
            measure(app_fn, messages(-1))
            measure(raw_fn, messages(-1))
            r = results[name] = {"app_tps": [], "raw_tps": [], "app_ttft": [], "raw_ttft": []}
            for run in range(args.runs):
                order = [("app", app_fn), ("raw", raw_fn)]
                if run % 2:
                    order.reverse()
                for who, fn in order:
                    first, tps, _ = measure(fn, messages(run * 2 + (who == "raw")))
                    r[f"{who}_tps"].append(tps)
                    r[f"{who}_ttft"].append(first)
    server_proc.terminate()
    in_process.close()

    print(f"greedy, {MAX_TOKENS} tokens, {args.runs} runs, {threads} threads")
    print(
        "| backend | app tokens/s | raw tokens/s | app / raw | app first token (ms) | raw first token (ms) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        m = {k: statistics.median(v) for k, v in r.items()}
        print(
            f"| {name} | {m['app_tps']:.1f} | {m['raw_tps']:.1f} | {m['app_tps'] / m['raw_tps']:.3f} | "
            f"{m['app_ttft'] * 1000:.0f} | {m['raw_ttft'] * 1000:.0f} |"
        )


if __name__ == "__main__":
    main()

"""Two personas on one shared GGUF: how long persona B's turn waits for its first token while persona A's
dream request generates on the same model (issue 22, item 2).

The bundled model through llama.cpp with two contexts, as the app loads a local model. A's request (the
dream's, background priority, 160 tokens) streams on one thread; once it has produced 10 tokens, B's turn
(the person's priority) is asked on another. Reported per run and as medians: B's wait for its first token,
A's time per token (one generation step), the wait in A's steps, B's first token with the model idle, and
how long A's whole request took. Before the pre-emption B waited for the rest of A's request.

    .venv/bin/python -m bench.shared_model_priority [--runs 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from pathlib import Path

from nexus_ark.paths import bundled_model_path
from nexus_ark.providers.base import ChatMessage, GenerationParams
from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend
from nexus_ark.runtime.work_queue import BACKGROUND, USER

DREAM = [ChatMessage(role="user", content="Write a long story about a lighthouse keeper and the sea.")]
TURN = [ChatMessage(role="user", content="Hi! How are you today?")]
LONG = GenerationParams(max_tokens=160, temperature=0.7, seed=7)
SHORT = GenerationParams(max_tokens=8, temperature=0.7, seed=3)


def _first_token(backend: LlamaCppBackend) -> float:
    asked = time.monotonic()
    for chunk in backend.stream_chat(TURN, SHORT, priority=USER):
        if chunk.text:
            return time.monotonic() - asked
    return float("nan")


def one_run(backend: LlamaCppBackend) -> dict[str, float]:
    started, times = threading.Event(), []

    def dream() -> None:
        for chunk in backend.stream_chat(DREAM, LONG, priority=BACKGROUND):
            if chunk.text:
                times.append(time.monotonic())
                if len(times) == 10:
                    started.set()

    began = time.monotonic()
    worker = threading.Thread(target=dream)
    worker.start()
    started.wait(300)
    wait = _first_token(backend)
    worker.join()
    step = (times[-1] - times[0]) / max(1, len(times) - 1)
    return {
        "turn_first_token_s": wait,
        "dream_step_s": step,
        "wait_in_steps": wait / step,
        "dream_total_s": times[-1] - began,
        "idle_first_token_s": _first_token(backend),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    model = bundled_model_path()
    assert model is not None, "the bundled model is not installed"
    backend = LlamaCppBackend(model, n_ctx=1024, contexts=2)
    try:
        _first_token(backend)  # load both the model and the first context
        runs = [one_run(backend) for _ in range(args.runs)]
    finally:
        backend.close()
    medians = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    for i, r in enumerate(runs, 1):
        print(f"run {i}: " + ", ".join(f"{k} {v:.3f}" for k, v in r.items()))
    print("median: " + ", ".join(f"{k} {v:.3f}" for k, v in medians.items()))
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, "median": medians}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()

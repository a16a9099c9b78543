"""What rolling compression costs: seconds and tokens per compression with the bundled model.

A synthetic conversation of --exchanges user/persona exchanges (30 by default: a 60-message conversation;
each message about 50 tokens, each with a fact of its own) is written into a fresh persona's memory as a
session would write it. After each exchange the next message's prompt is built (as the turn does, which
measures the conversation's room), then the session's after-turn compression runs
(ChatSession.compress_if_due) with the bundled model as the internal model. Per compression: wall seconds,
tokens the model read and wrote, the summary's tokens.

    .venv/bin/python -m bench.compression [--exchanges 30] [--context 2048] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from nexus_ark.agent.session import ChatSession
from nexus_ark.memory.store import MemoryStore
from nexus_ark.memory.summaries import Summaries
from nexus_ark.paths import bundled_model_path
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend

PLACES = ["Kyoto", "the lake", "the market", "the library", "her office", "the station", "the park"]
THINGS = ["a blue umbrella", "basil seeds", "a train ticket", "a novel", "green tea", "a bicycle", "a camera"]
PEOPLE = ["Keiko", "Tom", "her manager", "Luna the cat", "a neighbour", "her sister", "an old friend"]


def user_text(i: int) -> str:
    return (
        f"On day {i + 1} I went to {PLACES[i % len(PLACES)]} with {PEOPLE[i % len(PEOPLE)]} and bought "
        f"{THINGS[i % len(THINGS)]} for {100 + 7 * i} yen. It rained a little, but it was nice, and we "
        "talked for a long time about what to do next month."
    )


def reply_text(i: int) -> str:
    return (
        f"That sounds lovely. {THINGS[i % len(THINGS)].capitalize()} for {100 + 7 * i} yen is a good find. "
        f"Say hello to {PEOPLE[i % len(PEOPLE)]} from me, and tell me how next month's plan turns out."
    )


def run(exchanges: int, context: int) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="nexus-bench-compression-"))
    persona = PersonaStore(folder / "personas").create("Aria")
    persona.settings.model.context_size = context
    backend = LlamaCppBackend(bundled_model_path(), n_ctx=context)
    backend.ensure_ready()
    memory = MemoryStore(folder / "memory.db")
    session = ChatSession(persona, memory, backend, internal=backend)
    results = []
    prompt_build_s = []
    started = time.perf_counter()
    for i in range(exchanges):
        memory.messages.add(speaker="user", role="user", content=user_text(i))
        memory.messages.add(speaker=persona.slug, role="assistant", content=reply_text(i))
        t0 = time.perf_counter()
        session.preview_prompt(user_text(i + 1))  # as the next turn builds it: sets the room measured
        prompt_build_s.append(time.perf_counter() - t0)
        result = session.compress_if_due()
        if result is not None:
            results.append(
                {
                    "after_exchange": i + 1,
                    "covered": len(result.covered),
                    "seconds": round(result.seconds, 3),
                    "prompt_tokens": result.prompt_tokens,
                    "output_tokens": result.output_tokens,
                    "summary_tokens": result.summary.tokens,
                }
            )
    total_s = time.perf_counter() - started
    final = session.preview_prompt("What did we do last month?")
    summaries = Summaries(memory.db, memory.archive, memory.activity)
    last = summaries.current("main")
    report = {
        "exchanges": exchanges,
        "messages": exchanges * 2,
        "context": context,
        "model": backend.model_id,
        "compressions": results,
        "median_seconds": statistics.median(r["seconds"] for r in results) if results else None,
        "median_prompt_tokens": statistics.median(r["prompt_tokens"] for r in results) if results else None,
        "median_output_tokens": statistics.median(r["output_tokens"] for r in results) if results else None,
        "covered_total": len(summaries.covered_ids(last)) if last else 0,
        "final_sections": {s.name: s.tokens for s in final.sections if s.tokens},
        "final_summary": last.text if last else "",
        "total_s": round(total_s, 1),
    }
    memory.close()
    backend.close()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchanges", type=int, default=30)
    parser.add_argument("--context", type=int, default=2048)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    report = run(args.exchanges, args.context)
    for r in report["compressions"]:
        print(
            f"after exchange {r['after_exchange']:3d}: {r['covered']:3d} messages, {r['seconds']:6.2f} s, "
            f"read {r['prompt_tokens']:5d} tok, wrote {r['output_tokens']:4d}, "
            f"summary {r['summary_tokens']} tok"
        )
    print(
        f"{len(report['compressions'])} compressions; median {report['median_seconds']} s, "
        f"read {report['median_prompt_tokens']} tok, wrote {report['median_output_tokens']} tok; "
        f"{report['covered_total']} of {report['messages']} messages covered; total {report['total_s']} s"
    )
    print("final prompt sections:", report["final_sections"])
    print("final summary:", report["final_summary"])
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()

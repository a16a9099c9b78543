"""The fuzz bar of issue 23: 2,000 character cards, 300 TOML settings files (persona.toml and config.toml),
300 JSON Lines imports and 100 ChatGPT exports, each made from a real seed by the seeded mutator in
tests/core/fuzzing.py, go through the functions the CLI calls, in this process. Each one either imports
or is refused with our error type (nexus_ark.errors.NexusArkError, whose message the CLI prints with exit
2); any other exception is a failure, and so is any one input taking more than 10 s.

Every failure is listed with its case number and mutations: `_card_case(SEED, i)` (and the others) make
the same input again. NEXUS_ARK_FUZZ_SEED picks another seed to explore with; CI runs the fixed one.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from nexus_ark.app import NexusApp
from nexus_ark.cards_io import export_card, import_card
from nexus_ark.clock import FixedClock, stored_time
from nexus_ark.config import AppSettings, load_app_settings, save_toml_model
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.chatgpt_import import import_chatgpt
from nexus_ark.memory.importer import import_jsonl, on_store
from nexus_ark.memory.store import MemoryStore
from nexus_ark.personas.cards import build_v3, import_meta, parse_card, plan_persona, read_card_bytes
from nexus_ark.personas.model import PersonaSettings
from nexus_ark.personas.store import PersonaStore
from tests.cards_maker import v2_card, v3_card
from tests.core.fuzzing import Mutator, case_random, png_card, zipped

SEED = int(os.environ.get("NEXUS_ARK_FUZZ_SEED", "20260523"))
DATA = Path(__file__).resolve().parents[1] / "data"
LIMIT_S = 10.0
CARDS, TOMLS, JSONLS, CHATGPTS = 2_000, 300, 300, 100
FULL_IMPORT_EVERY = 50  # every 50th card that reads is also imported into a real data folder and exported
NOW = datetime(2026, 5, 23, 12, 0, tzinfo=UTC)

CARD_SEEDS: list[Any] = [
    v2_card(),
    v3_card(),
    *(
        json.loads((DATA / "cards" / n).read_text(encoding="utf-8"))
        for n in ("seraphina_v2.json", "shizuku_v3.json")
    ),
    {
        "name": "Old",
        "description": "a V1 card",
        "personality": "",
        "scenario": "",
        "first_mes": "Hi",
        "mes_example": "",
    },
]
JSONL_SEED = [
    {"id": f"l{i}", "speaker": speaker, "text": text, "timestamp": f"2026-01-0{1 + i // 3}T10:0{i % 10}:00"}
    for i, (speaker, text) in enumerate(
        [
            ("Mika", "My sister Keiko visits on Sunday."),
            ("aria", "Lovely! What will you cook?"),
            ("Mika", "Curry, she likes it spicy."),
            ("aria", "Then buy extra chilli."),
            ("Mika", "猫のミソが今朝また吐いた。"),
            ("aria", "心配ですね。病院に行きましょうか。"),
        ]
    )
]
CHATGPT_SEEDS = [json.loads((DATA / "chatgpt" / "conversations.json").read_text(encoding="utf-8"))]
CHATGPT_BYTES = [(DATA / "chatgpt" / n).read_bytes() for n in ("conversations.json", "malformed.json")]


class Outcomes:
    """What the runs came to: failures (a traceback or a slow run) with the case that made them."""

    def __init__(self) -> None:
        self.failures: list[str] = []
        self.accepted = self.refused = self.runs = 0
        self.slowest = (0.0, "")

    def run(self, label: str, done: list[str], action: Callable[..., object], *args: object) -> bool:
        self.runs += 1
        started = time.monotonic()
        ok = False
        try:
            action(*args)
            self.accepted += 1
            ok = True
        except NexusArkError as exc:
            self.refused += 1
            if not str(exc).strip():
                self.failures.append(f"{label} {done}: refused without a message")
        except BaseException as exc:  # anything else is the failure this test looks for
            if isinstance(exc, KeyboardInterrupt):
                raise
            where = traceback.extract_tb(exc.__traceback__)[-1]
            self.failures.append(
                f"{label} {done}: {type(exc).__name__}: {str(exc)[:160]} at {where.filename}:{where.lineno}"
            )
        took = time.monotonic() - started
        self.slowest = max(self.slowest, (took, label))
        if took > LIMIT_S:
            self.failures.append(f"{label} {done}: took {took:.1f} s (limit {LIMIT_S:.0f} s)")
        return ok

    def check(self, total: int) -> None:
        assert self.runs >= total
        assert self.failures == [], "\n".join(self.failures[:40])


# -- cards --------------------------------------------------------------------------------------------
def _card_case(seed: int, index: int) -> tuple[str, bytes, list[str]]:
    rnd = case_random(seed, "card", index)
    mutator = Mutator(rnd, "json")
    if rnd.random() < 0.1:  # a lorebook of thousands of entries, some of one name, some long
        card = v2_card()
        entry = {"keys": ["k"], "content": "c" * rnd.choice((10, 1_500)), "name": rnd.choice(("Same", None))}
        card["data"]["character_book"]["entries"] = [entry] * rnd.choice((1_000, 5_000, 10_000, 10_001))
        mutator.done.append(f"lorebook of {len(card['data']['character_book']['entries'])}")
        seed_value: Any = card
    else:
        seed_value = rnd.choice(CARD_SEEDS)
    blob = mutator.mutate(seed_value)
    if rnd.random() < 0.4:
        blob = png_card(rnd, blob, mutator.done)
        if rnd.random() < 0.3:
            blob = mutator.mutate_bytes(blob)
        return f"card{index}.png", blob, mutator.done
    return f"card{index}.json", blob, mutator.done


def _read_plan_and_export(name: str, blob: bytes) -> None:
    """What `persona import` does before it writes (read, check, plan, card.json's text) and what
    `persona export` makes of the card (build_v3, checked by our own reader)."""
    card = read_card_bytes(blob, name)
    plan = plan_persona(card)
    meta = import_meta(card, plan, "2026-05-23T12:00:00")
    json.dumps(card.raw, ensure_ascii=False, indent=2).encode("utf-8")
    json.dumps(meta).encode("utf-8")
    exported, _ = build_v3(
        raw=card.raw,
        meta=meta,
        name=plan.name,
        description=plan.description,
        soul=plan.soul,
        language=plan.language,
        entities={},
        now=0,
    )
    parse_card(exported, "exported.json")


def _import_and_export(app: NexusApp, path: Path) -> None:
    made = import_card(app, path)
    export_card(app, made.slug, path.with_name(f"{made.slug}-out.png"))


@pytest.mark.slow
def test_two_thousand_fuzzed_cards_import_or_are_refused_each_within_ten_seconds(tmp_path: Path) -> None:
    outcomes = Outcomes()
    readable: list[tuple[str, bytes, list[str]]] = []
    for i in range(CARDS):
        name, blob, done = _card_case(SEED, i)
        if outcomes.run(name, done, _read_plan_and_export, name, blob):
            readable.append((name, blob, done))
    # Every 50th readable card all the way: a persona folder, its memory, and an exported card.
    with NexusApp(tmp_path / "data", clock=FixedClock(NOW)) as app:
        for name, blob, done in readable[::FULL_IMPORT_EVERY]:
            path = tmp_path / name
            path.write_bytes(blob)

            outcomes.run(f"{name} (full import)", done, _import_and_export, app, path)
    outcomes.check(CARDS)
    assert outcomes.accepted > CARDS // 10 and outcomes.refused > CARDS // 10  # the mutator hits both


# -- TOML ---------------------------------------------------------------------------------------------
def _toml_seeds(tmp_path: Path) -> dict[str, Any]:
    import tomllib

    persona = PersonaSettings(name="Aria", description="A warm companion")  # every table, as written
    save_toml_model(tmp_path / "persona.toml", persona)
    save_toml_model(tmp_path / "config.toml", AppSettings(language="ja", user_name="Ken", font_size=12))
    return {
        n: tomllib.loads((tmp_path / f"{n}.toml").read_text(encoding="utf-8")) for n in ("persona", "config")
    }


def _toml_case(seed: int, index: int, seeds: dict[str, Any]) -> tuple[str, bytes, list[str]]:
    rnd = case_random(seed, "toml", index)
    which = "persona" if index % 2 == 0 else "config"
    mutator = Mutator(rnd, "toml")
    return which, mutator.mutate(seeds[which]), mutator.done


def _list_and_load(store: PersonaStore, slug: str) -> None:
    listed = {info.slug: info for info in store.list()}  # never raises: one broken persona is one
    assert slug in listed and listed["good"].error == ""
    store.load(slug)


@pytest.mark.slow
def test_three_hundred_fuzzed_settings_files_load_or_are_refused_each_within_ten_seconds(
    tmp_path: Path,
) -> None:
    seeds = _toml_seeds(tmp_path)
    outcomes = Outcomes()
    for i in range(TOMLS):
        which, blob, done = _toml_case(SEED, i, seeds)
        if which == "persona":
            root = tmp_path / f"personas{i}"  # with a good persona beside it: it must still be listed
            (root / "good").mkdir(parents=True)
            save_toml_model(root / "good" / "persona.toml", PersonaSettings(name="Good"))
            folder = root / f"p{i}"
            folder.mkdir(parents=True)
            (folder / "persona.md").write_text("# P\n", encoding="utf-8")
            (folder / "persona.toml").write_bytes(blob)
            outcomes.run(f"persona.toml {i}", done, _list_and_load, PersonaStore(root), f"p{i}")
        else:
            path = tmp_path / f"config{i}.toml"
            path.write_bytes(blob)
            outcomes.run(f"config.toml {i}", done, load_app_settings, path)
    outcomes.check(TOMLS)


# -- JSON Lines and ChatGPT exports --------------------------------------------------------------------
@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    opened = MemoryStore(tmp_path / "memory.db", FixedClock(NOW))
    try:
        yield opened
    finally:
        opened.close()


# Times Python can hold but a persona must never store (issue 33: a year-1 line broke every later turn), and
# seconds since 1970 that name them (ChatGPT's create_time).
OUT_OF_RANGE_TIMES = (
    "0001-01-01T00:00:00",
    "0001-01-01T00:00:00+05:00",
    "0001-01-01",
    "1899-12-31T23:59:59",
    "9999-12-31T23:59:59-05:00",
    "9999-12-31",
)
OUT_OF_RANGE_EPOCHS = (-62135596800.0, -62135596800.0 + 3600, 253402300799.0, -2208988801.0, 1e15)


def _jsonl_case(seed: int, index: int) -> tuple[bytes, list[str]]:
    rnd = case_random(seed, "jsonl", index)
    dates = case_random(seed, "jsonl-dates", index)  # apart, so the other mutations stay as they were
    mutator = Mutator(rnd, "json")
    lines = []
    for line in JSONL_SEED:
        value = {**line, "id": f"{index}-{line['id']}"}
        if dates.random() < 0.1:
            value["timestamp"] = dates.choice(OUT_OF_RANGE_TIMES)
            mutator.done.append(f"timestamp {value['timestamp']}")
        if rnd.random() < 0.4:
            for _ in range(rnd.randint(1, 2)):
                value = mutator.mutate_value(value)
        text = mutator.serialize(value)
        if rnd.random() < 0.1:
            text = mutator.mutate_text(text)
        lines.append(text.encode("utf-8", errors="surrogatepass"))
    blob = b"\n".join(lines) + b"\n"
    if rnd.random() < 0.3:
        blob = mutator.mutate_bytes(blob)
    return blob, mutator.done


@pytest.mark.slow
def test_three_hundred_fuzzed_jsonl_files_import_or_are_refused_each_within_ten_seconds(
    tmp_path: Path, store: MemoryStore
) -> None:
    outcomes = Outcomes()
    for i in range(JSONLS):
        blob, done = _jsonl_case(SEED, i)
        path = tmp_path / f"turns{i}.jsonl"
        path.write_bytes(blob)
        outcomes.run(
            f"turns{i}.jsonl",
            done,
            import_jsonl,
            path,
            on_store(store),
            {"aria"},
        )
    outcomes.check(JSONLS)
    assert store.db.execute("pragma integrity_check").fetchone()[0] == "ok"
    _usable_times_only(store)


def _chatgpt_case(seed: int, index: int) -> tuple[str, bytes, list[str]]:
    rnd = case_random(seed, "chatgpt", index)
    mutator = Mutator(rnd, "json")
    if rnd.random() < 0.15:
        blob = mutator.mutate_bytes(rnd.choice(CHATGPT_BYTES))
    else:
        conversations = json.loads(json.dumps(CHATGPT_SEEDS[0]))
        for conversation in conversations:  # ids of their own: each case imports anew
            conversation["conversation_id"] = (
                f"{index}-{conversation.get('conversation_id') or conversation.get('id')}"
            )
        if rnd.random() < 0.5:  # what a message says: the part that reaches memory
            conversation = rnd.choice(conversations)
            spoken = [n["message"] for n in conversation["mapping"].values() if n.get("message")]
            what, value = mutator.replacement()
            rnd.choice(spoken)["content"]["parts"] = [value]
            mutator.done.append(f"{what} as a message's part")
        dates = case_random(seed, "chatgpt-dates", index)  # apart, so the other mutations stay as they were
        if dates.random() < 0.3:
            conversation = dates.choice(conversations)
            spoken = [n["message"] for n in conversation["mapping"].values() if n.get("message")]
            target = dates.choice([conversation, *spoken])
            target["create_time"] = dates.choice(OUT_OF_RANGE_EPOCHS)
            mutator.done.append(f"create_time {target['create_time']}")
        blob = mutator.mutate(conversations)
    if rnd.random() < 0.1:
        mutator.done.append("zipped")
        return f"export{index}.zip", zipped("conversations.json", blob), mutator.done
    return f"conversations{index}.json", blob, mutator.done


def test_one_hundred_fuzzed_chatgpt_exports_import_or_are_refused_each_within_ten_seconds(
    tmp_path: Path, store: MemoryStore
) -> None:
    outcomes = Outcomes()
    for i in range(CHATGPTS):
        name, blob, done = _chatgpt_case(SEED, i)
        path = tmp_path / name
        path.write_bytes(blob)
        outcomes.run(
            name,
            done,
            import_chatgpt,
            path,
            on_store(store),
        )
    outcomes.check(CHATGPTS)
    assert store.db.execute("pragma integrity_check").fetchone()[0] == "ok"
    _usable_times_only(store)


def _usable_times_only(store: MemoryStore) -> None:
    """Every time the fuzzed imports stored is one a later turn can compute with, and the archive ranks."""
    stamps = [
        r[0] for r in store.db.execute("select created_at from messages union select created_at from items")
    ]
    assert stamps and [s for s in stamps if stored_time(s) is None] == []
    store.archive.search("sister Keiko tea", None, k=50, mode="fts")


# -- what the fuzzer found, each on its own --------------------------------------------------------------
def test_a_jsonl_line_with_a_lone_surrogate_imports_with_a_replacement_character(
    tmp_path: Path, store: MemoryStore
) -> None:
    """'\\ud800' is valid JSON but no UTF-8: SQLite's driver raised UnicodeEncodeError while writing the
    batch, so the import ended with a traceback and the batch was lost."""
    path = tmp_path / "turns.jsonl"
    lines = [
        {
            "id": "s1",
            "speaker": "Mika\ud800",
            "text": "before\udfffafter",
            "timestamp": "2026-01-01T10:00:00",
        },
        {"id": "s2", "speaker": "aria", "text": "The next line is kept.", "timestamp": "2026-01-01T10:00:05"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="ascii")
    report = import_jsonl(path, on_store(store), {"aria"})
    assert (report.imported, report.errors) == (2, [])
    rows = store.db.execute("select speaker, content from messages order by id").fetchall()
    assert rows == [("Mika\ufffd", "before\ufffdafter"), ("aria", "The next line is kept.")]


def test_a_chatgpt_message_with_a_lone_surrogate_imports_with_a_replacement_character(
    tmp_path: Path, store: MemoryStore
) -> None:
    conversations = json.loads(json.dumps(CHATGPT_SEEDS[0]))
    first = conversations[0]
    node = next(
        n for n in first["mapping"].values() if n["message"] and n["message"]["author"]["role"] == "user"
    )
    node["message"]["content"]["parts"] = ["tea\ud83d time"]
    first["title"] = "title \udc00"
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(conversations), encoding="ascii")
    report = import_chatgpt(path, on_store(store))
    assert report.errors == [] and report.conversations == len(conversations)
    texts = [r[0] for r in store.db.execute("select content from messages")]
    assert "tea\ufffd time" in texts

"""The trigram index without the neighbours' turns of Japanese text (issue 23; migration m020): a Japanese
question finds the turn it asks about above the turns beside it, whose context held its words; a database
from before is converted and then searches as a fresh one does; an item written without CJK is indexed as
before, with its neighbours' turns (an English archive searches as it did); an outside reader (the stdlib
sqlite3 module, SQLite 3.40, none of the app's functions) reads and writes the index's content view. The
real e5 model, real SQLite; the conversation was written for this test."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from nexus_ark.memory.archive import Archive
from nexus_ark.memory.conversation_index import Turn, index_turns
from nexus_ark.memory.db import connect
from nexus_ark.memory.migrations import migrations
from nexus_ark.memory.store import MemoryStore
from nexus_ark.providers.embedders import default_embedder

JAPANESE = [
    ("ゆい", "おはよう、今日は少し寒いね。"),
    ("アリア", "おはよう、ゆい。温かいお茶でも飲んでね。"),
    ("ゆい", "うん、ほうじ茶を入れたよ。"),
    ("アリア", "いいね。今日の予定は?"),
    ("ゆい", "午後から図書館で勉強するつもり。"),
    ("アリア", "がんばってね。何の勉強?"),
    ("ゆい", "統計の試験が来週あるの。"),
    ("アリア", "それは大変だね。応援してるよ。"),
    ("ゆい", "そういえば、昨日は駅前の新しいパン屋でメロンパンを買ったんだ。"),
    ("アリア", "駅前のパン屋さん、気になってた!どうだった?"),
    ("ゆい", "外はサクサクで、中はふわふわだったよ。パン屋の店長さんも優しかった。"),
    ("アリア", "また行きたくなるね。"),
    ("ゆい", "うん、今度は妹のはるかも連れて行く。"),
    ("アリア", "はるかちゃんも喜ぶと思うよ。"),
    ("ゆい", "夜は映画を見る予定なんだ。"),
    ("アリア", "どんな映画?"),
    ("ゆい", "古いアニメ映画。猫が出てくるやつ。"),
    ("アリア", "素敵だね。楽しんでね。"),
]
ENGLISH = [
    ("Yui", "My sister Haruka started working at a bookshop in Kyoto."),
    ("Aria", "That sounds lovely. Does she like it?"),
    ("Yui", "She does, though the paintings on the walls distract her."),
    ("Aria", "A bookshop with paintings, what a nice place to work."),
    ("Yui", "Miso threw up again this morning, so we went to the vet."),
    ("Aria", "Poor Miso. I hope the vet had good news."),
]
# (question, index in JAPANESE of the turn it asks about): before m020 the turn after it came first.
ASKED = [("パン屋に誰を連れて行くつもり?", 12), ("夜は何をする予定?", 14), ("統計の試験はいつ?", 6)]
QUERIES = [q for q, _ in ASKED] + [
    "駅前のパン屋で何を買ったの?",
    "Where does Haruka work?",
    "What was painted in the shop?",
    "Why did they go to the vet?",
    "はるかはどこで働いている?",
]
M020 = "m020_trigram_index_without_neighbours_of_cjk_text"


@pytest.fixture(scope="module")
def embedder():
    return default_embedder()


def _turns() -> list[Turn]:
    said = JAPANESE + ENGLISH + [("ゆい", "Haruka loves メロンパン too, she said so twice.")]
    return [
        Turn(speaker=who, text=text, created_at=f"2026-03-01T10:{i:02d}:00", source_id=f"t{i}")
        for i, (who, text) in enumerate(said)
    ]


def _found(archive: Archive, embedder) -> dict[tuple[str, str], list[int]]:
    return {
        (q, mode): [
            h.item_id for h in archive.search(q, embedder if mode == "hybrid" else None, k=10, mode=mode)
        ]
        for q in QUERIES
        for mode in ("hybrid", "fts")
    }


def _index(db) -> list[tuple]:
    """What the trigram index holds: each item's indexed sizes (tokens of text and of context)."""
    return db.execute("select id, sz from items_tri_docsize order by id").fetchall()


def test_a_japanese_question_finds_the_turn_it_asks_about_above_its_neighbours(
    tmp_path: Path, embedder
) -> None:
    store = MemoryStore(tmp_path / "memory.db")
    try:
        ids = index_turns(store.archive, _turns())
        store.archive.embed_pending(embedder)
        for question, asked in ASKED:
            hits = [h.item_id for h in store.archive.search(question, embedder, k=5)]
            assert hits[0] == ids[asked], f"{question}: {hits}, asked {ids[asked]}"
            # The keyword ranking alone: the neighbours come after it, if at all.
            keyword = [h.item_id for h in store.archive.search(question, None, k=10, mode="fts")]
            assert keyword[0] == ids[asked]
        # The turns beside a Japanese turn are not found by its words in the trigram index any more; an
        # English turn's neighbours still are (its context is kept).
        tri = "select rowid from items_tri where items_tri match ? order by rowid"
        assert [r[0] for r in store.db.execute(tri, ['"連れて"']).fetchall()] == [ids[12]]
        bookshop = [r[0] for r in store.db.execute(tri, ['"bookshop"']).fetchall()]
        assert bookshop == ids[len(JAPANESE) : len(JAPANESE) + 5]
    finally:
        store.close()


def test_an_upgraded_database_searches_as_a_fresh_one(tmp_path: Path, embedder) -> None:
    path = tmp_path / "memory.db"
    db = connect(path)
    migrations.apply(db, stop_before=M020)  # the schema as it shipped before
    archive = Archive(db)
    index_turns(archive, _turns())
    archive.embed_pending(embedder)
    before = _found(archive, embedder)
    indexed = _index(db)
    db.conn.close()

    fresh = MemoryStore(tmp_path / "fresh.db")
    store = MemoryStore(path)  # migrates to this version
    try:
        ids = index_turns(fresh.archive, _turns())
        fresh.archive.embed_pending(embedder)
        after = _found(store.archive, embedder)
        assert after == _found(fresh.archive, embedder)
        assert _index(store.db) == _index(fresh.db)
        assert after != before  # the Japanese questions moved
        # An item written without CJK is indexed as before, its neighbours' turns included (so an archive
        # without CJK, LoCoMo's, searches exactly as before); a Japanese one without them.
        english = set(ids[len(JAPANESE) : len(JAPANESE) + len(ENGLISH)])
        assert [row for row in _index(store.db) if row[0] in english] == [
            row for row in indexed if row[0] in english
        ]
        japanese = set(ids) - english
        assert not set(_index(store.db)) & {row for row in indexed if row[0] in japanese}
        store.db.execute("insert into items_tri(items_tri) values ('integrity-check')")
        assert store.db.execute("pragma integrity_check").fetchone()[0] == "ok"
    finally:
        fresh.close()
        store.close()

    # An outside reader: the stdlib sqlite3 module (no function of the app's) searches the index, and a
    # row it changes is indexed through the triggers as the app's own write would be.
    outside = sqlite3.connect(path)
    try:
        (item,) = outside.execute("select rowid from items_tri where items_tri match '\"連れて\"'").fetchone()
        outside.execute("update items set text = 'ゆい: 明日は海へ行く' where id = ?", [item])
        outside.commit()
        assert (
            outside.execute("select rowid from items_tri where items_tri match '\"連れて\"'").fetchall() == []
        )
        assert outside.execute(
            "select rowid from items_tri where items_tri match '\"海へ行\"'"
        ).fetchall() == [(item,)]
        outside.execute("insert into items_tri(items_tri) values ('integrity-check')")
    finally:
        outside.close()

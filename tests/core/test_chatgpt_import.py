"""Importing a ChatGPT data export: which messages of each conversation's tree become the persona's earlier
conversations, with which times and in which order; re-runs and a killed run; broken files named."""

from __future__ import annotations

import json
import threading
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from nexus_ark.agent.prompt import build_prompt
from nexus_ark.agent.prompt_inputs import gather_inputs
from nexus_ark.memory import chatgpt_stream, importer
from nexus_ark.memory.chatgpt_import import ExportUnreadable, import_chatgpt
from nexus_ark.memory.importer import on_store
from nexus_ark.memory.messages import DEFAULT_ROOM
from nexus_ark.memory.store import MemoryStore
from nexus_ark.personas.store import PersonaStore

DATA = Path(__file__).resolve().parent.parent / "data" / "chatgpt"
EXPORT = DATA / "conversations.json"
MALFORMED = DATA / "malformed.json"

# (speaker, role): ChatGPT's answers are ChatGPT's, never the persona's own words
USER, ARIA = ("user", "user"), ("ChatGPT", "assistant")
CAT_REPLY = "Happy twelfth birthday to Luna! Maine Coons are gentle giants."
CAT = [
    (*USER, "2024-05-10T09:00:10.000+00:00", "My cat Luna turned twelve today. She is a grey Maine Coon."),
    (
        *ARIA,
        "2024-05-10T09:00:50.000+00:00",
        "Happy twelfth birthday to Luna! Maine Coons are gentle giants.",
    ),
    # No create_time in the export: halfway between the turns around it.
    (*USER, "2024-05-10T09:01:20.000+00:00", "She gets tuna as a treat tonight."),
    (*ARIA, "2024-05-10T09:01:50.000+00:00", "Tuna it is. Give her a scratch from me."),
]
KYOTO = [
    (
        *USER,
        "2024-06-01T09:00:10.000+00:00",
        "[image]\nこの写真は伏見稲荷大社です。来月、姉の恵子と京都へ行きます。",
    ),
    (*ARIA, "2024-06-01T09:00:40.000+00:00", "素敵な写真ですね！千本鳥居は朝早く行くと空いています。"),
]
JOB = [
    (*USER, "2024-07-01T09:01:00.000+00:00", "I start my new job at the planetarium on Monday."),
    (*ARIA, "2024-07-01T09:01:20.000+00:00", "Congratulations! What will you do there?"),
    (*USER, "2024-07-01T09:01:40.000+00:00", "I will run the star shows for school classes."),
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    memory = MemoryStore(tmp_path / "memory.db")
    yield memory
    memory.close()


def _room(store: MemoryStore, room: str) -> list[tuple[str, str, str, str]]:
    rows = store.db.execute(
        "select speaker, role, created_at, content from messages where room = ? order by id", [room]
    )
    return [tuple(r) for r in rows]


def _source_counts(store: MemoryStore) -> tuple[dict[str, int], dict[str, int]]:
    messages = dict(store.db.execute("select source_id, count(*) from messages group by source_id"))
    items = dict(store.db.execute("select source_id, count(*) from items group by source_id"))
    return messages, items


def test_each_conversation_imports_the_branch_last_shown_in_order_with_its_times(store: MemoryStore) -> None:
    report = import_chatgpt(EXPORT, on_store(store))

    assert report.errors == []
    assert (report.imported, report.conversations, report.skipped_conversations) == (9, 3, 0)
    # The rejected regenerated reply (cat) and the first version of an edited question with its answer (job).
    assert report.other_branches == 3
    assert _room(store, "chatgpt:conv-cat-0001") == CAT
    assert _room(store, "chatgpt:conv-kyoto-0002") == KYOTO
    assert (
        _room(store, "chatgpt:conv-job-0003") == JOB
    )  # the conversation's "id" when conversation_id is absent
    everything = " ".join(r[0] for r in store.db.execute("select content from messages"))
    for left_out in ("cat facts", "sell tickets", "Selling tickets", "Osaka", "search(", "【0†"):
        assert left_out not in everything, f"{left_out!r}: another branch, a hidden message or a tool's"
    # The window shows the default room: years of another assistant's turns do not land there.
    assert store.messages.count(DEFAULT_ROOM) == 0
    first = store.messages.recent("chatgpt:conv-cat-0001")[0]
    assert first.source_id == "chatgpt:conv-cat-0001:c1-u1"
    assert first.meta == {"imported_from": "chatgpt", "conversation": "Luna's birthday"}


def test_imported_turns_are_indexed_with_their_neighbours_and_recalled(store: MemoryStore) -> None:
    import_chatgpt(EXPORT, on_store(store))

    hits = store.archive.search("planetarium", None, mode="fts")
    assert hits[0].source_id == "chatgpt:conv-job-0003:j-u1"
    hits = store.archive.search("伏見稲荷", None, mode="fts")
    assert hits[0].source_id == "chatgpt:conv-kyoto-0002:k-u1"
    # Context stays inside a conversation: the last turn about the cat has no neighbour from Kyoto.
    cat_last, kyoto_first = (
        json.loads(store.db.execute("select meta from items where source_id = ?", [s]).fetchone()[0])
        for s in ("chatgpt:conv-cat-0001:c1-a2", "chatgpt:conv-kyoto-0002:k-u1")
    )
    assert cat_last["neighbours"][1] is None and kyoto_first["neighbours"][0] is None


def test_a_second_run_imports_nothing_twice(store: MemoryStore) -> None:
    import_chatgpt(EXPORT, on_store(store))
    again = import_chatgpt(EXPORT, on_store(store))

    assert (again.imported, again.skipped_duplicates, again.errors) == (0, 9, [])
    messages, items = _source_counts(store)
    assert len(messages) == 9 and set(messages.values()) == {1}
    assert messages == items


def test_a_run_killed_midway_resumes_where_it_stopped(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importer, "BATCH", 2)
    real_index = importer.index_turns
    calls = 0

    def dies_on_the_third_batch(archive, turns):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        if calls == 3:
            raise KeyboardInterrupt  # as a kill would, between two batches' writes
        return real_index(archive, turns)

    monkeypatch.setattr(importer, "index_turns", dies_on_the_third_batch)
    with pytest.raises(KeyboardInterrupt):
        import_chatgpt(EXPORT, on_store(store))
    messages, items = _source_counts(store)
    assert 0 < len(messages) < 9 and messages.keys() == items.keys(), "a batch is all there or not at all"

    monkeypatch.setattr(importer, "index_turns", real_index)
    report = import_chatgpt(EXPORT, on_store(store))
    assert report.imported + report.skipped_duplicates == 9 and report.skipped_duplicates == len(messages)
    assert _room(store, "chatgpt:conv-cat-0001") == CAT and _room(store, "chatgpt:conv-job-0003") == JOB
    messages, items = _source_counts(store)
    assert len(messages) == 9 and set(messages.values()) == {1} and messages == items


def test_broken_conversations_are_named_and_the_good_ones_import(store: MemoryStore) -> None:
    report = import_chatgpt(MALFORMED, on_store(store))

    assert (report.imported, report.conversations, report.skipped_conversations) == (2, 2, 5)
    assert _room(store, "chatgpt:conv-good-a")[0][3] == "My favourite tea is genmaicha."
    assert _room(store, "chatgpt:conv-good-b")[0][3] == "I am learning the cello."
    expected = [
        ("conversation 2 ('Lost parent', id conv-lost-parent)", "parent 'p-gone', which is not in its"),
        ("conversation 3 ('Going round', id conv-cycle)", "cycle"),
        ("conversation 4 ('Nowhere', id conv-no-current)", "current_node 'n-missing' is not in its mapping"),
        ("conversation 5:", "not a conversation object"),
        ("conversation 6 ('No mapping', id conv-no-mapping)", "mapping: Field required"),
    ]
    assert len(report.errors) == len(expected)
    for error, (which, what) in zip(report.errors, expected, strict=True):
        assert error.startswith(f"{MALFORMED}: {which}") and what in error, error


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"", "empty"),
        (b"hello, not json", "does not start as JSON"),
        (b'{"title": "one conversation, not the list"}', "JSON object, not the list"),
        (b'[{"title": "caf\xe9"}]', "not UTF-8"),
        (b'[{"title": oops}]', "not JSON at character 12"),
    ],
)
def test_a_file_that_is_not_an_export_is_refused_whole_and_nothing_is_lost(
    store: MemoryStore, tmp_path: Path, content: bytes, said: str
) -> None:
    import_chatgpt(EXPORT, on_store(store))
    bad = tmp_path / "conversations.json"
    bad.write_bytes(content)

    with pytest.raises(ExportUnreadable) as caught:
        import_chatgpt(bad, on_store(store))
    assert str(bad) in str(caught.value) and said in str(caught.value)
    assert store.messages.count() == 9


def test_a_missing_file_is_named(store: MemoryStore, tmp_path: Path) -> None:
    with pytest.raises(ExportUnreadable, match=r"Cannot read .*nowhere\.json"):
        import_chatgpt(tmp_path / "nowhere.json", on_store(store))


def test_a_file_cut_short_keeps_the_conversations_before_the_cut(store: MemoryStore, tmp_path: Path) -> None:
    text = EXPORT.read_text(encoding="utf-8")
    cut = tmp_path / "conversations.json"
    cut.write_text(text[: text.index("New job") + 200], encoding="utf-8")  # inside the third conversation

    report = import_chatgpt(cut, on_store(store))

    assert (report.imported, report.conversations) == (6, 2)
    assert len(report.errors) == 1
    assert (
        report.errors[0].startswith(f"{cut}: the file breaks after conversation 2")
        and "cut short" in report.errors[0]
    )
    # Run again on the whole export: the first two are there already, the third is added.
    again = import_chatgpt(EXPORT, on_store(store))
    assert (again.imported, again.skipped_duplicates) == (3, 6)


def test_small_read_chunks_split_characters_and_values_and_change_nothing(
    store: MemoryStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 7 characters at a time: every conversation, string and multi-byte Japanese character is cut by a
    # read somewhere, as the reads of a large export cut its text.
    monkeypatch.setattr(chatgpt_stream, "CHUNK", 7)
    report = import_chatgpt(EXPORT, on_store(store))
    assert (report.imported, report.errors) == (9, [])
    assert _room(store, "chatgpt:conv-kyoto-0002") == KYOTO


def test_the_exports_zip_is_read_directly(store: MemoryStore, tmp_path: Path) -> None:
    export = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(export, "w") as zf:
        zf.writestr("chat.html", "<html></html>")
        zf.write(EXPORT, "conversations.json")
    report = import_chatgpt(export, on_store(store))
    assert (report.imported, report.errors) == (9, [])

    empty = tmp_path / "other.zip"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("notes.txt", "nothing here")
    with pytest.raises(ExportUnreadable, match=r"no conversations\.json"):
        import_chatgpt(empty, on_store(store))


def test_messages_without_times_keep_conversation_order(store: MemoryStore, tmp_path: Path) -> None:
    def node(key: str, parent: str | None, role: str, text: str, when: float | None) -> dict:
        message = {"id": key, "author": {"role": role}, "create_time": when, "recipient": "all",
                   "content": {"content_type": "text", "parts": [text]}}  # fmt: skip
        return {"id": key, "message": message, "parent": parent, "children": []}

    conversation = {
        "title": "no times",
        "create_time": 1700000000.0,
        "update_time": None,
        "conversation_id": "conv-times",
        "current_node": "d",
        "mapping": {
            "a": node("a", None, "user", "first", None),
            "b": node("b", "a", "assistant", "second", None),
            "c": node("c", "b", "user", "third", 1700000090.0),
            "d": node("d", "c", "assistant", "fourth", None),
        },
    }
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps([conversation]), encoding="utf-8")

    import_chatgpt(export, on_store(store))

    rows = _room(store, "chatgpt:conv-times")
    assert [r[3] for r in rows] == ["first", "second", "third", "fourth"]
    assert [r[2][11:19] for r in rows] == ["22:13:50", "22:14:20", "22:14:50", "22:14:51"]


def test_progress_follows_the_file_and_a_stopped_import_is_finished_by_a_second_run(
    store: MemoryStore, tmp_path: Path
) -> None:
    stop = threading.Event()
    seen: list[tuple[int, int, int]] = []

    def progress(done: int, size: int, conversations: int) -> None:
        seen.append((done, size, conversations))
        stop.set()  # the person presses Stop while the first conversation is written

    first = import_chatgpt(EXPORT, on_store(store), progress=progress, stop=stop)
    assert first.stopped and first.conversations == 1 and first.imported == len(CAT)
    assert seen == [(EXPORT.stat().st_size, EXPORT.stat().st_size, 1)]  # the small file is read in one go

    rest = import_chatgpt(EXPORT, on_store(store))
    assert not rest.stopped and (rest.imported, rest.skipped_duplicates) == (9 - len(CAT), len(CAT))

    zipped = tmp_path / "export.zip"
    with zipfile.ZipFile(zipped, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.write(EXPORT, "conversations.json")
    sizes: list[int] = []
    import_chatgpt(zipped, on_store(store), progress=lambda d, s, c: sizes.append(s))
    assert sizes == [EXPORT.stat().st_size] * 3  # the size of conversations.json, not of the zip


def test_chatgpts_answers_are_recalled_as_chatgpts_words_not_the_personas(
    store: MemoryStore, tmp_path: Path
) -> None:
    """They were stored as the persona's ("aria: Happy twelfth birthday to Luna!"), so the persona
    remembered saying what another assistant said (issue 23, defect 20)."""
    import_chatgpt(EXPORT, on_store(store))
    text = "What did you say about Luna's birthday?"
    hits = store.archive.search("Luna birthday Maine Coons", None, mode="fts")
    context = gather_inputs(
        store, text, [], hits, lookback_days=0, now=datetime(2026, 1, 1, tzinfo=UTC), recall_k=5
    )
    assert f"ChatGPT: {CAT_REPLY}" in context.recalled, context.recalled
    persona = PersonaStore(tmp_path / "personas").create("Aria")
    prompt = build_prompt(persona, [], text, context).messages[-2].content  # the notes before the text
    assert f"ChatGPT: {CAT_REPLY}" in prompt
    assert "aria: " not in prompt.lower()
    speakers = {r[0] for r in store.db.execute("select speaker from messages where role = 'assistant'")}
    assert speakers == {"ChatGPT"}


def test_an_import_made_before_the_fix_is_moved_out_of_the_personas_mouth_when_memory_opens(
    tmp_path: Path,
) -> None:
    """Memories imported when ChatGPT's answers were stored as the persona's ("aria: …") read, after the
    m017 step, exactly as a fresh import reads: the persona no longer remembers saying them."""
    path = tmp_path / "memory.db"
    memory = MemoryStore(path)
    import_chatgpt(EXPORT, on_store(memory))
    columns = "speaker, text, context, embed_text, embed_hash"
    fresh = memory.db.execute(f"select {columns} from items order by id").fetchall()
    fresh_messages = memory.db.execute("select speaker, role, content from messages order by id").fetchall()
    with memory.db.atomic():  # as the import wrote it before the fix, and m017 not applied yet
        memory.db.execute("update messages set speaker = 'aria' where speaker = 'ChatGPT'")
        for item_id, text, context, embed_text in memory.db.execute(
            "select id, text, context, embed_text from items"
        ).fetchall():
            memory.db.execute(
                "update items set speaker = case speaker when 'ChatGPT' then 'aria' else speaker end, "
                "text = ?, context = ?, embed_text = ? where id = ?",
                [
                    text.replace("ChatGPT: ", "aria: "),
                    context.replace("ChatGPT: ", "aria: ") if context else context,
                    embed_text.replace("ChatGPT: ", "aria: ") if embed_text else embed_text,
                    item_id,
                ],
            )
        memory.db.execute("delete from _sqlite_migrations where name = 'm017_chatgpt_answers_are_chatgpts'")
    assert "aria: " + CAT_REPLY in [r[0] for r in memory.db.execute("select text from items")]
    memory.close()
    reopened = MemoryStore(path)  # the owner migrates
    try:
        assert reopened.db.execute(f"select {columns} from items order by id").fetchall() == fresh
        assert (
            reopened.db.execute("select speaker, role, content from messages order by id").fetchall()
            == fresh_messages
        )
        hits = reopened.archive.search("Luna birthday Maine Coon", None, k=3)
        assert any(h.text == "ChatGPT: " + CAT_REPLY for h in hits)
    finally:
        reopened.close()

"""The activity timeline: every kind recorded and found by time and kind, short entries, append-only,
memory writes recorded with the write, forgotten words gone from the timeline."""

from __future__ import annotations

import ast
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

import nexus_ark
from nexus_ark.agent.memory_tools import MemoryTools
from nexus_ark.clock import FixedClock
from nexus_ark.memory.activity import KINDS, NOTICE_KEY, SUMMARY_CHARS, ActivityLog, clip
from nexus_ark.memory.archive import NewItem
from nexus_ark.memory.components import Episode, Goal, Insight, OpenQuestion
from nexus_ark.memory.db import connect
from nexus_ark.memory.migrations import migrations
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.labels import label_word
from nexus_ark.notices import Joined, Notice, notice

START = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def memory(tmp_path: Path, clock: FixedClock):
    store = MemoryStore(tmp_path / "memory.db", clock)
    yield store
    store.close()


def test_every_kind_is_recorded_and_found_by_time_and_kind(memory: MemoryStore, clock: FixedClock) -> None:
    log = memory.activity
    user = memory.messages.add(speaker="Mika", role="user", content="I got the job!")
    log.message(user, "Mika", "I got the job!", role="user")
    log.emotion("joy", 1.0, 0.91, message_id=user, snippet="I got the job!")
    clock.advance(60)
    log.tool_call(
        "search_memory", {"query": "job interview"}, "[item 3] interview on Monday", message_id=user
    )
    memory.components.set_notepad("Congratulate Mika again tomorrow.")
    clock.advance(3600)
    log.compression("Mika talked about the interview.", [1, 2, 3, 4])
    log.imported("conversations.jsonl: 12 messages", source="jsonl", count=12)
    log.error("the model stopped answering", message_id=user)
    log.append("future_kind", "a later kind needs no schema change", data={"level": 1})

    entries = log.query()
    assert [e.kind for e in entries] == [
        "message",
        "emotion",
        "tool_call",
        "memory_write",
        "compression",
        "import",
        "error",
        "future_kind",
    ]
    assert "future_kind" not in KINDS and {e.kind for e in entries} <= {*KINDS, "future_kind"}
    assert entries[0].summary == "Mika: I got the job!" and entries[0].message_id == user
    assert entries[1].data == {"label": "joy", "value": 1.0, "confidence": 0.91}
    assert entries[2].data is not None and entries[2].data["name"] == "search_memory"
    assert "interview on Monday" in entries[2].summary
    assert entries[3].summary == "notepad: Congratulate Mika again tomorrow."

    assert [e.kind for e in log.query(kinds=["emotion", "error"])] == ["emotion", "error"]
    # Times are inclusive; a time without a zone would be local, these name theirs.
    assert [e.kind for e in log.query(until="2026-11-20T09:00:00+00:00")] == ["message", "emotion"]
    late = log.query(since="2026-11-20T10:00:00Z")
    assert [e.kind for e in late] == ["compression", "import", "error", "future_kind"]
    assert [e.kind for e in log.query(since="2026-11-20T19:00:00+09:00", kinds=["import"])] == ["import"]
    # A limit keeps the newest, still read oldest first.
    assert [e.kind for e in log.query(limit=2)] == ["error", "future_kind"]
    assert all(e.time.endswith("+00:00") for e in entries)


def _written_kinds() -> set[str]:
    """The kinds the core's writers pass, read from the source: every `<...>activity.append(kind, ...)` and
    every ActivityLog helper's `self.append(kind, ...)`."""
    found: set[str] = set()
    for path in Path(nexus_ark.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [(node, False) for node in ast.walk(tree)]
        calls += [
            (node, True)
            for cls in ast.walk(tree)
            if isinstance(cls, ast.ClassDef) and cls.name == "ActivityLog"
            for node in ast.walk(cls)
        ]
        for node, in_log in calls:
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr != "append":
                continue
            receiver = node.func.value
            to_log = (isinstance(receiver, ast.Attribute) and receiver.attr == "activity") or (
                isinstance(receiver, ast.Name)
                and (receiver.id == "activity" or (in_log and receiver.id == "self"))
            )
            if not to_log:
                continue
            kind = node.args[0] if node.args else None
            assert isinstance(kind, ast.Constant) and isinstance(kind.value, str), (
                f"{path}:{node.lineno}: an activity kind that is not a literal cannot be checked here"
            )
            found.add(kind.value)
    return found


def test_kinds_names_every_kind_the_core_writes() -> None:
    """Readers (the activity window's labels, the CLI's typo warning) trust KINDS: a writer with a new kind
    must add it there, and a kind no writer uses any more must go."""
    written = _written_kinds()
    assert {"message", "import", "dream", "autonomy"} <= written  # the scan sees helpers and direct writes
    assert sorted(written) == sorted(KINDS)
    assert len(set(KINDS)) == len(KINDS)


def test_entries_are_short_whatever_was_said(memory: MemoryStore) -> None:
    huge = "Once upon a time\n" + "word " * 200_000  # about 1 MB
    memory.activity.message(1, "Mika", huge, role="user")
    memory.activity.tool_call("write_entity", {"name": "Mika", "text": huge}, huge)
    for entry in memory.activity.query():
        assert len(entry.summary) <= SUMMARY_CHARS and entry.summary.endswith("…")
        assert "\n" not in entry.summary
        assert len(json.dumps(entry.data)) < 2_000
    assert memory.activity.query()[0].summary.startswith("Mika: Once upon a time word word")
    size = memory.db.execute(
        "select sum(length(summary) + length(coalesce(data, ''))) from activity"
    ).fetchone()
    assert size[0] < 5_000


def test_a_short_summary_is_kept_whole(memory: MemoryStore) -> None:
    memory.activity.message(1, "aria", "おはよう、ミカ。今日は晴れだね。", role="assistant")
    assert memory.activity.query()[0].summary == "aria: おはよう、ミカ。今日は晴れだね。"


def test_the_timeline_has_no_way_to_edit_or_delete(memory: MemoryStore) -> None:
    public = {name for name in dir(ActivityLog) if not name.startswith("_")}
    assert not {n for n in public if any(w in n for w in ("delete", "remove", "update", "edit", "clear"))}


def test_a_failed_entry_never_fails_the_caller(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory.db")
    store.close()
    reader = MemoryStore(tmp_path / "memory.db", role="reader")
    try:
        assert reader.activity.append("error", "cannot be written on a read-only connection") is None
        assert reader.activity.append("Not A Kind!", "refused") is None
    finally:
        reader.close()


def test_memory_writes_are_recorded_with_the_write(memory: MemoryStore) -> None:
    c = memory.components
    c.set_core_memory("I am Aria. Mika is my person.")
    c.write_entity("Luna", "Mika's cat, a grey tabby.")
    c.put_episode(Episode(date="2026-11-19", summary="Talked about Luna's vet visit."))
    c.add_insight(Insight(trigger_topic="vets", insight="Mika worries.", strategy="Reassure.", log_entry="."))
    goal = c.put_goal(Goal(term="short", goal="Learn Mika's favourite tea"))
    c.put_goal(goal.model_copy(update={"status": "completed"}))
    question = c.add_question(OpenQuestion(question="What is Luna's birthday?"))
    c.resolve_question(question)
    summaries = [e.summary for e in memory.activity.query(kinds=["memory_write"])]
    assert summaries == [
        "core memory: I am Aria. Mika is my person.",
        "entity: Luna: Mika's cat, a grey tabby.",
        "episode: 2026-11-19: Talked about Luna's vet visit.",
        "insight: vets: Mika worries.",
        "goal: short-term added (active): Learn Mika's favourite tea",
        "goal: short-term updated (completed): Learn Mika's favourite tea",
        "open question: asked: What is Luna's birthday?",
        "open question: resolved: What is Luna's birthday?",
    ]


def test_a_write_that_fails_leaves_no_entry(memory: MemoryStore) -> None:
    # The entry rides the write's transaction: a write rolled back is not in the timeline either.
    with pytest.raises(RuntimeError), memory.db.atomic():
        memory.components.set_notepad("never saved")
        raise RuntimeError("the disk went away")
    assert memory.components.notepad() == ""
    assert memory.activity.query() == []


def test_the_persona_archiving_a_memory_is_recorded(memory: MemoryStore) -> None:
    memory.components.write_entity("Bob", "An old colleague.")
    item_id = memory.db.execute("select id from items where kind = 'entity'").fetchone()[0]
    tools = MemoryTools(memory, None)
    tools.archive_memory({"target": f"item {item_id}", "reason": "Bob moved away"})
    last = memory.activity.query()[-1]
    assert last.kind == "memory_write"
    assert last.summary == f"archive: item {item_id} (entity) moved aside: Bob moved away"


def test_knowledge_documents_are_recorded_as_imports(memory: MemoryStore, tmp_path: Path) -> None:
    doc = tmp_path / "recipes.md"
    doc.write_text("# Curry\n\nMild, for Keiko.", encoding="utf-8")
    bad = tmp_path / "empty.pdf"
    bad.write_bytes(b"not a pdf")
    added = memory.knowledge.add(doc)
    memory.knowledge.add(bad)

    class NoVectors:  # ingestion indexes first; vectors are not what this test is about
        name = "none"

    memory.archive.embed_pending = lambda *a, **k: 0  # type: ignore[method-assign]
    memory.knowledge.ingest_pending(NoVectors())  # type: ignore[arg-type]
    memory.knowledge.remove(added.id)
    entries = [(e.kind, e.summary) for e in memory.activity.query(kinds=["import", "error", "memory_write"])]
    assert entries[:2] == [
        ("import", "document recipes.md added to the knowledge base"),
        ("import", "document empty.pdf added to the knowledge base"),
    ]
    assert entries[2] == ("import", "document recipes indexed: 1 chunks")
    assert entries[3][0] == "error" and entries[3][1].startswith("document empty could not be read")
    assert entries[4] == ("memory_write", "knowledge: document recipes removed")


def test_forgetting_removes_the_words_from_the_timeline(memory: MemoryStore) -> None:
    """A person who forgets a memory expects its words gone: the entries of a forgotten message (by its
    message id) and of a forgotten entity (by its item) are blanked; their time and kind stay."""
    secret = "My PIN is 4721."
    kept = memory.messages.add(speaker="Mika", role="user", content="Good morning!")
    said = memory.messages.add(speaker="Mika", role="user", content=secret)
    memory.activity.message(kept, "Mika", "Good morning!", role="user")
    memory.activity.message(said, "Mika", secret, role="user")
    memory.activity.emotion("neutral", 0.0, 0.5, message_id=said, snippet=secret)
    message_item = memory.archive.add(NewItem(kind="message", text=secret, source_id=f"msg:{said}"))
    memory.components.write_entity("PIN", secret)
    entity_item = memory.db.execute("select item_id from entities where name = 'PIN'").fetchone()[0]

    assert memory.forget([message_item, entity_item]) == 2

    entries = memory.activity.query()
    assert "4721" not in json.dumps([e.model_dump() for e in entries], ensure_ascii=False)
    assert [e.kind for e in entries] == ["message", "message", "emotion", "memory_write"]
    assert entries[0].summary == "Mika: Good morning!"  # what was not forgotten stays
    assert [e.summary for e in entries[1:]] == ["(forgotten)"] * 3
    assert [e.data for e in entries[1:]] == [{"redacted": True}] * 3


def test_existing_databases_get_the_timeline(tmp_path: Path) -> None:
    """A memory.db from before the timeline gains it when its owner opens it; its messages are kept."""
    path = tmp_path / "memory.db"
    db = connect(path)
    migrations.apply(db, stop_before="m006_activity")
    db.execute("insert into messages (speaker, role, content, created_at) values ('Mika', 'user', 'hi', 'x')")
    assert "activity" not in db.table_names()
    db.close()
    store = MemoryStore(path)
    try:
        assert store.messages.count() == 1
        store.activity.message(1, "Mika", "hi", role="user")
        assert [e.summary for e in store.activity.query()] == ["Mika: hi"]
    finally:
        store.close()


def test_pages_go_back_in_time_by_key_with_filters(memory: MemoryStore, clock: FixedClock) -> None:
    """What the window's timeline pages through: newest first, no entry skipped or repeated at a page
    boundary (even among entries of the same millisecond), and entries appended meanwhile never shift it."""
    log = memory.activity
    for i in range(7):
        log.append("message", f"line {i}")
        if i % 2:
            log.append("error", f"failed {i}: 100% of_it")  # same time as the message before it
        clock.advance(60)
    everything = list(reversed(log.query()))  # newest first
    assert len(everything) == 10

    seen, before = [], None
    while True:
        page = log.page(before=before, limit=3)
        if not page:
            break
        seen.extend(page)
        before = (page[-1].time, page[-1].id)
    assert [e.id for e in seen] == [e.id for e in everything]

    first = log.page(limit=3)
    log.append("message", "late arrival")
    second = log.page(before=(first[-1].time, first[-1].id), limit=3)
    assert [e.id for e in second] == [e.id for e in everything[3:6]]
    newer = log.page(after=(first[0].time, first[0].id))
    assert [e.summary for e in newer] == ["late arrival"]

    errors = log.page(kinds=["error"])
    assert [e.summary for e in errors] == [
        "failed 5: 100% of_it",
        "failed 3: 100% of_it",
        "failed 1: 100% of_it",
    ]
    assert log.count(kinds=["error"]) == 3
    assert [e.summary for e in log.page(text="LINE 6")] == ["line 6"]  # case does not matter
    assert log.count(text="100%") == 3 and log.count(text="0%_") == 0  # % and _ are plain characters
    assert log.count(text="of_it") == 3
    since = START.replace(minute=4)
    assert [e.summary for e in log.page(since=since)] == [
        "late arrival",
        "line 6",
        "failed 5: 100% of_it",
        "line 5",
        "line 4",
    ]
    assert log.count(since=since) == 5 and log.count() == 11


def test_a_summary_given_as_a_notice_keeps_its_template_beside_the_english(memory: MemoryStore) -> None:
    """The CLI and search read the English summary as before; a window gets the sentence's template and
    values back (our words inside it as notices too), and the data the writer gave, nothing more."""
    log = memory.activity
    quiet = notice("quiet hours ({hours})", hours="22:00-07:00")
    log.append(
        "heartbeat", notice("heartbeat: nothing to do ({reason})", reason=quiet), data={"reason": quiet}
    )
    rambling = "the model said:\n" + "on and on " * 10_000  # a model's words, 100 kB of them
    log.append("autonomy", notice("a message was not sent: {why}", why=rambling))

    heartbeat, refused = log.query()
    assert heartbeat.summary == "heartbeat: nothing to do (quiet hours (22:00-07:00))"
    assert heartbeat.data == {"reason": "quiet hours (22:00-07:00)"}  # as the CLI prints it, no notice in it
    shown = heartbeat.translatable_summary
    assert isinstance(shown, Notice) and shown == heartbeat.summary
    assert shown.template == "heartbeat: nothing to do ({reason})"
    assert shown.values["reason"].template == "quiet hours ({hours})"
    assert shown.values["reason"].values == {"hours": "22:00-07:00"}

    # Someone else's words inside stay plain text, one clipped line as in the summary: the row stays small.
    why = refused.translatable_summary.values["why"]
    assert not isinstance(why, Notice) and why.startswith("the model said: on and on")
    assert "\n" not in why and len(why) <= SUMMARY_CHARS and why.endswith("…")
    assert refused.data is None  # the writer gave no data: the kept notice does not show as data
    assert refused.summary == clip(refused.translatable_summary)
    size = memory.db.execute("select length(data) from activity where id = ?", [refused.id]).fetchone()[0]
    assert size < 2 * SUMMARY_CHARS + 200


def test_entries_with_nothing_to_translate_read_as_stored(memory: MemoryStore) -> None:
    """A message between two people keeps no notice (no word of ours in it); an entry an older version
    wrote, or one whose kept notice is damaged, shows the English it holds."""
    log = memory.activity
    log.message(1, "Mika", "Good morning!", role="user")
    memory.db.execute(
        "insert into activity (time, kind, summary, data) values (?,?,?,?)",
        ["2026-11-20T09:00:00+00:00", "dream", "level 1 dream of 2026-11-19 began", '{"level": 1}'],
    )
    memory.db.execute(
        "insert into activity (time, kind, summary, data) values (?,?,?,?)",
        [
            "2026-11-20T09:00:00+00:00",
            "heartbeat",
            "heartbeat: nothing to do",
            json.dumps({NOTICE_KEY: "{bad"}),
        ],
    )
    message, older, damaged = sorted(log.query(), key=lambda e: e.id)  # in the order written
    assert message.summary_notice is None and message.translatable_summary == "Mika: Good morning!"
    assert not isinstance(message.translatable_summary, Notice | Joined)
    assert older.translatable_summary == "level 1 dream of 2026-11-19 began" and older.data == {"level": 1}
    assert damaged.translatable_summary == "heartbeat: nothing to do" and damaged.data is None


def test_memory_writes_name_their_component_in_words_a_window_translates(memory: MemoryStore) -> None:
    c = memory.components
    c.set_core_memory("I am Aria.")
    c.set_notepad("")
    c.write_entity("Luna", "Mika's cat.")
    c.put_goal(Goal(term="short", goal="Learn Mika's favourite tea"))
    c.add_question(OpenQuestion(question="What is Luna's birthday?"))

    entries = memory.activity.query(kinds=["memory_write"])
    assert [e.summary for e in entries] == [
        "core memory: I am Aria.",
        "notepad: (emptied)",
        "entity: Luna: Mika's cat.",
        "goal: short-term added (active): Learn Mika's favourite tea",
        "open question: asked: What is Luna's birthday?",
    ]
    shown = [e.translatable_summary for e in entries]
    assert all(isinstance(s, Joined) for s in shown)
    assert [s.parts[0].template for s in shown] == [
        "core memory",
        "notepad",
        "entity",
        "goal",
        "open question",
    ]
    assert shown[0].parts[1] == "I am Aria." and not isinstance(
        shown[0].parts[1], Notice
    )  # the persona's words
    assert shown[1].parts[1].template == "(emptied)"
    goal = shown[3].parts[1]
    assert goal.template == "{term} added ({status}): {goal}"
    assert (goal.values["term"].template, goal.values["status"].template) == ("short-term", "active")
    assert shown[4].parts[1].template == "asked: {question}"


def test_forgetting_removes_the_words_from_the_kept_notice_too(memory: MemoryStore) -> None:
    """The notice kept beside a summary holds the person's words as well: forgetting them blanks it with
    the rest of the entry (it lives in `data`, which the schema's triggers replace)."""
    secret = "My PIN is 4721."
    said = memory.messages.add(speaker="user", role="user", content=secret)
    memory.activity.message(said, notice("user"), secret, role="user")  # as a turn records it
    memory.activity.emotion(label_word("neutral"), 0.0, 0.5, message_id=said, snippet=secret)
    message_item = memory.archive.add(NewItem(kind="message", text=secret, source_id=f"msg:{said}"))
    memory.components.write_entity("PIN", secret)
    entity_item = memory.db.execute("select item_id from entities where name = 'PIN'").fetchone()[0]
    kept = [row[0] for row in memory.db.execute("select data from activity order by id")]
    assert all("4721" in json.dumps(json.loads(data)[NOTICE_KEY], ensure_ascii=False) for data in kept)

    assert memory.forget([message_item, entity_item]) == 2

    every_column = memory.db.execute("select * from activity").fetchall()
    assert "4721" not in json.dumps(every_column, ensure_ascii=False)
    rows = memory.db.execute("select summary, data from activity order by id").fetchall()
    assert rows == [("(forgotten)", '{"redacted": true}')] * 3
    for entry in memory.activity.query():
        assert entry.summary_notice is None and entry.translatable_summary == "(forgotten)"


def test_a_summary_said_by_a_notice_is_stored_once_and_read_and_found_as_before(memory: MemoryStore) -> None:
    """The English of a summary kept as a notice is made from the notice when read (issue 23, defect 13:
    the same words were stored twice), and a text filter still finds its words, its English sentence and,
    through `templates`, the sentence in the person's language."""
    said = 'Mika said "the 100% plan" worked'
    memory.activity.message(1, notice("user"), said, role="user")
    memory.activity.compression("kept the gist", [3, 4])
    memory.activity.append("error", "a plain line, no notice")
    stored = memory.db.execute("select summary from activity order by id").fetchall()
    assert stored == [("",), ("",), ("a plain line, no notice",)]
    entries = memory.activity.query()
    assert [e.summary for e in entries] == [
        f"user: {said}",
        "messages 3–4 summarised: kept the gist",
        "a plain line, no notice",
    ]
    assert isinstance(entries[1].translatable_summary, Notice)
    assert [e.summary for e in memory.activity.page(text='"the 100% plan"')] == [f"user: {said}"]
    assert [e.kind for e in memory.activity.page(text="SUMMARISED: kept")] == ["compression"]
    assert memory.activity.count(text="no notice") == 1 and memory.activity.count(text="gist worked") == 0
    japanese = [
        e.kind
        for e in memory.activity.page(
            text="要約", templates=["messages {first}–{last} summarised: {summary}"]
        )
    ]
    assert japanese == ["compression"]


def test_a_kept_notice_is_stored_as_json_not_as_a_string_of_json_and_older_entries_read_as_before(
    memory: MemoryStore,
) -> None:
    """The notice was a string of JSON inside the data's JSON, every quote escaped again (~40 KB of a
    90-day timeline); it is now a JSON value. An entry written the old way reads, translates and is found
    by its template as before."""
    memory.activity.compression("kept the gist", [3, 4])
    (data,) = memory.db.execute("select data from activity").fetchone()
    assert '\\"' not in data and json.loads(data)[NOTICE_KEY]["template"].startswith("messages {first}")
    old = {"template": "messages {first}–{last} summarised: {summary}", "values": {"first": 1, "last": 2}}
    old["values"]["summary"] = "an older gist"
    memory.db.execute(
        "insert into activity (time, kind, summary, data) values (?, 'compression', '', ?)",
        [
            "2026-11-19T09:00:00+00:00",
            json.dumps({"covered": 2, NOTICE_KEY: json.dumps(old, ensure_ascii=False)}, ensure_ascii=False),
        ],
    )
    entries = memory.activity.query()
    assert sorted(e.summary for e in entries) == [
        "messages 1–2 summarised: an older gist",
        "messages 3–4 summarised: kept the gist",
    ]
    assert all(isinstance(e.translatable_summary, Notice) for e in entries)
    found = memory.activity.page(text="要約", templates=["messages {first}–{last} summarised: {summary}"])
    assert len(found) == 2
    assert memory.activity.count(text="older gist") == 1

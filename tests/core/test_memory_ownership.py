"""Who owns a persona's memory: the app opens it once (migrations, recovery); everything else attaches.
Locks are per persona: one persona's slow model load never stalls another's turn."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.errors import DatabaseError
from nexus_ark.memory.db import database_error, sqlite
from nexus_ark.memory.store import MemoryStore
from nexus_ark.model_config import ModelConfig
from nexus_ark.providers.scripted import ScriptedBackend


def _scripted(config: ModelConfig) -> ScriptedBackend:
    return ScriptedBackend(["Hello."], model_id=config.spec)


def test_other_connections_leave_a_streaming_reply_alone_and_the_next_start_recovers_it(
    data_dir: Path,
) -> None:
    app = NexusApp(data_dir, backend_factory=_scripted).open()
    owner = app.personas.memory("aria")
    reply = owner.messages.add(speaker="aria", role="assistant", content="Once upon", status="streaming")
    # A memory window, a background embedding pass and a search each open their own connection.
    for read_only in (False, True):
        other = app.personas.open_memory("aria", read_only=read_only)
        assert other.recovered == 0
        other.close()
    assert app.personas.memory("aria") is owner  # opened once per process
    assert owner.messages.get(reply).status == "streaming"
    app.close()  # "crash": the reply was never finished

    again = NexusApp(data_dir, backend_factory=_scripted).open()
    try:
        recovered = again.personas.memory("aria")
        assert recovered.recovered == 1
        message = recovered.messages.get(reply)
        assert message.status == "interrupted" and message.content == "Once upon"
    finally:
        again.close()


def test_a_read_only_connection_refuses_writes_with_a_message_about_permissions(data_dir: Path) -> None:
    app = NexusApp(data_dir, backend_factory=_scripted).open()
    try:
        reader = app.personas.open_memory("aria", read_only=True)
        with pytest.raises(sqlite.Error) as caught:
            reader.messages.add(speaker="user", role="user", content="hello")
        reader.close()
        problem = database_error(caught.value, reader.path)
        assert "read-only" in problem.message and "writable" in problem.hint
        assert app.personas.memory("aria").messages.count() == 0
    finally:
        app.close()


def test_a_peer_refuses_a_database_its_owner_has_not_brought_up_to_date(tmp_path: Path) -> None:
    with pytest.raises(DatabaseError, match="not been brought up to date"):
        MemoryStore(tmp_path / "fresh.db", role="peer")


def test_a_damaged_database_is_named_damaged_not_a_full_disk(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    MemoryStore(path).close()
    path.write_bytes(b"this is not SQLite at all" * 200)
    with pytest.raises(DatabaseError) as caught:
        MemoryStore(path)
    assert "damaged" in caught.value.message and "backups" in caught.value.hint
    assert "disk space" not in str(caught.value)


class _SlowToLoad(ScriptedBackend):
    def __init__(self, release: threading.Event) -> None:
        super().__init__(["I took my time."], model_id="slow")
        self._release = release

    def ensure_ready(self) -> None:
        assert self._release.wait(30), "the test never released the slow model"


def test_one_personas_model_load_does_not_stall_another_personas_turn(data_dir: Path) -> None:
    release = threading.Event()

    def factory(config: ModelConfig) -> ScriptedBackend:
        return _SlowToLoad(release) if "slow" in config.spec else _scripted(config)

    app = NexusApp(data_dir, backend_factory=factory).open()
    try:
        app.personas.save_models("aria", {"spec": "ollama:slow"}, None)
        loading = threading.Thread(target=app.personas.session, args=("aria",), daemon=True)
        loading.start()
        deadline = time.monotonic() + 10
        while not app.pool._backends and time.monotonic() < deadline:  # aria's load has begun
            time.sleep(0.01)
        assert app.pool._backends, "aria's model load never started"

        done = threading.Event()
        replies: list[str] = []

        def hikari_turn() -> None:
            turn = app.personas.runtime("hikari").send("こんにちは")
            replies.extend(item.text for item in turn if hasattr(item, "status"))
            app.models.embedder()
            done.set()

        threading.Thread(target=hikari_turn, daemon=True).start()
        answered = done.wait(20)
        still_loading = loading.is_alive()
        release.set()
        loading.join(10)
        assert answered and replies == ["Hello."], "hikari waited for aria's model to load"
        assert still_loading, "aria's load finished early, so the test proved nothing"
    finally:
        release.set()
        app.close()


def _newest_backup_messages(data_dir: Path) -> list[str]:
    newest = sorted((data_dir / "backups" / "aria").glob("memory-*.db"))[-1]
    copy = MemoryStore(newest, role="reader")
    try:
        return [m.content for m in copy.messages.recent()]
    finally:
        copy.close()


def test_the_newest_backup_holds_the_latest_days_conversation(data_dir: Path) -> None:
    clock = FixedClock(datetime(2026, 11, 20, 9, 0, tzinfo=UTC))
    for text in ("Day one: I planted tulips.", "Day two: the tulips came up!"):
        app = NexusApp(data_dir, backend_factory=_scripted, clock=clock).open()
        try:
            runtime = app.personas.runtime("aria")
            list(runtime.send(text))
            assert runtime.queue.wait_idle(60)  # the after-turn work (a backup among it) is done
            # Already after the day's first turn, not only at close.
            assert text in _newest_backup_messages(data_dir)
        finally:
            app.close()
        assert text in _newest_backup_messages(data_dir)
        clock.advance(24 * 3600)
    assert len(list((data_dir / "backups" / "aria").glob("memory-*.db"))) == 2  # one a day, rotating


def test_each_message_of_yours_gets_its_emotion_logged_with_the_message(data_dir: Path) -> None:
    app = NexusApp(data_dir, backend_factory=_scripted).open()
    try:
        runtime = app.personas.runtime("aria")
        result = [item for item in runtime.send("My grandmother died last night. I can't stop crying.")][-1]
        assert runtime.queue.wait_idle(60)
        memory = app.personas.memory("aria")
        logged = memory.components.emotions()
        assert len(logged) == 1 and logged[0].message_id == result.user_message_id
        assert logged[0].value < 0 and logged[0].emotion in ("sadness", "fear", "anxious", "stressed")
        entry = memory.activity.query(kinds=["emotion"])[0]
        assert entry.message_id == result.user_message_id and entry.data["label"] == logged[0].emotion
    finally:
        app.close()


def test_a_write_that_reads_first_waits_for_another_connections_write_instead_of_failing(
    tmp_path: Path,
) -> None:
    """An import's batch reads, then writes, while the persona's runtime writes too: with a deferred BEGIN
    the importer got "database is locked" at once (seen importing a ChatGPT export from the window)."""
    owner = MemoryStore(tmp_path / "memory.db")
    peer = MemoryStore(tmp_path / "memory.db", role="peer")
    other_wrote = threading.Event()
    try:
        with peer.db.atomic():
            peer.db.execute("select count(*) from messages").fetchone()

            def write_meanwhile() -> None:
                owner.messages.add(speaker="user", role="user", content="said while the import read")
                other_wrote.set()

            writer = threading.Thread(target=write_meanwhile)
            writer.start()
            time.sleep(0.2)  # the owner waits for the peer's write lock (it does not fail either)
            peer.messages.add(speaker="user", role="user", content="imported")
        writer.join(10)
        assert other_wrote.is_set()
        assert sorted(m.content for m in owner.messages.recent()) == [
            "imported",
            "said while the import read",
        ]
    finally:
        peer.close()
        owner.close()

"""app.admin: the app's settings and the personas' administration: which persona the window opens on, the
person's name, the editor's saves, ChatGPT imports and documents, duplicates, deletion and backups."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from functools import partial
from pathlib import Path

from nexus_ark.app.host import AppRoot
from nexus_ark.app.models import Models
from nexus_ark.app.personas import Personas
from nexus_ark.app.souls import Souls
from nexus_ark.config import AppSettings
from nexus_ark.errors import NexusArkError, PersonaError
from nexus_ark.memory.backups import SAFETY_PREFIX, BackupInfo, copy_database, list_backups
from nexus_ark.memory.chatgpt_import import ChatGPTImportReport, import_chatgpt
from nexus_ark.memory.chatgpt_import import Progress as ChatGPTProgress
from nexus_ark.memory.importer import WriteGate, record_import
from nexus_ark.memory.knowledge import KnowledgeDocument
from nexus_ark.memory.knowledge import Progress as DocumentProgress
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.emotion import EmotionDetector
from nexus_ark.mind.imported import read_feelings
from nexus_ark.notices import notice
from nexus_ark.personas.model import MEMORY_FILE, PersonaInfo
from nexus_ark.personas.store import Persona
from nexus_ark.providers.embedders import Embedder

log = logging.getLogger(__name__)


def _read_feelings(write: WriteGate, detector: EmotionDetector) -> None:
    """Emotion readings for imported history (the drives and the emotion plot read them); an import
    succeeds without them when the detector cannot load."""
    try:
        read_feelings(write, detector)
    except NexusArkError as exc:
        log.warning("the imported messages' feelings were not read: %s", exc)


def _add_document(store: MemoryStore, path: Path) -> None:
    store.knowledge.add(path)


def _ingest_one_batch(store: MemoryStore, embedder: Embedder, progress: DocumentProgress | None) -> bool:
    store.knowledge.ingest_pending(embedder, progress=progress, batches=1)
    return store.knowledge.unfinished()


class Admin:
    """Given the root's shared objects and the parts it acts through: the personas (their folders and
    runtimes), the models (the embedder and emotion reader an import uses) and the souls (the editor's
    save of persona.md is a version in the soul's history)."""

    def __init__(self, root: AppRoot, personas: Personas, models: Models, souls: Souls) -> None:
        self._root = root
        self._personas = personas
        self._models = models
        self._souls = souls

    def default_persona(self, language: str = "") -> str:
        """The persona the window opens on: the last one used; before any, the first usable one that speaks
        the person's `language` (a window in Japanese first opens on ひかり, not Aria); else the first."""
        usable = [p for p in self._personas.all() if p.ok]
        if not usable:
            raise PersonaError(
                notice("There is no usable persona in {folder}.", folder=str(self._root.layout.personas_dir)),
                hint=notice("Create one with `nexus-ark persona create NAME`."),
            )
        slugs = [p.slug for p in usable]
        if self._root.state.last_persona in slugs:
            return self._root.state.last_persona
        return next((p.slug for p in usable if language and p.language == language), slugs[0])

    def remember_persona(self, slug: str) -> None:
        if self._root.state.last_persona != slug:
            self._root.state_store.update(last_persona=slug)

    def set_language(self, language: str) -> None:
        self.update_settings(language=language)

    def update_settings(self, **changes: object) -> AppSettings:
        """Change app settings and save config.toml, through its one owner (config.SettingsStore: one
        lock, atomic write, change events). Validated as a whole first: a bad value raises ConfigError
        naming it and nothing changes. The settings object stays the same one (callers that hold it see
        the change). It writes a file: not on the UI thread."""
        return self._root.settings_store.update(**changes)

    def set_user_name(self, name: str, persona: str | None = None) -> None:
        """What the personas call the person: for the whole app (config.toml), or one persona's own name
        for them (persona.toml user_name; "" falls back to the app's). Open personas use it from their
        next turn. Refused in words when it is not one line. It writes a file: not on the UI thread."""
        if persona is not None:
            self.save_persona(persona, settings={"user_name": name.strip() or None})
            return
        self.update_settings(user_name=name)  # the root tells the open personas

    def save_persona(
        self, slug: str, *, soul: str | None = None, settings: Mapping[str, object] | None = None
    ) -> Persona:
        """Save what the persona editor changed: settings first (validated; a bad value writes nothing,
        the soul included), then persona.md. The persona's next turn uses them."""
        if settings:
            self._personas.store.save_settings(slug, settings)
        if soul is not None:  # a version in the soul's history, written by the persona's owner
            self._souls.save(slug, soul)
        self._personas.reload(slug)  # a turn running on the old settings finishes as it was
        return self._personas.load(slug)

    def set_avatar(self, slug: str, png: bytes) -> Path:
        return self._personas.store.set_avatar(slug, png)

    def import_chatgpt_export(
        self,
        slug: str,
        path: Path,
        *,
        progress: ChatGPTProgress | None = None,
        stop: threading.Event | None = None,
    ) -> ChatGPTImportReport:
        """A ChatGPT data export into the persona's earlier conversations, then vectors for them in the
        background. The file is read and parsed on the caller's thread; each batch is written by the
        persona's owner on its queue, between the person's turns. Blocks: off the UI thread."""
        write = self._personas.writer(slug, "import ChatGPT export")
        report = import_chatgpt(path, write, progress=progress, stop=stop)
        write(lambda store: record_import(store.activity, report, path, "chatgpt"))
        if report.imported:
            _read_feelings(write, self._models.emotions)
            try:
                # Vectors for every memory without one: background steps on the persona's queue, resumed
                # at the next start when the app closes first.
                self._personas.runtime(slug).embed_backlog(self._models.embedder())
            except NexusArkError as exc:  # keyword search finds them now; vectors at the next start
                log.warning("imported conversations not embedded now: %s", exc)
        return report

    def add_documents(
        self,
        slug: str,
        paths: list[Path],
        *,
        progress: DocumentProgress | None = None,
        cancel: threading.Event | None = None,
    ) -> list[KnowledgeDocument]:
        """Documents into the persona's knowledge base (none: finish what an earlier import left), written
        by the persona's owner one batch of chunks per queue step, so a turn sent meanwhile waits one batch
        at most. A cancel stops after the batch; adding again continues. Blocks: off the UI thread."""
        write = self._personas.writer(slug, "add documents")
        for path in paths:
            write(partial(_add_document, path=path))
        embedder = self._models.embedder()
        while not (cancel is not None and cancel.is_set()):
            if not write(lambda store: _ingest_one_batch(store, embedder, progress)):
                break
        return write(lambda store: store.knowledge.documents())

    def duplicate_persona(self, slug: str, name: str) -> PersonaInfo:
        """A new persona with a copy of this one's folder and memory (taken with SQLite's backup API, so a
        persona in use is copied consistently)."""
        source = self._personas.load(slug)
        copy = self._personas.store.duplicate(slug, name)
        try:
            if source.memory_path.exists():
                copy_database(source.memory_path, copy.memory_path)
        except NexusArkError:
            self._personas.store.remove(copy.slug)
            raise
        return next(p for p in self._personas.all() if p.slug == copy.slug)

    def delete_persona(self, slug: str) -> Path:
        """Delete a persona's folder after keeping a whole copy of it (memory included) in
        backups/<slug>/deleted-<time>/. Returns that copy's folder."""
        with self._personas.lock(slug):
            self._personas.release(slug)
            kept = self._unused(self._root.layout.backups_dir / slug / f"deleted-{self._stamp()}")
            self._personas.store.copy_files(slug, kept)
            memory_path = self._root.layout.personas_dir / slug / MEMORY_FILE
            if memory_path.exists():
                copy_database(memory_path, kept / MEMORY_FILE)
            self._personas.store.remove(slug)
        if self._root.state.last_persona == slug:
            self._root.state_store.update(last_persona="")
        return kept

    def list_backups(self, slug: str) -> list[BackupInfo]:
        """The persona's memory backups, newest first (reads each: off the UI thread)."""
        return list_backups(self._root.layout.backups_dir / slug)

    def restore_backup(self, slug: str, backup: Path) -> Path | None:
        """Put a backup's content into the persona's memory.db, keeping the memory as it is now in
        backups/<slug>/before-restore-<time>.db first (returned; None when there was no memory yet).

        The persona's runtime is closed around the copy (its queued work finishes first) and opens again
        on the next use, so a backup from an older version is migrated. Blocks: off the UI thread."""
        persona = self._personas.load(slug)
        folder = self._root.layout.backups_dir / slug
        if not any(b.path == backup and b.messages is not None for b in list_backups(folder)):
            raise NexusArkError(
                notice(
                    "{path} is not a readable memory backup of {name}.",
                    path=str(backup),
                    name=persona.settings.name,
                )
            )
        with self._personas.lock(slug):
            # Closing the runtime may rotate the daily backups (one may be the chosen one): copy it aside.
            chosen = self._unused(folder / f"restoring-{self._stamp()}.tmp")
            copy_database(backup, chosen)
            try:
                self._personas.release(slug)
                safety = None
                if persona.memory_path.exists():
                    safety = self._unused(folder / f"{SAFETY_PREFIX}{self._stamp()}.db")
                    copy_database(persona.memory_path, safety)
                copy_database(chosen, persona.memory_path)
            finally:
                chosen.unlink(missing_ok=True)
        return safety

    def _stamp(self) -> str:
        return self._root.clock.now().strftime("%Y%m%d-%H%M%S")

    @staticmethod
    def _unused(path: Path) -> Path:
        """`path`, or the same name with -2, -3… before its suffix when it is taken (two in one second)."""
        candidate, n = path, 2
        while candidate.exists():
            candidate, n = path.with_name(f"{path.stem}-{n}{path.suffix}"), n + 1
        return candidate

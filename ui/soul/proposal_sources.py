"""What a soul proposal drew on and the section it would change, read from the persona's memory and files
(plain data, read on a worker), and how a source reads in its line of the review window."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from nexus_ark.app import NexusApp
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.store import MemoryStore
from nexus_ark.soul import sections
from ui.util.i18n import tr
from ui.util.memory_kinds import memory_kind

SNIPPET = 160  # characters of a source shown in its line (the whole text is its tooltip)


@dataclass(frozen=True)
class Source:
    """One thing the persona drew on, as read from its memory (plain data: made on a worker)."""

    ref: str  # "msg:12", "item:7"
    found: bool
    created_at: str = ""
    speaker: str = ""  # a message's speaker and role
    role: str = ""
    kind: str = ""  # an item's kind
    text: str = ""


def read_sources(app: NexusApp, slug: str, refs: list[str]) -> list[Source]:
    """The proposal's sources from a read-only connection to the persona's memory. Blocks: on a worker."""
    store = app.personas.open_memory(slug)
    try:
        return [_read_source(store, ref) for ref in refs]
    finally:
        store.close()


def _read_source(store: MemoryStore, ref: str) -> Source:
    """A message ("msg:12") or a memory ("item:7"); one forgotten since, or a ref of another kind, is not
    found."""
    what, _, raw = ref.partition(":")
    try:
        number = int(raw)
    except ValueError:
        return Source(ref, False)
    if what == "msg":
        try:
            message = store.messages.get(number)
        except NexusArkError:  # forgotten since
            return Source(ref, False)
        return Source(ref, True, message.created_at, message.speaker, message.role, text=message.content)
    if what == "item":
        item = store.archive.get(number)
        if item is None:
            return Source(ref, False)
        created, kind, text = (str(item.get(key) or "") for key in ("created_at", "kind", "text"))
        return Source(ref, True, created, kind=kind, text=text)
    return Source(ref, False)


def section_now(app: NexusApp, slug: str, heading: str) -> str | None:
    """The section as persona.md says it now ("" when it has none; None: the file could not be read).
    Reads the persona's files: on a worker."""
    try:
        soul = app.personas.load(slug).soul
    except NexusArkError:
        return None
    found = sections.find(soul, heading)
    return found.content if found is not None else ""


def local_time(stamp: str) -> str:
    try:
        return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return stamp


def snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET else flat[: SNIPPET - 1].rstrip() + "…"


def source_line(source: Source, slug: str, name: str, names: dict[str, str]) -> str:
    """A source's line: when, who said it (you, the persona `name`, or another persona by `names`) or which
    kind of memory it is, and the start of its text."""
    if not source.found:
        return tr("{ref}: no longer in memory", ref=source.ref)
    when = local_time(source.created_at)
    if source.kind:  # a memory
        return f"{when} · {memory_kind(source.kind)}: {snippet(source.text)}"
    if source.role == "user":
        who = tr("You")
    elif source.speaker in (slug, "assistant"):
        who = name
    else:
        who = names.get(source.speaker, source.speaker)
    return f"{when} · {who}: {snippet(source.text)}"

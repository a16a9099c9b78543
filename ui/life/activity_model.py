"""The activity timeline's table model, its reader, and what it shows of an entry: kinds, summaries, details,
local times.

The model fetches lazily (canFetchMore/fetchMore), a page at a time, through the reader on the window's
lane."""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor

from nexus_ark.app import NexusApp
from nexus_ark.memory.activity import ActivityEntry, ActivityLog, clip
from nexus_ark.memory.store import MemoryStore
from ui.util import theme
from ui.util.i18n import N_, tr, tr_notice
from ui.util.readers import ReadOnlyMemory

T = TypeVar("T")
PAGE = 200  # entries a fetch reads: a few screens, a millisecond of SQLite


# Every kind the core writes (nexus_ark.memory.activity.KINDS), in that order; a later version's kinds show
# as they are stored.
KIND_LABELS = {
    "message": N_("Message"),
    "emotion": N_("Emotion"),
    "tool_call": N_("Tool call"),
    "memory_write": N_("Memory write"),
    "compression": N_("Compression"),
    "import": N_("Import"),
    "error": N_("Error"),
    "drives": N_("Drives"),
    "dream": N_("Dream"),
    "heartbeat": N_("Heartbeat"),
    "autonomy": N_("Autonomy"),
    "event": N_("Scheduled event"),
    "soul": N_("Soul"),
}


SINCE_CHOICES = (
    ("all", N_("All time")),
    ("hour", N_("Last hour")),
    ("today", N_("Today")),
    ("week", N_("Last 7 days")),
    ("month", N_("Last 30 days")),
)


COLUMNS = (N_("Time"), N_("Kind"), N_("Summary"))


ENTRY_ROLE = Qt.ItemDataRole.UserRole


def kind_label(kind: str) -> str:
    """A kind in the person's language; kinds written by later versions show as they are stored."""
    return tr(KIND_LABELS[kind]) if kind in KIND_LABELS else kind


def summary_text(entry: ActivityEntry) -> str:
    """An entry's summary in the person's language, one line as the timeline keeps it: translated when its
    writer kept the sentence's template (older entries show the English they hold)."""
    shown = entry.translatable_summary
    return shown if shown is entry.summary else clip(tr_notice(shown))


def error_colour() -> str:
    """Errors in red that reads on the theme drawn now (the light theme's deep red is lost on a dark one)."""
    return theme.colour("error").name()


def local_time(stored: str) -> str:
    """A stored UTC time as the person's clock shows it."""
    return datetime.fromisoformat(stored).astimezone().strftime("%Y-%m-%d %H:%M:%S")


@dataclass(frozen=True)
class Filters:
    """What the person asked for, fixed when a query is asked (the widgets may change while it runs)."""

    kind: str | None = None
    since: datetime | None = None
    text: str = ""
    templates: tuple[str, ...] = ()  # our sentences that say `text` in the language shown (kept in English)

    def query(self) -> dict[str, Any]:
        return {
            "since": self.since,
            "kinds": [self.kind] if self.kind else None,
            "text": self.text,
            "templates": self.templates,
        }


@dataclass
class Found:
    """One answer from the worker thread: a page of entries and what the filters match in all (and, from
    a reload, the persona's name as its folder says now)."""

    entries: list[ActivityEntry]
    total: int
    kinds: list[str]
    name: str | None = None


class TimelineReader(ReadOnlyMemory):
    """The window's read-only connection (ui/util/readers.py), which also reads the persona's name and
    where its memory is when it opens."""

    def __init__(self, app: NexusApp, slug: str) -> None:
        super().__init__(app, slug)
        self.name: str | None = None  # the persona's name, read with the persona when the file is opened
        self.path = app.personas.store.root / slug  # named in errors; the database file once it is known

    def open(self, slug: str) -> MemoryStore:
        persona = self.app.personas.load(slug)
        self.name, self.path = persona.settings.name, persona.memory_path
        return super().open(slug)

    def activity(self, query: Callable[[ActivityLog], T]) -> T:
        return self.read(lambda store: query(store.activity))


class ActivityModel(QAbstractTableModel):
    """The entries shown, newest first. It never reads the database: fetchMore asks the window for the
    next page (`more_wanted`), and the page arrives later through `append`."""

    more_wanted = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.entries: list[ActivityEntry] = []
        self._times: list[str] = []
        # Entry id -> its summary in the language shown, made when first asked for.
        self._summaries: dict[int, str] = {}
        self.has_more = False
        self.fetching = False

    # -- what the view asks ---------------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.entries)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid():
            return None
        entry = self.entries[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 2:
                return self.summary(entry)
            return (self._times[index.row()], kind_label(entry.kind))[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.summary(entry) if column == 2 else None
        if role == Qt.ItemDataRole.ForegroundRole and entry.kind == "error":
            return QBrush(QColor(error_colour()))
        if role == ENTRY_ROLE:
            return entry
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return tr(COLUMNS[section])
        return None

    def canFetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> bool:
        return not parent.isValid() and self.has_more and not self.fetching

    def fetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> None:
        if self.canFetchMore(parent):
            self.fetching = True  # until `append` (or a reset) says the page is in
            self.more_wanted.emit()

    def summary(self, entry: ActivityEntry) -> str:
        """The entry's summary as the person reads it (translated once per language, not at every paint)."""
        shown = self._summaries.get(entry.id)
        if shown is None:
            shown = self._summaries[entry.id] = summary_text(entry)
        return shown

    # -- what the window tells it ---------------------------------------------------------------------
    def retranslate(self) -> None:
        """The language changed: the kind and summary columns are shown again in the new one."""
        self._summaries.clear()
        if self.entries:
            self.dataChanged.emit(self.index(0, 1), self.index(len(self.entries) - 1, 2))

    def last_key(self) -> tuple[str, int] | None:
        return (self.entries[-1].time, self.entries[-1].id) if self.entries else None

    def first_key(self) -> tuple[str, int] | None:
        return (self.entries[0].time, self.entries[0].id) if self.entries else None

    def reset(self, entries: list[ActivityEntry], has_more: bool) -> None:
        self.beginResetModel()
        self.entries = list(entries)
        self._times = [local_time(e.time) for e in entries]
        self._summaries.clear()
        self.has_more, self.fetching = has_more, False
        self.endResetModel()

    def append(self, entries: list[ActivityEntry], has_more: bool) -> None:
        """Older entries, below the ones shown."""
        if entries:
            start = len(self.entries)
            self.beginInsertRows(QModelIndex(), start, start + len(entries) - 1)
            self.entries.extend(entries)
            self._times.extend(local_time(e.time) for e in entries)
            self.endInsertRows()
        self.has_more, self.fetching = has_more, False

    def prepend(self, entries: list[ActivityEntry]) -> None:
        """Newer entries, above the ones shown (selection and scroll position stay on their rows)."""
        if entries:
            self.beginInsertRows(QModelIndex(), 0, len(entries) - 1)
            self.entries[:0] = entries
            self._times[:0] = [local_time(e.time) for e in entries]
            self.endInsertRows()


def details_html(entry: ActivityEntry) -> str:
    """An entry's every field, as a small two-column table."""
    when = datetime.fromisoformat(entry.time).astimezone()
    rows: list[tuple[str, str]] = [
        (tr("Time"), f"{when.strftime('%Y-%m-%d %H:%M:%S')} ({when.strftime('%Z') or when.strftime('%z')})"),
        (tr("Kind"), f"{kind_label(entry.kind)} ({entry.kind})" if entry.kind in KIND_LABELS else entry.kind),
        (tr("Summary"), summary_text(entry)),
    ]
    if entry.message_id is not None:
        rows.append((tr("Message id"), str(entry.message_id)))
    rows.append((tr("Entry id"), str(entry.id)))
    for key, value in (entry.data or {}).items():
        rows.append(
            (key, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1))
        )
    muted = theme.colour("muted").name()
    cells = "".join(
        f"<tr><td style='padding:2px 14px 2px 0;color:{muted};vertical-align:top'>"
        f"{html.escape(name)}</td>"
        f"<td style='padding:2px 0;vertical-align:top;white-space:pre-wrap'>{html.escape(value)}</td></tr>"
        for name, value in rows
    )
    return f"<table cellspacing='0'>{cells}</table>"

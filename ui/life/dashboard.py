"""The introspection dashboard: what moves a persona and what its dreams wrote, shown to the person.

Drives (bars against their thresholds, the dominant one, what each comes from, the narrative) with their
history, open questions, the person's emotions over time, and the memory dreams write: episodes, people
and things, goals, the dream diary. The person may resolve or delete questions, correct what the persona
knows about someone, and add, edit, complete or abandon goals.

Everything is read on the window's lane (ui/util/tasks.py): the drives through
`app.personas.drives(record=False)`, the rest through a read-only connection of the window's own
(ui/util/readers.py); the person's changes go through the persona's runtime from the same lane, in order,
and the window reads again after each. It reads again whenever the core says this persona's mind moved (a
turn, drives recomputed, a dream, an edit elsewhere). Closing never waits: the lane closes the connection
itself once idle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.app import NexusApp
from nexus_ark.memory.store import MemoryStore
from ui.life.dashboard_data import Snapshot, read_snapshot
from ui.life.dashboard_drives import DrivesPanel
from ui.life.dashboard_goals import GoalsPanel
from ui.life.dashboard_memory import DiaryPanel, EntitiesPanel, EpisodesPanel
from ui.life.dashboard_plots import DriveHistoryPlot, EmotionPlot
from ui.life.dashboard_questions import QuestionsPanel
from ui.util import theme
from ui.util.core_events import CoreEvents
from ui.util.i18n import N_, tr
from ui.util.readers import ReadOnlyMemory
from ui.util.tasks import SerialWorker, run_in_background

# The dream's stages (nexus_ark/dreaming/stages.py) as the progress line names them.
DREAM_STAGES = {
    "insight": N_("insight"),
    "entities": N_("people and things"),
    "episode": N_("episode"),
    "questions": N_("open questions"),
    "week": N_("the week"),
    "short_goals": N_("short-term goals"),
    "values": N_("values"),
    "long_goals": N_("long-term goals"),
    "consolidate": N_("consolidation"),
}


class DashboardWindow(QDialog):
    refreshed = Signal()  # after each read of the database is shown (by every part, once all are built)
    model_changed = Signal(str)  # the persona (slug) was put on another model from here

    def __init__(
        self, app: NexusApp, slug: str, parent: QWidget | None = None, name: str | None = None
    ) -> None:
        """name: the persona's name when the caller knows it; the slug stands in until the worker's first
        read. Reads nothing here: a persona that cannot be opened shows why in the status line."""
        super().__init__(parent)
        self.app, self.slug = app, slug
        self.persona_name = name or slug
        self.snapshot: Snapshot | None = None
        # Changes go through the persona's runtime (app.personas.change_memory), the one writer of its memory.
        self._memory = ReadOnlyMemory(app, slug)
        self.worker = SerialWorker(f"dashboard-{slug}")
        self._closing = False
        self._loading = False
        self._stale = False  # something changed while a read was under way: read once more after it
        self._dream_status = ""  # a dream under way (this window's or the scheduler's)
        self._notice = ""  # how the last dream went, until the next turn
        self._dreaming = False
        self._dream_cancel = threading.Event()

        self._build_tabs()
        self._still_to_build = [self._build_history, self._draw_history, self._build_emotions]
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addLayout(self._build_buttons())
        self.resize(1000, 720)

        self.core_events = CoreEvents(app.events, slug, parent=self)
        self.core_events.happened.connect(self._on_core_event)
        self.retranslate()
        self.refresh()
        QTimer.singleShot(0, self, self._build_next)

    # -- building ---------------------------------------------------------------------------------
    def _build_tabs(self) -> None:
        """A tab per part; the plots' places are kept empty until they are built (_build_next)."""
        self.drives = DrivesPanel(self.persona_name)
        # The two plots (pyqtgraph) are built after the window shows, each in a turn of the main loop of
        # its own: built here with the rest, opening the window stopped the main loop for 50-80 ms.
        self.drive_history: DriveHistoryPlot | None = None
        self.emotions: EmotionPlot | None = None
        self.history_title = QLabel()
        self.history_title.setStyleSheet("font-weight:600")
        drives_tab = QSplitter(Qt.Orientation.Vertical)
        drives_tab.addWidget(self.drives)
        history = QWidget()
        self._history_layout = QVBoxLayout(history)
        self._history_layout.addWidget(self.history_title)
        drives_tab.addWidget(history)
        drives_tab.setSizes([330, 300])
        self.questions = QuestionsPanel(self.write, self.persona_name)
        emotions_tab = QWidget()
        self._emotions_layout = QVBoxLayout(emotions_tab)
        self._emotions_layout.setContentsMargins(0, 0, 0, 0)
        self.episodes = EpisodesPanel()
        self.goals = GoalsPanel(self.write)
        self.entities = EntitiesPanel(self.write)
        self.diary = DiaryPanel()
        self.diary.get_model.connect(self.get_model)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("dashboardTabs")
        for widget in (
            drives_tab,
            self.questions,
            emotions_tab,
            self.episodes,
            self.goals,
            self.entities,
            self.diary,
        ):
            self.tabs.addTab(widget, "")

    def _build_buttons(self) -> QHBoxLayout:
        """The status line, Stop (while a dream runs), Dream now and Refresh."""
        self.status = QLabel()
        self.status.setObjectName("dashboardStatus")
        self.status.setWordWrap(True)
        self.refresh_button = QPushButton()
        self.refresh_button.clicked.connect(self.refresh)
        self.dream_button = QPushButton()
        self.dream_button.setObjectName("dreamNow")
        self.dream_button.clicked.connect(self.dream_now)
        self.stop_dream_button = QPushButton()
        self.stop_dream_button.clicked.connect(self._dream_cancel.set)
        self.stop_dream_button.setVisible(False)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.stop_dream_button)
        bottom.addWidget(self.dream_button)
        bottom.addWidget(self.refresh_button)
        return bottom

    @property
    def complete(self) -> bool:
        """Every part built and the first read shown."""
        return not self._still_to_build and self.snapshot is not None

    def _build_next(self) -> None:
        if self._closing or not self._still_to_build:
            return
        self._still_to_build.pop(0)()
        if self._still_to_build:
            QTimer.singleShot(0, self, self._build_next)
        elif self.snapshot is not None:
            self.refreshed.emit()

    def _build_history(self) -> None:
        self.drive_history = DriveHistoryPlot()
        self._history_layout.addWidget(self.drive_history, 1)

    def _draw_history(self) -> None:
        if self.snapshot is not None:
            self._show_history(self.snapshot)
        elif self.drive_history is not None:
            self.drive_history.redraw()  # its legend, thresholds and "no history yet" until the read arrives

    def _show_history(self, snapshot: Snapshot) -> None:
        if self.drive_history is not None:
            thresholds: dict[str, float] = {n: d.threshold for n, d in snapshot.report.drives.items()}
            self.drive_history.set_history(snapshot.history, thresholds)

    def _build_emotions(self) -> None:
        self.emotions = EmotionPlot()
        self._emotions_layout.addWidget(self.emotions)
        if self.snapshot is not None:
            self.emotions.set_entries(self.snapshot.emotions)

    def retranslate(self) -> None:
        self.setWindowTitle(tr("Inner life of {name}", name=self.persona_name))
        titles = [
            tr("Drives"),
            tr("Open questions"),
            tr("Your feelings"),
            tr("Episodes"),
            tr("Goals"),
            tr("People and things"),
            tr("Dream diary"),
        ]
        for index, title in enumerate(titles):
            self.tabs.setTabText(index, title)
        self.history_title.setText(tr("Drives over time"))
        self.refresh_button.setText(tr("Refresh"))
        self.dream_button.setText(tr("Dream now"))
        self.dream_button.setToolTip(
            tr("Reflect on the latest day of conversation now, on the persona's internal model.")
        )
        self.stop_dream_button.setText(tr("Wake up"))
        self.stop_dream_button.setToolTip(tr("Stops after the current stage; the dream resumes next time."))
        for panel in (
            self.drives,
            self.questions,
            self.emotions,
            self.episodes,
            self.goals,
            self.entities,
            self.diary,
        ):
            if panel is not None:  # a plot not built yet is drawn in the language of its day
                panel.retranslate()
        if self.drive_history is not None and self.drive_history.curves:
            self.drive_history.redraw()
        self._show_status()

    # -- reading ----------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Read everything again on the worker (one read at a time; changes meanwhile read once more)."""
        if self._closing:
            return
        if self._loading:
            self._stale = True
            return
        self._loading = True
        app, slug, memory = self.app, self.slug, self._memory

        def load() -> Snapshot:
            name = app.personas.load(slug).settings.name  # renamed in the editor meanwhile, maybe
            report = app.personas.drives(slug, record=False)
            snapshot = memory.read(lambda store: read_snapshot(report, store))
            snapshot.name = name
            return snapshot

        self.worker.run(load, self._loaded, self._load_failed)

    def _loaded(self, snapshot: Snapshot) -> None:
        self._loading = False
        if self._closing:
            return
        self.snapshot = snapshot
        if snapshot.name and snapshot.name != self.persona_name:
            self.persona_name = self.drives.persona_name = self.questions.persona_name = snapshot.name
            self.retranslate()  # the title and the panels that name the persona
        self.drives.show_report(snapshot.report)
        if self.drive_history is not None and self.drive_history.curves:  # drawn once: it follows now
            self._show_history(snapshot)
        self.questions.show_questions(snapshot.questions)
        if self.emotions is not None:
            self.emotions.set_entries(snapshot.emotions)
        self.episodes.show_episodes(snapshot.episodes)
        self.goals.show_goals(snapshot.goals)
        self.entities.show_entities(snapshot.entities)
        self.diary.show_insights(
            snapshot.insights, snapshot.held_back, snapshot.held_back_model, snapshot.dreams
        )
        self._show_status()
        if not self._still_to_build:
            self.refreshed.emit()
        if self._stale:
            self._stale = False
            self.refresh()

    def _load_failed(self, message: str) -> None:
        self._loading = False
        if not self._closing:
            self._show_error(message)
            if self._stale:
                self._stale = False
                self.refresh()

    def _show_status(self) -> None:
        if self._dream_status:
            self.status.setText(self._dream_status)
        elif self._notice:
            self.status.setText(self._notice)
        elif self.snapshot is None:
            self.status.setText(tr("Reading {name}'s inner life…", name=self.persona_name))
        else:
            self.status.setText(tr("Up to date; it follows each conversation turn and dream."))

    def _show_error(self, message: str) -> None:
        self.status.setText(f"<span style='color:{theme.colour('error').name()}'>{message}</span>")

    # -- the person's changes -------------------------------------------------------------------------
    def write(
        self,
        fn: Callable[[MemoryStore], Any],
        on_done: Callable[[Any], None],
        on_error: Callable[[str], None] | None = None,
    ) -> None:
        """Run a change on the persona's queue with its owner connection (the worker waits for it, first
        in line: a dream gives way), then tell the core (so every window showing this persona's mind reads
        again, this one included)."""
        if self._closing:
            return
        app, slug = self.app, self.slug

        def task() -> Any:
            return app.personas.change_memory(slug, "dashboard edit", fn)

        def done(value: Any) -> None:
            if self._closing:
                return
            on_done(value)
            app.events.publish("mind_changed", persona=slug, what="dashboard")

        def failed(message: str) -> None:
            if not self._closing:
                (on_error or self._show_error)(message)

        self.worker.run(task, done, failed)

    # -- dreaming ---------------------------------------------------------------------------------------
    def dream_now(self) -> None:
        """Dream on a pool thread (it may take minutes; the reads go on meanwhile); its progress arrives
        as core events. Closing the window wakes it: it stops after the stage under way."""
        if self._dreaming or self._closing:
            return
        self._dreaming = True
        self._dream_cancel.clear()
        self._notice = ""
        self._dream_status = tr("Falling asleep…")
        self._show_dream_buttons()
        self._show_status()
        app, slug, cancel = self.app, self.slug, self._dream_cancel
        run_in_background(lambda: app.personas.dream(slug, cancel=cancel), self._dreamt, self._dream_failed)

    def _dreamt(self, result: Any) -> None:
        self._dreaming = False
        if self._closing:
            return
        self._dream_status = ""
        if result.skipped:
            self._notice = tr("No dream: {why}", why=result.skipped)
        else:
            written = sum(1 for state in result.stages.values() if state == "done")
            self._notice = tr(
                "Dreamt (level {level}) of {date}: {written} of {total} stages written.",
                level=result.level,
                date=result.date,
                written=written,
                total=len(result.stages),
            )
        if getattr(result, "reflection", None):  # the model is too small to reflect: say so
            self._notice += " " + tr("Reflection needs a larger model.")
        self._show_dream_buttons()
        self._show_status()
        self.refresh()

    def get_model(self) -> None:
        """The diary's way out of 'reflection needs a larger model': the Get a model list; a model used
        from it becomes the persona's, and the next dream reflects on it."""
        from ui.models.get_model_dialog import GetModelDialog

        dialog = GetModelDialog(self.app, self.slug, self, name=self.persona_name)
        if dialog.exec() == GetModelDialog.DialogCode.Accepted and dialog.chosen_spec:
            self.model_changed.emit(self.slug)
            self.refresh()

    def _dream_failed(self, message: str) -> None:
        self._dreaming = False
        if self._closing:
            return
        self._dream_status = ""
        self._notice = tr("The dream failed: {message}", message=message)
        self._show_dream_buttons()
        self._show_status()

    def _show_dream_buttons(self) -> None:
        self.dream_button.setEnabled(not (self._dreaming or self._dream_status))
        self.stop_dream_button.setVisible(self._dreaming)

    # -- core events --------------------------------------------------------------------------------
    def _on_core_event(self, topic: str, payload: dict[str, Any]) -> None:
        if topic == "dream_progress":
            step = payload.get("progress")
            stage = getattr(step, "stage", payload.get("stage", ""))
            index = getattr(step, "index", payload.get("index", 0))
            total = getattr(step, "total", payload.get("total", 0))
            self._dream_status = tr(
                "Dreaming: {stage} ({index} of {total})…",
                stage=tr(DREAM_STAGES[stage]) if stage in DREAM_STAGES else stage,
                index=index,
                total=total,
            )
        elif topic == "dream_finished":
            self._dream_status = ""
        elif topic == "turn_done":
            self._notice = ""
        self._show_dream_buttons()
        self._show_status()
        self.refresh()

    def done(self, result: int) -> None:
        """Close without waiting: no more events, and the worker closes its connections once idle.
        (Closing the window by its title bar comes here too, through reject().)"""
        if not self._closing:
            self._closing = True
            self._dream_cancel.set()  # a dream under way stops after its stage and resumes next time
            self.core_events.close()
            self.worker.close(self._memory.close)
        super().done(result)

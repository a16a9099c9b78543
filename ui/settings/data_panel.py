"""The Settings window's Data tab: the data folder, and each persona's memory backups (list, open the folder,
restore one after a confirmation, on a worker). A panel the Settings window owns
(ui/settings/settings_dialog.py), given the app and the window's status line."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC
from pathlib import Path

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.app import NexusApp
from nexus_ark.memory.backups import BackupInfo
from nexus_ark.personas.model import PersonaInfo
from ui.util import theme
from ui.util.i18n import tr
from ui.util.tasks import run_in_background, while_open


def _when(backup: BackupInfo) -> str:
    """When a backup was taken, on the person's clock (the file names carry UTC, which sorts and never
    repeats an hour when the clocks change)."""
    if backup.taken is None:
        return backup.path.name
    return backup.taken.replace(tzinfo=UTC).astimezone().strftime("%Y-%m-%d %H:%M")


def _size(size_bytes: int) -> str:
    return f"{size_bytes / 1e6:.1f} MB" if size_bytes >= 100_000 else f"{size_bytes / 1e3:.0f} kB"


class DataPanel(QWidget):
    """The data folder and the personas' memory backups. `persona_restored(slug)` once a persona's memory
    holds a backup's content. say(text) shows a message in the window's status line."""

    persona_restored = Signal(str)

    def __init__(
        self,
        app: NexusApp,
        say: Callable[[str], None],
        *,
        current_persona: str = "",
        busy: Callable[[str], bool] = lambda _slug: False,
    ) -> None:
        super().__init__()
        self.app = app
        self._say = say
        self.busy = busy
        self._current_persona = current_persona
        self.backups: list[BackupInfo] = []  # what the list shows, in its order
        self.data_label = QLabel()
        self.data_path = QLineEdit(str(app.data_dir))
        self.data_path.setObjectName("dataPath")
        self.data_path.setReadOnly(True)
        self.open_data_button = QPushButton()
        self.open_data_button.setObjectName("openDataFolder")
        self.open_data_button.clicked.connect(lambda: self.open_folder(self.app.data_dir))
        data_row = QHBoxLayout()
        data_row.addWidget(self.data_path, 1)
        data_row.addWidget(self.open_data_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.data_label)
        layout.addLayout(data_row)
        layout.addWidget(self._backups_box(), 1)
        self._update_buttons()

    def _backups_box(self) -> QGroupBox:
        self.backups_box = QGroupBox()
        self.backup_persona = QComboBox()
        self.backup_persona.setObjectName("backupPersona")
        self.backup_persona.currentIndexChanged.connect(lambda _i: self.refresh_backups())
        self.backups_note = QLabel()
        self.backups_note.setWordWrap(True)
        self.backup_list = QTreeWidget()
        self.backup_list.setObjectName("backupList")
        self.backup_list.setRootIsDecorated(False)
        self.backup_list.setColumnCount(4)
        self.backup_list.itemSelectionChanged.connect(self._update_buttons)
        self.restore_button = QPushButton()
        self.restore_button.setObjectName("restoreButton")
        self.restore_button.clicked.connect(lambda: self.restore_selected())
        self.open_backups_button = QPushButton()
        self.open_backups_button.clicked.connect(
            lambda: self.open_folder(self.app.layout.backups_dir / (self.backup_persona.currentData() or ""))
        )
        self.persona_label = QLabel()
        persona_row = QHBoxLayout()
        persona_row.addWidget(self.persona_label)
        persona_row.addWidget(self.backup_persona, 1)
        button_row = QHBoxLayout()
        button_row.addWidget(self.open_backups_button)
        button_row.addStretch(1)
        button_row.addWidget(self.restore_button)
        backups = QVBoxLayout(self.backups_box)
        backups.addLayout(persona_row)
        backups.addWidget(self.backups_note)
        backups.addWidget(self.backup_list, 1)
        backups.addLayout(button_row)
        return self.backups_box

    def retranslate(self) -> None:
        self.data_label.setText(tr("Data folder (personas, memories, models, logs, backups)"))
        self.open_data_button.setText(tr("Open folder"))
        self.backups_box.setTitle(tr("Memory backups"))
        self.persona_label.setText(tr("Persona"))
        self.backups_note.setText(
            tr(
                "A copy of each persona's memory is taken every day (the last seven are kept). Restoring "
                "one keeps the memory as it is now as another copy first."
            )
        )
        self.backup_list.setHeaderLabels([tr("Taken"), tr("Kind"), tr("Messages"), tr("Size")])
        self.restore_button.setText(tr("Restore…"))
        self.open_backups_button.setText(tr("Open backups folder"))
        self._show_backups(self.backups)

    def _show_error(self, message: str) -> None:
        self._say(theme.tinted(message, "error"))

    def open_folder(self, path: Path) -> bool:
        path.mkdir(parents=True, exist_ok=True)
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))

    def refresh_personas(self) -> None:
        run_in_background(
            self.app.personas.all,
            while_open(self, self._show_personas),
            while_open(self, self._show_error),
        )

    def _show_personas(self, personas: list[PersonaInfo]) -> None:
        self.backup_persona.blockSignals(True)
        self.backup_persona.clear()
        for info in personas:
            self.backup_persona.addItem(info.name if info.ok else info.slug, info.slug)
        index = self.backup_persona.findData(self._current_persona)
        self.backup_persona.setCurrentIndex(max(0, index))
        self.backup_persona.blockSignals(False)
        self.refresh_backups()

    def refresh_backups(self) -> None:
        slug = self.backup_persona.currentData()
        if not slug:
            self._show_backups([])
            return
        run_in_background(  # the dialog may be closed (and deleted) before the list arrives
            lambda: (slug, self.app.admin.list_backups(slug)),
            while_open(
                self,
                lambda result: (
                    self._show_backups(result[1]) if result[0] == self.backup_persona.currentData() else None
                ),
            ),
            while_open(self, self._show_error),
        )

    def _show_backups(self, backups: list[BackupInfo]) -> None:
        self.backups = backups
        self.backup_list.clear()
        kinds = {"daily": tr("Daily"), "before-restore": tr("Before a restore")}
        for backup in backups:
            item = QTreeWidgetItem(
                [
                    _when(backup),
                    kinds.get(backup.kind, backup.kind),
                    str(backup.messages) if backup.messages is not None else tr("unreadable"),
                    _size(backup.size_bytes),
                ]
            )
            item.setToolTip(0, str(backup.path))
            self.backup_list.addTopLevelItem(item)
        for column in range(4):
            self.backup_list.resizeColumnToContents(column)
        self._update_buttons()

    def selected_backup(self) -> BackupInfo | None:
        item = self.backup_list.currentItem()
        row = self.backup_list.indexOfTopLevelItem(item) if item is not None else -1
        return self.backups[row] if 0 <= row < len(self.backups) else None

    def _update_buttons(self) -> None:
        backup = self.selected_backup()
        self.restore_button.setEnabled(backup is not None and backup.messages is not None)

    def restore_selected(self, *, confirm: bool = True) -> None:
        backup = self.selected_backup()
        slug = self.backup_persona.currentData()
        if backup is None or not slug:
            return
        name = self.backup_persona.currentText()
        if self.busy(slug):
            self._show_error(tr("{name} is replying: wait until the reply is finished.", name=name))
            return
        when = _when(backup)
        if confirm:
            answer = QMessageBox.question(
                self,
                tr("Restore a backup"),
                tr(
                    "Replace {name}'s memory with the backup of {when} ({count} messages)?\n\n"
                    "The memory as it is now is kept as a copy in the backups folder first, so this "
                    "can be undone.",
                    name=name,
                    when=when,
                    count=backup.messages,
                ),
            )
            if answer != QMessageBox.StandardButton.Yes:
                return
        self.restore_button.setEnabled(False)
        self._say(tr("Restoring {name}'s memory…", name=name))
        run_in_background(
            lambda: self.app.admin.restore_backup(slug, backup.path),
            while_open(self, lambda safety: self._restored(slug, name, when, safety)),
            while_open(self, self._restore_failed),
        )

    def _restored(self, slug: str, name: str, when: str, safety: Path | None) -> None:
        kept = tr(" The memory before it was kept as {file}.", file=safety.name) if safety else ""
        self._say(tr("{name}'s memory is as it was on {when}.", name=name, when=when) + kept)
        self.persona_restored.emit(slug)
        self.refresh_backups()

    def _restore_failed(self, message: str) -> None:
        self._update_buttons()
        self._show_error(message)

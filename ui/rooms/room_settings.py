"""The room's settings dialog (Room > Room settings…): each member muted or not and how talkative, the reply
order, the cap of replies after each of the person's messages, and auto mode's pause. It reads nothing and
saves nothing itself: it starts from the settings the room opened with and gives back the changes, which
the room's lane saves through the core (app.rooms.update) while the room stays open."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QLabel,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.rooms.room import RoomMemberSettings, RoomSettings
from nexus_ark.rooms.turn_taking import STRATEGIES
from ui.rooms.room_dialog import STRATEGY_LABELS
from ui.util import theme
from ui.util.i18n import tr

# The bounds RoomSettings holds a room to (room.toml): the controls cannot go past them.
CAP_RANGE = (1, 20)
PAUSE_RANGE = (0.0, 60.0)


class _MemberRow:
    """One member's line: its name, the talkativeness slider with its value, and Muted."""

    def __init__(self, member: RoomMemberSettings, name: str) -> None:
        self.member = member
        self.name = QLabel(name)
        self.name.setStyleSheet("font-weight:600")
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName(f"talkativeness:{member.persona}")
        self.slider.setRange(0, 100)
        self.slider.setSingleStep(5)
        self.slider.setPageStep(10)
        self.slider.setMinimumWidth(160)
        self.slider.setValue(round(member.talkativeness * 100))
        self.slider.setToolTip(
            tr(
                "In natural order, how readily {name} joins in when not named: at 0% only when named (or "
                "when nobody else would answer), at 100% almost always.",
                name=name,
            )
        )
        self.value = QLabel()
        self.value.setMinimumWidth(40)
        self.value.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.muted = QCheckBox(tr("Muted"))
        self.muted.setObjectName(f"muted:{member.persona}")
        self.muted.setToolTip(
            tr("{name} does not answer, even when named, unless you use “Ask to speak”.", name=name)
        )
        self.muted.setChecked(member.muted)
        self.slider.valueChanged.connect(self._show)
        self.muted.toggled.connect(self._show)
        self._show()

    def _show(self, *_args) -> None:
        """The value beside the slider; a muted member's line greyed (the style may not grey a slider)."""
        muted = self.muted.isChecked()
        self.value.setText(f"{self.slider.value()}%")
        for widget in (self.name, self.slider, self.value):
            widget.setEnabled(not muted)

    def settings(self) -> RoomMemberSettings:
        """The member as set; a talkativeness the slider cannot show exactly (0.333 from room.toml) is kept
        while the slider stays where it showed it."""
        level = self.slider.value() / 100
        if self.slider.value() == round(self.member.talkativeness * 100):
            level = self.member.talkativeness
        return self.member.model_copy(update={"talkativeness": level, "muted": self.muted.isChecked()})


class RoomSettingsDialog(QDialog):
    def __init__(self, parent: QWidget | None, settings: RoomSettings, names: dict[str, str]) -> None:
        """settings: the room's as it runs; names: member slug -> display name."""
        super().__init__(parent)
        self.setObjectName("roomSettings")
        self.setWindowTitle(tr("Room settings: {name}", name=settings.name))
        self.original = settings
        self.rows = [_MemberRow(m, names.get(m.persona, m.persona)) for m in settings.members]

        members = QGroupBox(tr("Members"))
        grid = QGridLayout(members)
        grid.setHorizontalSpacing(12)
        heading = QLabel(tr("Talkativeness"))
        theme.set_tone(heading, "muted")
        grid.addWidget(heading, 0, 1, 1, 2)
        for place, row in enumerate(self.rows, start=1):
            grid.addWidget(row.name, place, 0)
            grid.addWidget(row.slider, place, 1)
            grid.addWidget(row.value, place, 2)
            grid.addWidget(row.muted, place, 3)
            row.muted.toggled.connect(self._check)
        grid.setColumnStretch(1, 1)

        self.strategy_box = QComboBox()
        self.strategy_box.setObjectName("replyOrder")
        for key in STRATEGIES:
            self.strategy_box.addItem(tr(STRATEGY_LABELS[key]), key)
        self.strategy_box.setCurrentIndex(STRATEGIES.index(settings.strategy))
        self.cap_box = QSpinBox()
        self.cap_box.setObjectName("replyCap")
        self.cap_box.setRange(*CAP_RANGE)
        self.cap_box.setValue(settings.cap)
        self.cap_box.setToolTip(tr("Then they wait for you: auto mode stops there too."))
        self.pause_box = QDoubleSpinBox()
        self.pause_box.setObjectName("autoPause")
        self.pause_box.setRange(*PAUSE_RANGE)
        self.pause_box.setDecimals(1)
        self.pause_box.setSingleStep(0.5)
        self.pause_box.setValue(settings.pause_s)
        replies = QGroupBox(tr("Replies"))
        form = QFormLayout(replies)
        form.addRow(tr("Reply order"), self.strategy_box)
        form.addRow(tr("Replies after each of your messages, at most"), self.cap_box)
        form.addRow(tr("Pause between replies in auto mode (s)"), self.pause_box)

        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setText(tr("Cancel"))
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(members)
        layout.addWidget(replies)
        layout.addWidget(self.hint)
        layout.addStretch(1)
        layout.addWidget(self.buttons)
        self._check()

    def row(self, slug: str) -> _MemberRow:
        return next(row for row in self.rows if row.member.persona == slug)

    def _check(self, *_args) -> None:
        everyone = all(row.muted.isChecked() for row in self.rows)
        self.hint.setText(
            tr("Every member is muted: nobody answers until you ask one to speak.") if everyone else ""
        )
        self.hint.setVisible(everyone)
        theme.set_tone(self.hint, "error")

    def changes(self) -> dict[str, Any]:
        """What differs from the settings the dialog began with (RoomSettings' fields), for update_room."""
        chosen: dict[str, Any] = {
            "members": [row.settings() for row in self.rows],
            "strategy": self.strategy_box.currentData(),
            "cap": self.cap_box.value(),
            "pause_s": round(self.pause_box.value(), 1),
        }
        if round(self.original.pause_s, 1) == chosen["pause_s"]:
            chosen["pause_s"] = self.original.pause_s
        return {field: value for field, value in chosen.items() if getattr(self.original, field) != value}

"""The dashboard's drives: each level as a bar against its threshold, the dominant drive highlighted, the
dynamic drive line under each bar and the narrative of why. Built from a DriveReport, no I/O."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPalette, QPen
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from nexus_ark.mind.drives import DRIVES, DriveName, DriveReport
from nexus_ark.mind.narrative import drive_line, narrative
from ui.util import theme
from ui.util.i18n import N_, current_language, tr

DRIVE_LABELS: dict[str, str] = {
    "boredom": N_("Boredom"),
    "curiosity": N_("Curiosity"),
    "goal_achievement": N_("Goal drive"),
    "devotion": N_("Devotion"),
}
DRIVE_COLORS: dict[str, str] = {
    "boredom": "#8e7cc3",
    "curiosity": "#3d85c6",
    "goal_achievement": "#e69138",
    "devotion": "#d45087",
}


class DriveBar(QWidget):
    """A level in 0–1 as a filled bar, with the threshold as a line across it in the text's colour (dark
    on the light theme, light on the dark one); the track is the text background, a shade towards the
    text."""

    def __init__(self, color: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.color = QColor(color)
        self.level = 0.0
        self.threshold = 0.6
        self.emphasised = False
        self.setMinimumHeight(22)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        return QSize(320, 22)

    def set_values(self, level: float, threshold: float, emphasised: bool) -> None:
        self.level, self.threshold, self.emphasised = level, threshold, emphasised
        self.update()

    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        track = QRectF(self.rect()).adjusted(1, 3, -1, -3)
        palette = self.palette()  # drawn from the palette of the moment: a theme switch repaints it
        text = palette.color(QPalette.ColorRole.WindowText)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(theme.mix(palette.color(QPalette.ColorRole.Base), text, 0.1))
        painter.drawRoundedRect(track, 4, 4)
        fill = QColor(self.color)
        if not self.emphasised:
            fill.setAlpha(170)
        painter.setBrush(fill)
        width = track.width() * max(0.0, min(1.0, self.level))
        if width > 0:
            painter.drawRoundedRect(QRectF(track.left(), track.top(), width, track.height()), 4, 4)
        x = track.left() + track.width() * max(0.0, min(1.0, self.threshold))
        painter.setPen(QPen(text, 2))
        painter.drawLine(int(x), int(track.top()) - 3, int(x), int(track.bottom()) + 3)
        painter.end()


class DrivesPanel(QWidget):
    def __init__(self, persona_name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.persona_name = persona_name
        self.report: DriveReport | None = None
        self.title = QLabel()
        self.title.setStyleSheet("font-weight:600; font-size:14px")
        self.narrative = QLabel()
        self.narrative.setObjectName("driveNarrative")
        self.narrative.setWordWrap(True)
        theme.set_tone(self.narrative, "note-box", "font-size:13px")
        self.updated = QLabel()
        theme.set_tone(self.updated, "muted")
        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(2)
        grid.setColumnStretch(1, 1)
        self.names: dict[str, QLabel] = {}
        self.bars: dict[str, DriveBar] = {}
        self.values: dict[str, QLabel] = {}
        self.lines: dict[str, QLabel] = {}
        for row, name in enumerate(DRIVES):
            self.names[name] = QLabel()
            self.names[name].setMinimumWidth(110)
            self.bars[name] = DriveBar(DRIVE_COLORS[name])
            self.bars[name].setObjectName(f"driveBar_{name}")
            self.values[name] = QLabel()
            self.values[name].setMinimumWidth(150)
            self.lines[name] = QLabel()
            self.lines[name].setWordWrap(True)
            theme.set_tone(self.lines[name], "muted")
            grid.addWidget(self.names[name], row * 2, 0)
            grid.addWidget(self.bars[name], row * 2, 1)
            grid.addWidget(self.values[name], row * 2, 2)
            grid.addWidget(self.lines[name], row * 2 + 1, 1, 1, 2)
            grid.setRowMinimumHeight(row * 2 + 1, 26)
        self.legend = QLabel()
        theme.set_tone(self.legend, "muted")
        box = QFrame()
        box.setLayout(grid)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(box)
        layout.addWidget(self.legend)
        layout.addWidget(self.narrative)
        layout.addWidget(self.updated)
        layout.addStretch(1)
        self.retranslate()

    def show_report(self, report: DriveReport) -> None:
        self.report = report
        self.retranslate()

    def retranslate(self) -> None:
        self.title.setText(tr("How {name} feels now", name=self.persona_name))
        self.legend.setText(tr("The line across each bar is the drive's threshold."))
        report = self.report
        language = current_language()
        for name in DRIVES:
            label = tr(DRIVE_LABELS[name])
            if report is None:
                self.names[name].setText(label)
                self.values[name].setText("")
                self.lines[name].setText("")
                continue
            drive = report.drives[name]
            dominant = report.dominant == name
            self.names[name].setText(f"★ {label}" if dominant else label)
            if dominant:  # in the drive's own colour, made to read on the theme's background
                theme.set_tone(self.names[name], DRIVE_COLORS[name], "font-weight:700")
            else:
                theme.set_tone(self.names[name], "", "")
                self.names[name].setStyleSheet("")
            self.bars[name].set_values(drive.level, drive.threshold, dominant)
            value = tr(
                "{level} / threshold {threshold}",
                level=f"{drive.level:.2f}",
                threshold=f"{drive.threshold:.2f}",
            )
            self.values[name].setText(f"<b>{value}</b>" if drive.over else value)
            self.values[name].setToolTip(tr("Over its threshold") if drive.over else "")
            self.lines[name].setText(drive_line(report, name, language))
        if report is None:
            self.narrative.setText(tr("Loading…"))
            self.updated.setText("")
            return
        strongest = tr(DRIVE_LABELS[report.dominant]) if report.dominant else tr("none")
        self.narrative.setText(
            tr("Strongest drive against its threshold: {name}", name=strongest)
            + "<br>"
            + _escape(narrative(report, language))
        )
        self.updated.setText(
            tr("Computed at {time}", time=report.time.astimezone().strftime("%Y-%m-%d %H:%M"))
        )

    def level(self, name: DriveName) -> float:
        return self.bars[name].level


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

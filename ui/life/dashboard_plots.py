"""The dashboard's plots (pyqtgraph): the user's emotions over time, and the four drives over time with
their thresholds. Both are redrawn from plain data, no I/O."""

from __future__ import annotations

import time

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from nexus_ark.memory.components import EmotionEntry
from nexus_ark.mind.drives import DRIVES
from nexus_ark.mind.narrative import emotion_name
from nexus_ark.mind.state import DrivePoint
from ui.life.dashboard_data import local_time, timestamp
from ui.life.dashboard_drives import DRIVE_COLORS, DRIVE_LABELS
from ui.util import theme
from ui.util.i18n import current_language, tr

pg.setConfigOptions(antialias=True)


def _plot_widget() -> pg.PlotWidget:
    # Without context menus (nothing here needs pyqtgraph's export and axis menus), told at construction:
    # building them and turning them off afterwards cost the opening window ~6 ms a plot.
    plot = pg.PlotWidget(
        viewBox=pg.ViewBox(enableMenu=False),
        axisItems={"bottom": pg.DateAxisItem(orientation="bottom")},
        enableMenu=False,
    )
    plot.showGrid(x=True, y=True, alpha=0.15)
    _paint(plot, plot.palette())
    return plot


def _ink(palette: QPalette) -> tuple[QColor, QColor]:
    """A plot's background and the colour its words and lines are drawn in: the text background and
    text of the theme drawn now (a white plot stayed white on the dark theme)."""
    return palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text)


def _paint(plot: pg.PlotWidget, palette: QPalette) -> None:
    ground, text = _ink(palette)
    plot.setBackground(ground)
    for side in ("left", "bottom"):
        axis = plot.getAxis(side)
        axis.setPen(pg.mkPen(theme.mix(text, ground, 0.45)))
        axis.setTextPen(pg.mkPen(text))  # its label's colour too


class _ThemedPlot(QWidget):
    """A plot drawn in the theme's colours, again whenever the theme changes (from this widget's palette:
    the plot inside gets the new one after it)."""

    plot: pg.PlotWidget

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "plot"):
            _paint(self.plot, self.palette())
            self.repaint_items()

    def repaint_items(self) -> None:
        raise NotImplementedError


def _value_color(value: float) -> str:
    if value > 0.05:
        return "#3c9d5d"
    if value < -0.05:
        return "#c2453d"
    return "#888888"


class EmotionPlot(_ThemedPlot):
    """The user's emotion per message (−1 … +1) over time; hovering a point shows its label and what was
    said, under the plot and as a tooltip."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.entries: list[EmotionEntry] = []
        self.plot = _plot_widget()
        self.plot.setYRange(-1.1, 1.1, padding=0)
        self.plot.setMouseEnabled(x=True, y=False)
        self.zero = pg.InfiniteLine(pos=0, angle=0)
        self.plot.addItem(self.zero)
        self.curve = pg.PlotDataItem(pen=pg.mkPen("#9aa4b5", width=1.5))
        self.plot.addItem(self.curve)
        self.points = pg.ScatterPlotItem(size=10, hoverable=True, hoverSize=14, tip=self._tip)
        self._paint_lines()
        self.points.sigHovered.connect(self._hovered)
        self.plot.addItem(self.points)
        self.intro = QLabel()
        self.intro.setWordWrap(True)
        self.detail = QLabel()
        self.detail.setObjectName("emotionDetail")
        self.detail.setWordWrap(True)
        self.detail.setMinimumHeight(40)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.detail)
        self._shown: int | None = None
        self.retranslate()

    @property
    def point_count(self) -> int:
        return len(self.points.data)

    def _paint_lines(self) -> None:
        ground, text = _ink(self.palette())
        self.zero.setPen(pg.mkPen(theme.mix(text, ground, 0.7), style=Qt.PenStyle.DashLine))
        self.points.opts["hoverPen"] = pg.mkPen(text, width=2)

    def repaint_items(self) -> None:
        self._paint_lines()
        self.set_entries(self.entries)  # each point's rim is the background's colour

    def set_entries(self, entries: list[EmotionEntry]) -> None:
        grew = len(entries) != len(self.entries)
        self.entries = entries
        xs = [timestamp(e.timestamp) for e in entries]
        ys = [e.value for e in entries]
        self.curve.setData(xs, ys)
        self.points.setData(
            x=xs,
            y=ys,
            data=list(range(len(entries))),
            brush=[pg.mkBrush(_value_color(v)) for v in ys],
            pen=pg.mkPen(_ink(self.palette())[0], width=1),
        )
        if grew and xs:
            span = max(xs[-1] - xs[0], 3600.0)
            self.plot.setXRange(xs[0] - span * 0.03, xs[-1] + span * 0.03, padding=0)
        elif not xs:  # an empty plot's axis shows the past week (not fractions of a second after 1970)
            now = time.time()
            self.plot.setXRange(now - 7 * 86400, now, padding=0)
        self._shown = None
        self.retranslate()

    def describe(self, index: int) -> str:
        """The hover text of one point: when, the feeling and what was said."""
        entry = self.entries[index]
        text = tr(
            "{time} · {emotion} ({value})",
            time=local_time(entry.timestamp),
            emotion=emotion_name(entry.emotion, current_language()),
            value=f"{entry.value:+.1f}",
        )
        if entry.snippet:
            text += f"\n“{entry.snippet}”"
        if entry.message_id is not None:
            text += "\n" + tr("message {id}", id=entry.message_id)
        return text

    def _tip(self, x: float, y: float, data: object) -> str:
        return self.describe(int(data)) if isinstance(data, int) and data < len(self.entries) else ""

    def _hovered(self, _item, points, _event) -> None:
        if len(points):
            self.show_point(int(points[0].data()))

    def show_point(self, index: int) -> None:
        self._shown = index
        self.detail.setText(self.describe(index))

    def retranslate(self) -> None:
        self.intro.setText(tr("How you seemed to feel in each message, read from what you wrote."))
        self.plot.setLabel("left", tr("Feeling (−1 heavy … +1 bright)"))
        if self._shown is not None and self._shown < len(self.entries):
            self.detail.setText(self.describe(self._shown))
        elif self.entries:
            self.detail.setText(tr("Hover over a point to see the feeling and what was said."))
        else:
            self.detail.setText(tr("No emotions recorded yet: they are read from your messages."))


class DriveHistoryPlot(_ThemedPlot):
    """The four drives at each recomputation (drive_history), with dashed threshold lines."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.history: list[DrivePoint] = []
        self.thresholds: dict[str, float] = {}
        self.plot = _plot_widget()
        self.plot.setYRange(-0.03, 1.2, padding=0)
        self.plot.getAxis("left").setTicks([[(v / 5, f"{v / 5:.1f}") for v in range(6)]])
        self.plot.setMouseEnabled(x=True, y=False)
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.threshold_lines: list[pg.InfiniteLine] = []
        self.empty = QLabel()
        theme.set_tone(self.empty, "muted")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.empty)
        self._drawn_thresholds: dict[str, float] | None = None  # what the lines and legend were drawn for
        # Drawn by the dashboard's retranslate() (its constructor calls it): drawing here as well cost a
        # whole second drawing while the window opened.

    def set_history(self, points: list[DrivePoint], thresholds: dict[str, float]) -> None:
        grew = len(points) != len(self.history)
        self.history, self.thresholds = points, thresholds
        if self.curves and thresholds == self._drawn_thresholds:
            self._set_curves()  # new points only: the legend and the threshold lines stay
        else:
            self.redraw()
        if grew and points:
            xs = [timestamp(p.time) for p in points]
            span = max(xs[-1] - xs[0], 3600.0)
            self.plot.setXRange(xs[0] - span * 0.03, xs[-1] + span * 0.03, padding=0)

    def repaint_items(self) -> None:
        self.redraw()  # the legend and the threshold lines

    def redraw(self) -> None:
        """Everything again (the legend's names follow the language)."""
        self.plot.clear()
        if self.plot.plotItem.legend is not None:
            self.plot.plotItem.legend.scene().removeItem(self.plot.plotItem.legend)
            self.plot.plotItem.legend = None
        # One row above the lines (the y range leaves room), clear of the threshold labels on the left.
        palette = self.palette()
        ground, text = _ink(palette)
        veil = QColor(ground)
        veil.setAlpha(230)
        self.plot.addLegend(
            offset=(-10, 2), colCount=len(DRIVES), labelTextColor=text, brush=pg.mkBrush(veil)
        )
        self.plot.setLabel("left", tr("Level"))
        self.curves = {
            name: self.plot.plot(pen=pg.mkPen(DRIVE_COLORS[name], width=2), name=tr(DRIVE_LABELS[name]))
            for name in DRIVES
        }
        self._set_curves()
        self._drawn_thresholds = dict(self.thresholds)
        self.threshold_lines = []
        by_value: dict[float, list[str]] = {}
        for name in DRIVES:
            by_value.setdefault(round(self.thresholds.get(name, 0.6), 2), []).append(name)
        for value, names in sorted(by_value.items()):
            one = len(by_value) == 1
            label = (
                tr("threshold {value}", value=f"{value:.2f}")
                if one
                else tr("threshold of {names}", names=", ".join(tr(DRIVE_LABELS[n]) for n in names))
            )
            # words on the plot: the drive's colour where it reads on this background, else one near it
            color = theme.mix(text, ground, 0.2) if one else theme.colour(DRIVE_COLORS[names[0]], palette)
            line = pg.InfiniteLine(
                pos=value,
                angle=0,
                pen=pg.mkPen(color, width=1.2, style=Qt.PenStyle.DashLine),
                label=label,
                labelOpts={"position": 0.02, "color": color, "anchors": [(0, 1), (0, 1)]},
            )
            self.plot.addItem(line)
            self.threshold_lines.append(line)

    def _set_curves(self) -> None:
        xs = [timestamp(p.time) for p in self.history]
        for name, curve in self.curves.items():
            curve.setData(xs, [p.levels.get(name, 0.0) for p in self.history])
        self.empty.setText(
            ""
            if self.history
            else tr("No history yet: the drives are recorded after each conversation turn and each dream.")
        )
        self.empty.setVisible(not self.history)

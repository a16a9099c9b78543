"""What the Inner life window, the model dialog's errors and the tray menu draw reads in the dark theme
and in the light one (issue 23, defect 20): every text's effective colour has a WCAG contrast of at least
4.5:1 against what it is drawn on, the plots, the narrative box and the bar tracks are dark in the dark
theme, and the tray menu's unchecked boxes can be seen. The windows are built in the light theme and
switched, as a person switches in Settings with the windows open."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QPalette, QTextDocument
from PySide6.QtWidgets import QApplication, QLabel, QSlider, QTabWidget, QTextBrowser, QWidget

from nexus_ark.app import NexusApp
from tests.ui import test_dashboard as planted
from ui.life.dashboard import DashboardWindow
from ui.life.tray import Tray
from ui.models.model_dialog import ModelSettingsDialog
from ui.util import i18n, theme

core = planted.core  # a persona with a planted mind (episodes, a dream diary, drives, emotions)
dashboard = planted.window  # its Inner life window, once the first read is shown
pytestmark = pytest.mark.qt_log_ignore(
    "propagateSizeHints", "does not support raise", "requestActivate", "grabbing the keyboard"
)
TEXT = 4.5  # WCAG AA for text
GRAPHIC = 3.0  # WCAG AA for the parts of a control (a check box's frame)


def _luminance(color: QColor) -> float:
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) + 0.0722 * channel(color.blueF())


def contrast(a: QColor, b: QColor) -> float:
    """The WCAG 2 contrast ratio, 1 (none) to 21 (black on white)."""
    light, dark = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_the_contrast_helper_agrees_with_wcag() -> None:
    assert contrast(QColor("black"), QColor("white")) == pytest.approx(21.0)
    assert contrast(QColor("#777777"), QColor("white")) == pytest.approx(4.48, abs=0.01)
    assert contrast(QColor("#595959"), QColor("white")) == pytest.approx(7.0, abs=0.01)


@pytest.fixture
def themes(qapp) -> Iterator[None]:
    theme.apply_theme("light")
    yield
    theme.apply_theme("system")


def _switch(to: str, *widgets: QWidget) -> None:
    theme.apply_theme(to)
    QApplication.processEvents()
    for widget in widgets:
        widget.ensurePolished()


def _document_colours(document: QTextDocument, default: QColor) -> list[tuple[str, QColor]]:
    runs: list[tuple[str, QColor]] = []
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            text = fragment.text().strip()
            if text:
                brush = fragment.charFormat().foreground()
                runs.append((text, brush.color() if brush.style() != Qt.BrushStyle.NoBrush else default))
            it += 1
        block = block.next()
    return runs


def _drawn(top: QWidget, widget: QWidget) -> tuple[QColor, QColor]:
    """How the widget is drawn in the window's own picture: the colour most of its pixels have (what it
    is drawn on) and the pixel that differs most from it (its text, at the full colour of a glyph's
    stem; anti-aliasing only blends towards the ground)."""
    tabs = top.findChild(QTabWidget)
    if tabs is not None:
        for index in range(tabs.count()):
            if tabs.widget(index).isAncestorOf(widget):
                tabs.setCurrentIndex(index)
    image = top.grab().toImage()
    corner = widget.mapTo(top, QPoint(0, 0))
    pixels = [
        image.pixel(corner.x() + x, corner.y() + y)
        for x in range(widget.width())
        for y in range(widget.height())
    ]
    ground = QColor.fromRgb(Counter(pixels).most_common(1)[0][0])
    text = max((QColor.fromRgb(p) for p in set(pixels)), key=lambda c: contrast(c, ground))
    return ground, text


def _label_problems(top: QWidget, labels: list[QLabel]) -> list[str]:
    problems = []
    for label in labels:
        assert label.text().strip(), f"{label.objectName()} says nothing"
        ground, text = _drawn(top, label)
        ratio = contrast(text, ground)
        if ratio < TEXT:
            problems.append(f"{label.text()[:40]!r} {text.name()} on {ground.name()}: {ratio:.2f}")
    return problems


def _browser_problems(browser: QTextBrowser) -> list[str]:
    palette = browser.palette()
    ground = palette.color(QPalette.ColorRole.Base)
    problems = []
    for text, colour in _document_colours(browser.document(), palette.color(QPalette.ColorRole.Text)):
        ratio = contrast(colour, ground)
        if ratio < TEXT:
            problems.append(f"{text[:40]!r} {colour.name()} on {ground.name()}: {ratio:.2f}")
    return problems


def _dashboard_labels(dashboard: DashboardWindow) -> list[QLabel]:
    drives = dashboard.drives
    return [
        *drives.names.values(),
        *drives.values.values(),
        *drives.lines.values(),
        drives.legend,
        drives.narrative,
        drives.updated,
        dashboard.entities.sources,
    ]


@pytest.mark.parametrize("shade", ["dark", "light"])
def test_the_inner_life_windows_text_reads_in_both_themes(qtbot, themes, dashboard: DashboardWindow, shade):
    dashboard.show()
    qtbot.waitExposed(dashboard)
    dashboard.entities.list.setCurrentRow(0)  # its sources line under the editor
    _switch(shade, dashboard)
    problems = _label_problems(dashboard, _dashboard_labels(dashboard))
    for browser in (dashboard.episodes.view, dashboard.diary.view):
        problems += _browser_problems(browser)
    assert dashboard.episodes.view.toPlainText().startswith(
        "2026-03-09"
    )  # the date is among what was checked
    assert not problems, "\n".join(problems)


def test_in_the_dark_theme_the_narrative_box_bar_tracks_and_plots_are_dark(
    qtbot, themes, dashboard: DashboardWindow
):
    dashboard.show()
    qtbot.waitExposed(dashboard)
    _switch("dark", dashboard)
    image = dashboard.grab().toImage()
    narrative = dashboard.drives.narrative
    box = image.pixelColor(narrative.mapTo(dashboard, QPoint(narrative.width() // 2, 4)))
    assert box.lightness() < 100, f"the narrative box is {box.name()}"

    bar = dashboard.drives.bars["boredom"]
    drawn = bar.grab().toImage()
    track = drawn.pixelColor(bar.width() - 4, bar.height() // 2)  # the empty end of the track
    assert track.lightness() < 100, f"the bar's track is {track.name()}"
    x = round(1 + (bar.width() - 2) * bar.threshold)
    line = max((drawn.pixelColor(x + dx, 1) for dx in (-1, 0, 1)), key=lambda c: contrast(c, track))
    assert contrast(line, track) >= GRAPHIC, f"the threshold line {line.name()} on {track.name()}"

    for plot in (dashboard.drive_history.plot, dashboard.emotions.plot):
        ground = plot.backgroundBrush().color()
        assert ground.lightness() < 100, f"a plot's background is {ground.name()}"
        for side in ("left", "bottom"):
            axis = plot.getAxis(side)
            assert contrast(axis.textPen().color(), ground) >= TEXT, side
            assert contrast(axis.pen().color(), ground) >= GRAPHIC, side
    legend = dashboard.drive_history.plot.plotItem.legend
    legend_ground = legend.opts["brush"].color()
    assert legend_ground.lightness() < 100
    for _sample, label in legend.items:
        assert contrast(QColor(label.opts["color"]), legend_ground) >= TEXT, label.text
    plot_ground = dashboard.drive_history.plot.backgroundBrush().color()
    for line_item in dashboard.drive_history.threshold_lines:
        assert contrast(line_item.label.color, plot_ground) >= TEXT, line_item.label.toPlainText()


def test_a_theme_switch_back_to_light_makes_them_light_again(qtbot, themes, dashboard: DashboardWindow):
    _switch("dark", dashboard)
    _switch("light", dashboard)
    assert dashboard.drive_history.plot.backgroundBrush().color().lightness() > 200
    image = dashboard.grab().toImage()
    narrative = dashboard.drives.narrative
    assert image.pixelColor(narrative.mapTo(dashboard, QPoint(narrative.width() // 2, 4))).lightness() > 200


@pytest.mark.parametrize("shade", ["dark", "light"])
def test_the_model_dialogs_ollama_error_reads_in_both_themes(qtbot, themes, data_dir: Path, shade):
    core_app = NexusApp(data_dir).open()
    i18n.set_language("en")
    try:
        _switch(shade)
        dialog = ModelSettingsDialog(core_app, "aria")
        qtbot.addWidget(dialog)
        dialog.show()
        qtbot.waitUntil(lambda: dialog.loaded, timeout=30_000)
        box = dialog.chat.backend_box
        box.setCurrentIndex(box.findData("ollama"))
        dialog.chat.ollama_host.setText("http://127.0.0.1:9")
        qtbot.mouseClick(dialog.chat.refresh_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: "not running" in dialog.chat.ollama_status.text(), timeout=30_000)
        status = dialog.chat.ollama_status
        _ground, drawn = _drawn(dialog, status)
        hue = drawn.toHsl()
        assert hue.hslHue() in range(0, 20) or hue.hslHue() >= 340, f"the error is red, not {drawn.name()}"
        assert not _label_problems(dialog, [status])
        dialog.close()
    finally:
        core_app.close()


@pytest.mark.parametrize("shade", ["dark", "light"])
def test_the_tray_menus_unchecked_boxes_can_be_seen(qtbot, themes, shade):
    _switch(shade)
    owner = QWidget()
    qtbot.addWidget(owner)
    tray = Tray(owner)
    menu = tray.menu
    menu.popup(QPoint(0, 0))
    qtbot.waitUntil(menu.isVisible)
    image = menu.grab().toImage()
    for action in (tray.pause_action, tray.keep_running_action):
        assert not action.isChecked()
        row = menu.actionGeometry(action)
        ground = image.pixelColor(row.right() - 2, row.center().y())
        indicator = [
            image.pixelColor(x, y)
            for x in range(row.left(), row.left() + row.height() + 4)
            for y in range(row.top(), row.bottom())
        ]
        best = max(contrast(c, ground) for c in indicator)
        assert best >= GRAPHIC, f"{action.text()!r}: its box stands out {best:.2f}:1 from {ground.name()}"
    menu.close()


def test_no_window_writes_words_in_a_colour_of_its_own() -> None:
    """Errors and results were written in fixed colours (#b00, #c62828, #070, #555) that read at 2:1 on the
    dark theme; every colour for words now comes from theme.colour(), which keeps 4.5:1 on both themes."""
    fixed = re.compile(r"color:\s*#[0-9a-fA-F]{3,6}|solid #[0-9a-fA-F]{3,6}")
    found = [
        f"{path.name}:{n}: {line.strip()}"
        for path in sorted((Path(__file__).resolve().parents[2] / "ui").rglob("*.py"))
        if path.name != "theme.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if fixed.search(line)
    ]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize("shade", ["light", "dark"])
def test_a_disabled_slider_is_grey_not_the_accent(qtbot, themes, shade):
    """A muted member's talkativeness slider (Room settings…) is disabled: its filled groove must not keep
    the accent colour, or it reads as live."""
    _switch(shade)
    sliders = []
    for enabled in (True, False):
        slider = QSlider(Qt.Orientation.Horizontal)
        qtbot.addWidget(slider)
        slider.setRange(0, 100)
        slider.setValue(80)
        slider.resize(200, 24)
        slider.setEnabled(enabled)
        slider.show()
        sliders.append(slider)
    qtbot.waitUntil(lambda: all(s.isVisible() for s in sliders))

    def groove(slider: QSlider) -> QColor:
        image = slider.grab().toImage()
        y = image.height() // 2
        colours = [image.pixelColor(x, yy) for x in range(20, 60) for yy in range(y - 3, y + 4)]
        return max(colours, key=lambda c: c.hsvSaturationF())  # the fill, where the groove is drawn

    live, muted = (groove(s) for s in sliders)
    assert live.hsvSaturationF() > 0.4, live.name()
    assert muted.hsvSaturationF() < 0.15, f"the disabled groove is {muted.name()} in the {shade} theme"

"""The app's look: light, dark or the desktop's own, and the text size, applied to every window at once.

A palette (not a style sheet) carries the colours, so every widget, the ones other windows build later
included, follows without knowing about themes. Light and dark are drawn with the Fusion style, which
honours a palette on every platform; "system" gives the desktop's own style and palette back and follows
the desktop when it switches between light and dark (QStyleHints.colorScheme, Qt 6.5+).

Colours that are not a palette role (secondary text, errors, a drive's own colour used for words) come
from `colour()`: made from the palette drawn now and never below WCAG's 4.5:1 for text on any surface the
palette paints. A widget given one with `set_tone()` gets it again when the theme changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPainter, QPalette, QPen
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleOption, QWidget
from shiboken6 import isValid

THEMES = ("system", "light", "dark")
Role = QPalette.ColorRole
Group = QPalette.ColorGroup


@dataclass
class _Original:
    style: str
    palette: QPalette
    font: QFont


_original: _Original | None = None
_theme = "system"
_listening = False


def _app() -> QApplication:
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        raise RuntimeError("the theme needs a QApplication")
    return app


def _remember_original(app: QApplication) -> _Original:
    global _original
    if _original is None:
        _original = _Original(app.style().name(), QPalette(app.palette()), QFont(app.font()))
    return _original


def _palette(colors: dict[Role, str], disabled_text: str, disabled_highlight: str) -> QPalette:
    palette = QPalette()
    for role, color in colors.items():
        palette.setColor(role, QColor(color))
    for role in (Role.Text, Role.WindowText, Role.ButtonText, Role.PlaceholderText, Role.HighlightedText):
        palette.setColor(Group.Disabled, role, QColor(disabled_text))
    # A disabled slider's filled groove, a disabled selection or progress bar: grey, not the accent (a muted
    # member's talkativeness slider read as live).
    palette.setColor(Group.Disabled, Role.Highlight, QColor(disabled_highlight))
    return palette


def dark_palette() -> QPalette:
    return _palette(
        {
            Role.Window: "#2b2d31",
            Role.WindowText: "#e6e6e6",
            Role.Base: "#1f2023",
            Role.AlternateBase: "#303236",
            Role.ToolTipBase: "#3a3c41",
            Role.ToolTipText: "#f0f0f0",
            Role.PlaceholderText: "#8a8d93",
            Role.Text: "#e6e6e6",
            Role.Button: "#35373c",
            Role.ButtonText: "#e6e6e6",
            Role.BrightText: "#ff6b6b",
            Role.Light: "#4a4d53",
            Role.Midlight: "#3d4045",
            Role.Mid: "#2f3135",
            Role.Dark: "#18191b",
            Role.Shadow: "#000000",
            Role.Highlight: "#4c7bd9",
            Role.HighlightedText: "#ffffff",
            Role.Link: "#8ab4f8",
            Role.LinkVisited: "#c58af9",
        },
        disabled_text="#767980",
        disabled_highlight="#505359",
    )


def light_palette() -> QPalette:
    return _palette(
        {
            Role.Window: "#efefef",
            Role.WindowText: "#1d1d1f",
            Role.Base: "#ffffff",
            Role.AlternateBase: "#f5f5f7",
            Role.ToolTipBase: "#ffffdc",
            Role.ToolTipText: "#1d1d1f",
            Role.PlaceholderText: "#8a8a8e",
            Role.Text: "#1d1d1f",
            Role.Button: "#efefef",
            Role.ButtonText: "#1d1d1f",
            Role.BrightText: "#d00000",
            Role.Light: "#ffffff",
            Role.Midlight: "#e3e3e3",
            Role.Mid: "#b8b8b8",
            Role.Dark: "#9f9f9f",
            Role.Shadow: "#767676",
            Role.Highlight: "#3071c9",
            Role.HighlightedText: "#ffffff",
            Role.Link: "#1a5fb4",
            Role.LinkVisited: "#7b3fb4",
        },
        disabled_text="#a0a0a0",
        disabled_highlight="#c2c2c2",
    )


# -- colours that are not a palette role ----------------------------------------------------------------
TEXT_CONTRAST = 4.5  # WCAG AA for text
_TONE = "nexusTone"  # a widget's tone, for set_tone
_TONE_CSS = "nexusToneCss"
_ERROR = {"light": "#b00020", "dark": "#ff8a80"}
_SUCCESS = {"light": "#1e7a34", "dark": "#81c995"}
_NOTE_TINT = "#7a5ea8"  # the drive narrative's box: a hint of violet over the text background


def _luminance(color: QColor) -> float:
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) + 0.0722 * channel(color.blueF())


def contrast(a: QColor, b: QColor) -> float:
    """WCAG 2's contrast ratio: 1 (none) to 21 (black on white)."""
    light, dark = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def mix(a: QColor | str, b: QColor | str, share: float) -> QColor:
    """a moved `share` of the way to b."""
    start, end = QColor(a), QColor(b)
    red, green, blue = (
        x + (y - x) * share
        for x, y in (
            (start.redF(), end.redF()),
            (start.greenF(), end.greenF()),
            (start.blueF(), end.blueF()),
        )
    )
    return QColor.fromRgbF(red, green, blue)


def _palette_now(palette: QPalette | None) -> QPalette:
    return palette if palette is not None else _app().palette()


def surfaces(palette: QPalette | None = None) -> list[QColor]:
    """What text may be drawn on: every background role (a tab's pane lies between Button and Light)."""
    palette = _palette_now(palette)
    roles = (Role.Window, Role.Base, Role.AlternateBase, Role.Button, Role.Light, Role.Midlight)
    return [palette.color(role) for role in roles]


def readable(color: QColor | str, palette: QPalette | None = None, minimum: float = TEXT_CONTRAST) -> QColor:
    """The colour itself where it reads on every surface, else moved towards the palette's text colour
    just until it does (a drive's orange darkens on white, a deep red lightens on dark grey)."""
    palette = _palette_now(palette)
    text = palette.color(Role.WindowText)
    grounds = surfaces(palette)
    for step in range(21):
        candidate = mix(color, text, step / 20)
        if all(contrast(candidate, ground) >= minimum for ground in grounds):
            return candidate
    return text


def colour(tone: str, palette: QPalette | None = None) -> QColor:
    """A colour for words: "muted" (dates, sources, captions: the text colour faded as far as it still
    reads), "error", "success", or "#rrggbb" (an accent of its own, made readable)."""
    palette = _palette_now(palette)
    shade = "dark" if palette.color(Role.Window).lightness() < 128 else "light"
    if tone == "muted":
        text, ground = palette.color(Role.WindowText), palette.color(Role.Window)
        return readable(mix(text, ground, 0.5), palette, TEXT_CONTRAST + 0.2)  # a margin for rounding
    if tone == "error":
        return readable(_ERROR[shade], palette)
    if tone == "success":
        return readable(_SUCCESS[shade], palette)
    return readable(tone, palette)


def tinted(html: str, tone: str) -> str:
    """Rich text in a tone's colour for the theme drawn now (status lines, errors, results)."""
    return f"<span style='color:{colour(tone).name()}'>{html}</span>"


def note_box_css(palette: QPalette | None = None) -> str:
    """A box that sets a paragraph apart (the drives' narrative): tinted, in the theme's shade."""
    palette = _palette_now(palette)
    base = palette.color(Role.Base)
    dark = base.lightness() < 128
    fill = mix(base, _NOTE_TINT, 0.16 if dark else 0.07)
    border = mix(base, _NOTE_TINT, 0.38 if dark else 0.25)
    return (
        f"background:{fill.name()}; border:1px solid {border.name()}; border-radius:6px; padding:8px;"
        f" color:{palette.color(Role.Text).name()}"
    )


def set_tone(widget: QWidget, tone: str, css: str = "") -> None:
    """Give a widget's text a `colour()` (or "note-box": note_box_css), with more style sheet (`css`);
    given again whenever the theme changes."""
    widget.setProperty(_TONE, tone)
    widget.setProperty(_TONE_CSS, css)
    _apply_tone(widget)


def _apply_tone(widget: QWidget) -> None:
    tone, css = widget.property(_TONE), widget.property(_TONE_CSS) or ""
    style = note_box_css() if tone == "note-box" else f"color:{colour(tone).name()}"
    widget.setStyleSheet(f"{style}; {css}" if css else style)


def _restyle_all(app: QApplication) -> None:
    """After a palette change: toned widgets get their colours again, and every other widget with a style
    sheet is polished again (a style sheet keeps the palette it was polished with: labels stayed in the
    light theme's near-black on the dark one).

    Two passes: the widgets to restyle are picked first, reading only; then only they are changed. Setting
    a style sheet can make Qt rebuild a widget's internal children (a combo box's popup), and touching one
    of those, deleted under a list taken before, crashed the process (a segmentation fault in a CI run)."""
    styled = [
        (widget, bool(widget.property(_TONE)))
        for widget in app.allWidgets()
        if isValid(widget) and (widget.property(_TONE) or widget.styleSheet())
    ]
    for widget, toned in styled:
        if not isValid(widget):
            continue
        if toned:
            _apply_tone(widget)
        else:
            widget.setStyleSheet(widget.styleSheet())


class _Style(QProxyStyle):
    """Fusion, with a check box's frame that can be seen: Fusion draws it a shade darker than the window,
    which on the dark theme's menu is 1.1:1 (the tray's "Pause autonomy" box was invisible)."""

    def drawPrimitive(
        self,
        element: QStyle.PrimitiveElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        super().drawPrimitive(element, option, painter, widget)
        if element == QStyle.PrimitiveElement.PE_IndicatorCheckBox:
            palette = option.palette
            frame = mix(palette.color(Role.Text), palette.color(Role.Base), 0.4)
            painter.save()
            painter.setPen(QPen(frame, 1))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(QRectF(option.rect).adjusted(0.5, 0.5, -1.5, -1.5))
            painter.restore()


def _fusion(app: QApplication) -> None:
    app.setStyle(_Style("Fusion"))


def desktop_prefers_dark() -> bool:
    """Whether the desktop says it is in dark mode (False where it does not say)."""
    return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


def is_dark() -> bool:
    """Whether the app is drawn dark now (for colours a widget paints itself)."""
    return _app().palette().color(Role.Window).lightness() < 128


def apply_theme(theme: str) -> None:
    """ "light", "dark" or "system" (the desktop's own look, following its light/dark switch)."""
    global _theme, _listening
    app = _app()
    original = _remember_original(app)
    _theme = theme if theme in THEMES else "system"
    hints = QGuiApplication.styleHints()
    if hasattr(hints, "setColorScheme"):  # Qt 6.8+: native parts (title bars) follow too
        scheme = {"light": Qt.ColorScheme.Light, "dark": Qt.ColorScheme.Dark}.get(_theme)
        hints.setColorScheme(scheme or Qt.ColorScheme.Unknown)
    if _theme == "system":
        if app.style().name().lower() != original.style.lower():
            app.setStyle(original.style)
        palette = QPalette(original.palette)
        # A desktop in dark mode whose platform gives Qt no dark palette (plain X11, some Linux desktops).
        if desktop_prefers_dark() and palette.color(Role.Window).lightness() >= 128:
            _fusion(app)
            palette = dark_palette()
        app.setPalette(palette)
    else:
        _fusion(app)
        app.setPalette(dark_palette() if _theme == "dark" else light_palette())
    _restyle_all(app)
    if not _listening:
        hints.colorSchemeChanged.connect(_on_scheme_changed)
        _listening = True


def _on_scheme_changed(_scheme: Qt.ColorScheme) -> None:
    if _theme == "system":
        apply_theme("system")


def apply_font_size(points: int) -> None:
    """The text size in points for every widget that does not set its own; 0: the desktop's."""
    app = _app()
    font = QFont(_remember_original(app).font)
    if points > 0:
        font.setPointSize(points)
    app.setFont(font)


def apply_appearance(theme: str, font_size: int) -> None:
    apply_theme(theme)
    apply_font_size(font_size)


def default_font_size() -> int:
    """The desktop's own text size in points (what 0 means)."""
    return _remember_original(_app()).font.pointSize()

"""The app's look: light, dark or the desktop's own, and the text size, applied to every window at once.

A palette (not a style sheet) carries the colours, so every widget, the ones other windows build later
included, follows without knowing about themes. Light and dark are drawn with the Fusion style, which
honours a palette on every platform; "system" gives the desktop's own style and palette back and follows
the desktop when it switches between light and dark (QStyleHints.colorScheme, Qt 6.5+).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

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


def _palette(colors: dict[Role, str], disabled_text: str) -> QPalette:
    palette = QPalette()
    for role, color in colors.items():
        palette.setColor(role, QColor(color))
    for role in (Role.Text, Role.WindowText, Role.ButtonText, Role.PlaceholderText):
        palette.setColor(Group.Disabled, role, QColor(disabled_text))
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
    )


def desktop_prefers_dark() -> bool:
    """Whether the desktop says it is in dark mode (False where it does not say)."""
    return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


def is_dark() -> bool:
    """Whether the app is drawn dark now (for colours a widget paints itself)."""
    return _app().palette().color(Role.Window).lightness() < 128


def current_theme() -> str:
    return _theme


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
            app.setStyle("Fusion")
            palette = dark_palette()
        app.setPalette(palette)
    else:
        app.setStyle("Fusion")
        app.setPalette(dark_palette() if _theme == "dark" else light_palette())
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

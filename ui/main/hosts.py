"""What the main window's controllers ask of the window, declared here below both: the controllers import
these protocols, never the window, and MainWindow meets them by having the methods (ui/main/main_window.py).
Each is narrow: only what that controller needs of the window beside the widgets and objects it is given."""

from __future__ import annotations

from typing import Protocol


class StatusHost(Protocol):
    def show_status(self, text: str, timeout_ms: int) -> None:
        """A passing message in the window's status bar."""


class TurnHost(StatusHost, Protocol):
    def check_language(self, slug: str) -> None:
        """Ask again whether the persona's model speaks its language (the notice above the conversation)."""

    def show_opened(self) -> None:
        """The title, the model and Ready for the persona shown."""

    def room_shown(self) -> bool:
        """A room's panel is in the central area in place of the conversation."""


class RoomHost(StatusHost, Protocol):
    def follow_shown_page(self, room_shown: bool) -> None:
        """The persona's menus and buttons on (a persona shown) or off (a room shown)."""

    def show_title(self) -> None:
        """The window's title names the persona shown."""


class OpenerHost(StatusHost, Protocol):
    def select_persona(self, slug: str) -> None: ...

    def refresh_personas(self, *, open_default: bool = False) -> None: ...

    def show_language(self, code: str) -> None: ...

    def draft(self) -> str:
        """The words in the message box now (the prompt view shows what they would send)."""

    def answering(self, slug: str) -> bool:
        """This persona's reply is under way, shown or not."""

    def tray_follows_settings(self) -> None:
        """The tray's own check box says what the settings say now."""


class MenuHost(Protocol):
    def quit_app(self) -> None: ...

    def change_language(self, code: str) -> None: ...

    def escape(self) -> None: ...

    def on_card_imported(self, slug: str) -> None: ...

    def show_inbox(self) -> None: ...

"""Desktop notifications: one small interface, one real backend (desktop-notifier), one that does nothing.

Why desktop-notifier and not plyer: docs/notifications.md (both were tried against a real daemon here).

A notification is a convenience on top of the in-app inbox and the tray badge, never the only way a person
learns of a message: `notify()` never raises, logs what went wrong and returns False, and `available()` says
in words why notifications cannot work here (for `nexus-ark doctor`).

desktop-notifier is asyncio-based (on Linux it talks D-Bus through dbus-fast and hears clicks as D-Bus
signals on the loop). Nexus Ark is not an asyncio app, so the notifier runs its own event loop on one daemon
thread ("notify-loop"); `notify()` hands the work to that loop and waits at most `wait_s` for the answer.
An `on_click` callback runs on that thread: a caller with a GUI moves it to its own thread (the window does,
through a queued Qt signal).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any, Protocol

log = logging.getLogger(__name__)

BODY_CHARS = 160  # a notification bubble shows two or three lines; the full text is in the conversation
TITLE_CHARS = 80
BUS_NAME = "org.freedesktop.Notifications"
BUS_PATH = "/org/freedesktop/Notifications"

OnClick = Callable[[], None]


class _NoTraceback(logging.Filter):
    """desktop-notifier logs every failed send with a full traceback (a missing session D-Bus is the common
    case, once per message written first). Its record keeps its line for the log; the reason is said once by
    `DesktopNotifications.notify` in words, so the stack is not printed again and again."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.levelno < logging.ERROR:
            record.msg = f"{record.getMessage()}: {record.exc_info[1]}"
            record.args = None
            record.exc_info = record.exc_text = None
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


logging.getLogger("desktop_notifier.backends.base").addFilter(_NoTraceback())


def first_line(text: str, limit: int = BODY_CHARS) -> str:
    """The first non-empty line of a message, clipped at a word where possible, with an ellipsis."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,.;:、。") + "…"


class Notifier(Protocol):
    def available(self) -> tuple[bool, str]:
        """(True, what delivers them) or (False, why not, in words a person can act on)."""
        ...

    def notify(self, title: str, body: str, *, on_click: OnClick | None = None) -> bool:
        """Show a notification; True once the desktop accepted it. Never raises."""
        ...

    def close(self) -> None: ...


class NullNotifier:
    """No desktop notifications (none wanted, or none possible): the inbox and the tray badge remain."""

    def __init__(self, reason: str = "desktop notifications are off") -> None:
        self.reason = reason

    def available(self) -> tuple[bool, str]:
        return False, self.reason

    def notify(self, title: str, body: str, *, on_click: OnClick | None = None) -> bool:
        log.debug("notification not shown (%s): %s", self.reason, title)
        return False

    def close(self) -> None:
        pass


class DesktopNotifications:
    """Notifications through desktop-notifier (D-Bus on Linux, the platform's API on macOS and Windows).

    Click callbacks need the loop that heard the notification to keep running, so one instance lives as
    long as the app and is closed at exit."""

    def __init__(self, app_name: str = "Nexus Ark", icon: Path | None = None, wait_s: float = 3.0) -> None:
        self.app_name = app_name
        self.icon = icon
        self.wait_s = wait_s
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._notifier: Any = None
        self._closed = False
        self._off_because: str | None = None  # said once while notifications fail for the same reason

    # -- the loop thread ------------------------------------------------------------------------------
    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise RuntimeError("the notifier is closed")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="notify-loop", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def _run(self, coro: Coroutine[Any, Any, Any], wait_s: float) -> Any:
        future = asyncio.run_coroutine_threadsafe(coro, self._ensure_loop())
        try:
            return future.result(wait_s)
        except FutureTimeout:
            future.cancel()
            raise TimeoutError(f"no answer within {wait_s:g} s") from None

    def _the_notifier(self) -> Any:
        if self._notifier is None:
            from desktop_notifier import DesktopNotifier, Icon

            icon = Icon(path=self.icon) if self.icon is not None and self.icon.exists() else None
            self._notifier = DesktopNotifier(app_name=self.app_name, app_icon=icon)
        return self._notifier

    # -- the interface --------------------------------------------------------------------------------
    def available(self) -> tuple[bool, str]:
        try:
            import desktop_notifier  # noqa: F401
        except ImportError:
            return False, "desktop-notifier is not installed (pip install desktop-notifier)"
        if sys.platform.startswith("linux"):
            try:
                return self._run(_probe_dbus(), self.wait_s)
            except Exception as exc:
                return False, f"the session D-Bus did not answer ({exc})"
        try:
            from desktop_notifier.main import get_backend_class

            backend = get_backend_class().__name__
        except Exception as exc:  # an OS version the library does not know
            return False, f"no notification backend for this system ({exc})"
        if backend == "DummyNotificationCenter":
            return False, "this system does not let this program show notifications (unsigned app on macOS?)"
        return True, f"desktop-notifier ({backend})"

    def notify(self, title: str, body: str, *, on_click: OnClick | None = None) -> bool:
        title = first_line(title, TITLE_CHARS)
        body = first_line(body)
        try:
            shown = bool(self._run(self._send(title, body, on_click), self.wait_s))
        except Exception as exc:
            shown, why = False, str(exc)
        else:
            why = "" if shown else self._why_not()
        if shown:
            if self._off_because is not None:
                log.info("desktop notifications work again")
            self._off_because = None
        elif why != self._off_because:
            self._off_because = why
            log.warning(
                "desktop notifications are off: %s. Messages written first still arrive in the inbox "
                "and the tray.",
                why,
            )
        else:
            log.debug("desktop notification %r not shown (still: %s)", title, why)
        return shown

    def _why_not(self) -> str:
        ok, detail = self.available()
        return f"{detail} did not accept the notification" if ok else detail

    async def _send(self, title: str, body: str, on_click: OnClick | None) -> bool:
        notifier = self._the_notifier()
        dispatched = asyncio.Event()

        def clicked() -> None:
            if on_click is None:
                return
            try:
                on_click()
            except Exception:  # a broken callback must not kill the loop that hears the next click
                log.exception("the click handler of notification %r failed", title)

        # desktop-notifier logs and swallows a failed send; on_dispatched is called only on success.
        await notifier.send(
            title=title,
            message=body,
            on_clicked=clicked if on_click is not None else None,
            on_dispatched=dispatched.set,
        )
        if not dispatched.is_set():
            log.debug("desktop notification %r was not accepted by the desktop", title)
            # The library keeps the bus connection of a failed first attempt and opens another on the next
            # try: close it, so a desktop without a notification service does not collect open sockets.
            backend = _platform_backend(notifier)
            if getattr(backend, "interface", True) is None and getattr(backend, "bus", None) is not None:
                backend.bus.disconnect()
                backend.bus = None
        return dispatched.is_set()

    def close(self) -> None:
        with self._lock:
            loop, thread, self._closed = self._loop, self._thread, True
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        notifier = self._notifier
        if notifier is not None:
            bus = getattr(_platform_backend(notifier), "bus", None)
            if bus is not None:
                loop.call_soon_threadsafe(bus.disconnect)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=2.0)
        if not thread.is_alive():
            loop.close()


def _platform_backend(notifier: object) -> Any:
    """desktop-notifier's platform backend (on Linux, the one holding the D-Bus connection): the library
    keeps it private (`_backend`) and offers no way to close a connection it left open, so it is read here
    alone. None where a release names it otherwise: the connection is then left to the library."""
    return getattr(notifier, "_backend", None)


async def _probe_dbus() -> tuple[bool, str]:
    """Is there a notification service on the session bus (running, or one the bus can start)?"""
    from dbus_fast import Message
    from dbus_fast.aio import MessageBus

    try:
        bus = await MessageBus().connect()
    except Exception as exc:
        where = os.environ.get("DBUS_SESSION_BUS_ADDRESS") or "no DBUS_SESSION_BUS_ADDRESS"
        return False, f"no session D-Bus to talk to ({where}: {exc})"
    try:

        async def call(
            member: str, *body: Any, signature: str = "", dest: str = "org.freedesktop.DBus"
        ) -> Any:
            path = "/org/freedesktop/DBus" if dest == "org.freedesktop.DBus" else BUS_PATH
            reply = await bus.call(
                Message(
                    destination=dest,
                    path=path,
                    interface=dest,
                    member=member,
                    signature=signature,
                    body=list(body),
                )
            )
            if reply is None or reply.message_type.name == "ERROR":
                raise RuntimeError(f"{member}: {reply.error_name if reply else 'no reply'}")
            return reply.body

        running = (await call("NameHasOwner", BUS_NAME, signature="s"))[0]
        if not running and BUS_NAME not in (await call("ListActivatableNames"))[0]:
            return False, "no notification service on the session D-Bus (no daemon such as dunst runs)"
        name, vendor, version, _spec = await call("GetServerInformation", dest=BUS_NAME)
        return True, f"{name} {version} ({vendor}) on the session D-Bus"
    except Exception as exc:
        return False, f"the notification service did not answer: {exc}"
    finally:
        bus.disconnect()


def default_notifier(icon: Path | None = None) -> Notifier:
    """The notifier the app uses: desktop-notifier where it is installed, else one that says why not."""
    try:
        import desktop_notifier  # noqa: F401
    except ImportError:
        return NullNotifier("desktop-notifier is not installed (pip install desktop-notifier)")
    return DesktopNotifications(icon=icon)

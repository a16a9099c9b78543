"""What the chat view shows and what its links do: pages of history, search, regenerate, edit, delete and
versions. The main window keeps the turn itself (send, stream, stop); this keeps main_window.py small.

Reads go to the history thread (a read-only connection); writes go to the session worker, which runs them
on the persona's runtime. Nothing here touches the database or a file on the UI thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QMetaObject, QObject, Qt, QThread, Signal
from PySide6.QtWidgets import QCheckBox, QMessageBox

from nexus_ark.agent.session import TurnResult
from nexus_ark.memory.conversation_pages import MessagePage, ShownMessage
from ui.chat_view import Bubble
from ui.history_loader import HistoryLoader
from ui.i18n import tr
from ui.inbox_window import why_line

if TYPE_CHECKING:
    from ui.main_window import MainWindow


class ConversationController(QObject):
    request_load = Signal(str, str, int)  # kind, slug, message id
    request_search = Signal(str, str)
    request_fetch = Signal(str, object)
    page_shown = Signal(str)  # kind, once the view shows it (tests wait on it)

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.chat = window.chat
        self.search_bar = window.search_bar
        self.thread_ = QThread(self)
        self.thread_.setObjectName("history-loader")
        self.loader = HistoryLoader(window.app)
        self.loader.moveToThread(self.thread_)
        self.request_load.connect(self.loader.load)
        self.request_search.connect(self.loader.search)
        self.request_fetch.connect(self.loader.fetch)
        self.loader.page.connect(self._on_page)
        self.loader.searched.connect(self._on_searched)
        self.loader.shown.connect(self._on_shown)
        self.loader.failed.connect(self._on_failed)
        self.thread_.start()
        self.chat.need_older.connect(lambda first: self._load("older", first))
        self.chat.need_newer.connect(lambda last: self._load("newer", last))
        self.chat.latest_button.clicked.connect(self.jump_to_latest)
        self.chat.action.connect(self._on_action)
        self._shown_kind = ""
        self.chat.page_ready.connect(lambda: self.page_shown.emit(self._shown_kind))
        self.search_bar.query.connect(self._search)
        self.search_bar.step.connect(self._step)
        self.search_bar.closed.connect(self._search_closed)
        self._hits: list[int] = []
        self._hit = -1
        self._search_text = ""
        self._deferred = False  # a page arrived while a turn was shown: load the latest after it

    # -- pages ------------------------------------------------------------------------------------
    def _load(self, kind: str, message_id: int = 0) -> None:
        if self.window.current_slug:
            self.request_load.emit(kind, self.window.current_slug, message_id)

    def show_latest(self) -> None:
        self._load("latest")

    def jump_to_latest(self) -> None:
        if self.chat.has_newer:
            self.show_latest()
        else:
            self.chat.scroll_to_end()

    def bubble(self, shown: ShownMessage) -> Bubble:
        reason = shown.message.meta.get("autonomous")
        return Bubble.of(shown, self.window.current_name, why_line(reason) if reason else "")

    def _on_page(self, kind: str, slug: str, page: MessagePage, message_id: int) -> None:
        if slug != self.window.current_slug:
            return  # another persona was chosen meanwhile
        if kind in ("latest", "around") and self.window.streaming:
            self._deferred = True  # a turn is being shown: the page would wipe it; reloaded after it
            return
        if kind in ("older", "newer") and not self._adjacent(kind, message_id):
            return  # asked for before the view was replaced (a jump to the latest, a search hit)
        bubbles = [self.bubble(m) for m in page.messages]
        if kind == "older":
            self.chat.prepend_page(bubbles, page.has_older)
        elif kind == "newer":
            self.chat.append_page(bubbles, page.has_newer)
        elif not bubbles and kind == "latest":
            self.chat.show_placeholder(tr("Say hello to {name}.", name=self.window.current_name))
        else:
            focus = message_id if kind == "around" else None
            if self._search_text:  # highlighted as the page is drawn
                current = self._hits[self._hit] if 0 <= self._hit < len(self._hits) else None
                self.chat.set_search(self._search_text, current)
            self.chat.show_page(bubbles, page.has_older, page.has_newer, focus_id=focus)
        last = page.messages[-1].message if page.messages and not page.has_newer else None
        self.window.show_continue(last.id if last is not None and last.meta.get("cut_by_limit") else None)
        self._shown_kind = kind
        if not self.chat.drawing:
            self.page_shown.emit(kind)

    def _adjacent(self, kind: str, message_id: int) -> bool:
        shown = self.chat.bubbles
        edge = (shown[0] if kind == "older" else shown[-1]).id if shown else None
        if edge == message_id and not self.chat.drawing:
            return True
        if not self.chat.drawing:
            self.chat.loading_older = self.chat.loading_newer = False
            self.chat.check_edges()
        return False

    def _on_failed(self, slug: str, message: str) -> None:
        if slug == self.window.current_slug:
            self.chat.loading_older = self.chat.loading_newer = False
            self.window.state_label.setText(tr("Error: {message}", message=message.splitlines()[0]))

    def load_avatar(self, slug: str) -> None:
        """The persona's picture (read, decoded and scaled off the UI thread), else an initial."""
        self.chat.set_persona(self.window.current_name, self.window.app.personas.avatar_file(slug))

    # -- after a turn -----------------------------------------------------------------------------
    def after_turn(self, result: TurnResult | None, kind: str) -> None:
        """The new messages get their ids and links; a regenerate, an edit or a continued reply changed the
        line (or what was shown during the turn is stale): the latest page again."""
        if kind != "send" or self._deferred or result is None:
            self._deferred = False
            self.show_latest()
            return
        ids = [i for i in (result.user_message_id, result.reply_id) if i]
        if ids:
            self.request_fetch.emit(self.window.current_slug, ids)

    def _on_shown(self, slug: str, found: list[ShownMessage]) -> None:
        if slug != self.window.current_slug:
            return
        user = next((self.bubble(m) for m in found if m.message.role == "user"), None)
        reply = next((self.bubble(m) for m in found if m.message.role == "assistant"), None)
        self.chat.settle(user, reply)

    # -- search -----------------------------------------------------------------------------------
    def open_search(self) -> None:
        self.search_bar.open_bar()

    def _search(self, text: str) -> None:
        self._search_text = text
        self._hits, self._hit = [], -1
        if not text:
            self.chat.set_search("")
            self.search_bar.show_count(0, 0, searched=False)
            return
        self.request_search.emit(self.window.current_slug, text)

    def _on_searched(self, slug: str, text: str, ids: list[int]) -> None:
        if slug != self.window.current_slug or text != self._search_text:
            return  # an older query's answer
        self._hits = ids
        self._hit = len(ids) - 1  # the newest hit first, as the person reads upward from the end
        self._go_to_hit()

    def _step(self, direction: int) -> None:
        if not self._hits:
            return
        self._hit = max(0, min(len(self._hits) - 1, self._hit + direction))
        self._go_to_hit()

    def _go_to_hit(self) -> None:
        total = len(self._hits)
        self.search_bar.show_count(self._hit + 1 if total else 0, total, searched=True)
        if not total:
            self.chat.set_search(self._search_text)
            return
        target = self._hits[self._hit]
        if self.chat.message(target) is not None:
            self.chat.set_search(self._search_text, target)
        else:  # further back than what is shown: bring its page
            self._load("around", target)

    def _search_closed(self) -> None:
        self._search_text = ""
        self._hits, self._hit = [], -1
        self.chat.set_search("")
        self.window.input.setFocus()

    # -- a message's links ------------------------------------------------------------------------
    def _on_action(self, kind: str, message_id: int) -> None:
        window = self.window
        if window.streaming or not window._ready:
            window.statusBar().showMessage(tr("Wait until the reply is finished."), 4000)
            return
        if kind == "regenerate":
            window.regenerate(message_id)
        elif kind == "edit":
            bubble = self.chat.message(message_id)
            if bubble is not None:
                window.begin_edit(message_id, bubble.text)
        elif kind == "delete":
            self._confirm_delete(message_id)
        elif kind == "version":
            window.worker_request("version", message_id)

    def _confirm_delete(self, message_id: int) -> None:
        box = QMessageBox(self.window)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(tr("Delete message"))
        box.setText(tr("Delete this message from the conversation?"))
        forget = QCheckBox(tr("Also forget what memory learned from it"))
        box.setCheckBox(forget)
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.finished.connect(
            lambda answer: (
                answer == QMessageBox.StandardButton.Yes
                and self.window.worker_request("delete", message_id, forget.isChecked())
            )
        )
        box.open()

    def close(self) -> None:
        """Close the read-only connection on its own thread, then stop that thread (twice is harmless: a
        window may be closed again, and a blocking call into a stopped thread would never return)."""
        if not self.thread_.isRunning():
            return
        QMetaObject.invokeMethod(self.loader, "close", Qt.ConnectionType.BlockingQueuedConnection)
        self.thread_.quit()
        self.thread_.wait()

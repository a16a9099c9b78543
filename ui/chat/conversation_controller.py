"""What the chat view shows and what its links do: pages of history, search, regenerate, edit, delete and
versions. The main window keeps the turn itself (send, stream, stop); this keeps main_window.py small.
It is given the widgets it drives and the open persona; what it wants of the window (a turn, a line in the
status bar) it asks by signal, so it never imports the window.

Reads go to the history loader's lane (a read-only connection); writes go to the session worker, which
runs them on the persona's runtime. Nothing here touches the database or a file on the UI thread.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QCheckBox, QMessageBox

from nexus_ark.agent.session import TurnResult
from nexus_ark.app import NexusApp
from nexus_ark.memory.conversation_pages import MessagePage, ShownMessage
from ui.chat.bubble import Bubble
from ui.chat.chat_search import SearchBar
from ui.chat.chat_view import ChatView
from ui.chat.history_loader import HistoryLoader
from ui.util.i18n import tr
from ui.util.open_persona import OpenPersona
from ui.util.reasons import why_line
from ui.util.tasks import while_open


class ConversationController(QObject):
    page_shown = Signal(str)  # kind, once the view shows it (tests wait on it)
    # What it asks of the window:
    continue_offered = Signal(object)  # the id of the last reply when the token limit cut it, else None
    error = Signal(str)  # one line for the status
    status = Signal(str)  # a passing message in the status bar
    regenerate_requested = Signal(int)  # reply id
    edit_requested = Signal(int, str)  # message id, its text
    change_requested = Signal(str, int, bool)  # "delete" | "version", message id, forget

    def __init__(
        self, app: NexusApp, shown: OpenPersona, chat: ChatView, search_bar: SearchBar, parent: QObject
    ) -> None:
        super().__init__(parent)
        self.app = app
        self.shown = shown
        self.chat = chat
        self.search_bar = search_bar
        # Answers that arrive once the window (and this, its child) is deleted are dropped.
        self.loader = HistoryLoader(app, while_open(self, self._on_failed))
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
        if self.shown.slug:
            self.loader.load(kind, self.shown.slug, message_id, while_open(self, self._on_page))

    def show_latest(self) -> None:
        self._load("latest")

    def jump_to_latest(self) -> None:
        if self.chat.has_newer:
            self.show_latest()
        else:
            self.chat.scroll_to_end()

    def bubble(self, shown: ShownMessage) -> Bubble:
        reason = shown.message.meta.get("autonomous")
        return Bubble.of(shown, self.shown.name, why_line(reason) if reason else "")

    def _on_page(self, kind: str, slug: str, page: MessagePage, message_id: int) -> None:
        if slug != self.shown.slug:
            return  # another persona was chosen meanwhile
        if kind in ("latest", "around") and self.shown.streaming:
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
            self.chat.show_placeholder(tr("Say hello to {name}.", name=self.shown.name))
        else:
            focus = message_id if kind == "around" else None
            if self._search_text:  # highlighted as the page is drawn
                current = self._hits[self._hit] if 0 <= self._hit < len(self._hits) else None
                self.chat.set_search(self._search_text, current)
            self.chat.show_page(bubbles, page.has_older, page.has_newer, focus_id=focus)
        last = page.messages[-1].message if page.messages and not page.has_newer else None
        self.continue_offered.emit(last.id if last is not None and last.meta.get("cut_by_limit") else None)
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
        if slug == self.shown.slug:
            self.chat.loading_older = self.chat.loading_newer = False
            self.error.emit(tr("Error: {message}", message=message.splitlines()[0]))

    def load_avatar(self, slug: str) -> None:
        """The persona's picture (read, decoded and scaled off the UI thread), else an initial."""
        self.chat.set_persona(self.shown.name, self.app.personas.store.avatar_file(slug))

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
            self.loader.fetch(self.shown.slug, ids, while_open(self, self._on_shown))

    def turn_failed(self, kind: str) -> None:
        """A page that arrived during the failed turn was held back: it is loaded now."""
        if self._deferred:
            self.after_turn(None, kind)

    def _on_shown(self, slug: str, found: list[ShownMessage]) -> None:
        if slug != self.shown.slug:
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
        self.loader.search(self.shown.slug, text, while_open(self, self._on_searched))

    def _on_searched(self, slug: str, text: str, ids: list[int]) -> None:
        if slug != self.shown.slug or text != self._search_text:
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

    # -- a message's links ------------------------------------------------------------------------
    def _on_action(self, kind: str, message_id: int) -> None:
        if not self.shown.idle():
            self.status.emit(tr("Wait until the reply is finished."))
            return
        if kind == "regenerate":
            self.regenerate_requested.emit(message_id)
        elif kind == "edit":
            bubble = self.chat.message(message_id)
            if bubble is not None:
                self.edit_requested.emit(message_id, bubble.text)
        elif kind == "delete":
            self._confirm_delete(message_id)
        elif kind == "version":
            self.change_requested.emit("version", message_id, False)

    def _confirm_delete(self, message_id: int) -> None:
        box = QMessageBox(self.chat.window())
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(tr("Delete message"))
        box.setText(tr("Delete this message from the conversation?"))
        forget = QCheckBox(tr("Also forget what memory learned from it"))
        box.setCheckBox(forget)
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setWindowModality(Qt.WindowModality.WindowModal)

        def answered(answer: int) -> None:
            if answer == QMessageBox.StandardButton.Yes:
                self.change_requested.emit("delete", message_id, forget.isChecked())

        box.finished.connect(answered)
        box.open()

    def close(self) -> None:
        """Without waiting: the loader's lane closes its connection once idle (twice is harmless: a window
        may be closed again)."""
        self.loader.close()

"""The main window's turn: send, stream, stop, continue, regenerate and edit, through the session worker (each
persona's requests run in order on a lane of its own). A controller the window owns (window.turns), given
the widgets it drives, the open persona, the conversation controller and a narrow host (ui/main/hosts.py).

A reply belongs to its persona, not to the view: while one persona answers, another may be opened and
talked with; the answer goes on in its own conversation (kept here as it streams, shown again if the person
comes back before it ends), and the status line's speed is always the persona's shown."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel, QPushButton

from nexus_ark.agent.session import TurnResult
from nexus_ark.app import NexusApp
from ui.chat.chat_view import ChatView
from ui.chat.conversation_controller import ConversationController
from ui.chat.session_worker import SessionWorker
from ui.main.hosts import TurnHost
from ui.util.i18n import tr, tr_error, tr_notice
from ui.util.message_input import MessageInput
from ui.util.open_persona import OpenPersona


@dataclass
class Answer:
    """A reply under way for one persona, shown or not: what has streamed so far, to show it again."""

    name: str  # the persona's name, as its bubble shows it
    model: str  # the model it answers on, for the status bar when it is shown again
    kind: str  # "send" | "continue" | "regenerate" | "edit"
    sent: str = ""  # the person's message, given back if it could not be saved
    text: str = ""
    resuming: bool = False  # shown again: its stream bubble follows the history page


@dataclass
class TurnWidgets:
    """The window's widgets a turn drives (the window lays them out)."""

    chat: ChatView
    input: MessageInput
    send_button: QPushButton
    continue_button: QPushButton
    stop_button: QPushButton
    model_button: QPushButton
    edit_banner: QLabel
    state_label: QLabel
    speed_label: QLabel


class TurnsController(QObject):
    # What the person asked, for the persona shown when it was done.
    request_open = Signal(str)
    request_send = Signal(str)
    request_continue = Signal(int)
    request_regenerate = Signal(int)
    request_edit = Signal(int, str)
    request_change = Signal(str, int, bool)  # "delete" | "version", message id, forget
    turn_finished = Signal(object)  # the TurnResult, once the window has shown it

    def __init__(
        self,
        app: NexusApp,
        shown: OpenPersona,
        widgets: TurnWidgets,
        conversation: ConversationController,
        host: TurnHost,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.shown = shown
        self.w = widgets
        self.conversation = conversation
        self.host = host
        self.model_name = ""  # the model of the persona shown
        self._answers: dict[str, Answer] = {}  # replies under way, by persona (shown or not)
        # Each persona's last reply speed: the status bar shows the one of the persona shown.
        self._speeds: dict[str, float] = {}
        self._editing: int | None = None  # the message of the person's being said differently
        self._cut_reply: int | None = None  # the reply the token limit cut: Continue goes on with it
        self.worker = SessionWorker(app, app.settings.stream_coalesce_ms)
        self._connect_widgets()
        self._connect_worker()

    def _connect_widgets(self) -> None:
        self.w.input.submitted.connect(self.send_message)
        self.w.send_button.clicked.connect(self.send_message)
        self.w.continue_button.clicked.connect(self.continue_reply)
        self.w.stop_button.clicked.connect(self.stop_reply)
        conversation = self.conversation
        conversation.continue_offered.connect(self.show_continue)
        conversation.regenerate_requested.connect(self.regenerate)
        conversation.page_shown.connect(self._on_page_shown)
        conversation.edit_requested.connect(self.begin_edit)
        conversation.change_requested.connect(self.request_change)

    def _connect_worker(self) -> None:
        worker = self.worker
        # The window's requests carry what the person did; the slug is the persona shown when it was done.
        self.request_open.connect(worker.open_persona)
        self.request_send.connect(lambda text: worker.send(self.shown.slug, text))
        self.request_continue.connect(lambda reply: worker.continue_reply(self.shown.slug, reply))
        self.request_regenerate.connect(lambda reply: worker.regenerate(self.shown.slug, reply))
        self.request_edit.connect(lambda mid, text: worker.edit(self.shown.slug, mid, text))
        self.request_change.connect(lambda *change: worker.change(self.shown.slug, *change))
        worker.changed.connect(self._on_changed)
        worker.change_failed.connect(
            lambda message: self.w.state_label.setText(
                tr("Error: {message}", message=message.splitlines()[0])
            )
        )
        worker.delta.connect(self._on_delta)
        worker.finished.connect(self._on_finished)
        worker.failed.connect(self._on_failed)

    def retranslate(self) -> None:
        self.w.send_button.setText(tr("Send"))
        self.w.continue_button.setText(tr("Continue"))
        self.w.stop_button.setText(tr("Stop"))
        self.w.edit_banner.setText(tr("Editing a message: Enter sends the new wording, Esc cancels."))
        self.show_speed()

    def opened(self, model_name: str) -> None:
        """The persona shown is open on this model: a new conversation, no edit under way."""
        self.model_name = model_name
        self.cancel_edit()

    def show_continue(self, reply_id: int | None) -> None:
        """The last reply was cut by the token limit: Continue goes on with it."""
        self._cut_reply = reply_id
        self.w.continue_button.setVisible(reply_id is not None and not self.shown.streaming)

    def continue_reply(self) -> None:
        if self._cut_reply is None or self.shown.streaming or not self.shown.ready:
            return
        self.w.continue_button.setVisible(False)
        self.w.chat.begin_stream(self.shown.name)
        self._start_turn("continue")
        self.request_continue.emit(self._cut_reply)

    def _start_turn(self, kind: str, sent: str = "") -> None:
        self._answers[self.shown.slug] = Answer(self.shown.name, self.model_name, kind, sent)
        self.shown.streaming = True
        self.set_busy(True)
        self.w.state_label.setText(tr("{name} is writing…", name=self.shown.name))

    def answering(self, slug: str) -> bool:
        """This persona's reply is under way (shown or not)."""
        return slug in self._answers

    def send_message(self) -> None:
        text = self.w.input.toPlainText().strip()
        if not text or self.shown.streaming or not self.shown.ready:
            return
        self.w.input.clear()
        self.w.continue_button.setVisible(False)
        editing, self._editing = self._editing, None
        self.w.edit_banner.setVisible(False)
        chat = self.w.chat
        if chat.has_newer:  # an older stretch is shown: the conversation goes on at its end
            self.conversation.show_latest()
        if editing is not None:
            chat.remove_from(editing)  # what followed stays as a branch; the view reloads after
        chat.add_message(tr("You"), "user", text)
        chat.begin_stream(self.shown.name)
        if editing is not None:
            self._start_turn("edit", text)
            self.request_edit.emit(editing, text)
        else:
            self._start_turn("send", text)
            self.request_send.emit(text)

    def regenerate(self, reply_id: int) -> None:
        """A new version of a reply; the earlier ones stay, browsable with ‹ ›."""
        if self.shown.streaming or not self.shown.ready:
            return
        self.w.chat.remove_from(reply_id)
        self.w.chat.begin_stream(self.shown.name)
        self._start_turn("regenerate")
        self.request_regenerate.emit(reply_id)

    def begin_edit(self, message_id: int, text: str) -> None:
        self._editing = message_id
        field = self.w.input
        field.setPlainText(text)
        field.moveCursor(field.textCursor().MoveOperation.End)
        self.w.edit_banner.setVisible(True)
        field.setFocus()

    @property
    def editing(self) -> bool:
        return self._editing is not None

    def cancel_edit(self) -> None:
        if self._editing is not None:
            self._editing = None
            self.w.input.clear()
        self.w.edit_banner.setVisible(False)

    def _on_changed(self, kind: str, message_id: int) -> None:
        if kind == "delete":
            self.w.chat.remove_message(message_id)
            self.host.show_status(tr("Message deleted."), 4000)
        else:  # another version is on the line now, with what followed it
            self.conversation.show_latest()

    def stop_reply(self) -> None:
        if self.shown.streaming:
            self.worker.stop(self.shown.slug)
            self.w.state_label.setText(tr("Stopping…"))

    # -- what the worker says, for whichever persona ----------------------------------------------
    def _on_delta(self, slug: str, text: str) -> None:
        answer = self._answers.get(slug)
        if answer is None:
            return
        answer.text += text
        if slug == self.shown.slug and self.shown.streaming:
            self.w.chat.append_stream(text)

    def resume_answer(self, slug: str) -> None:
        """The person came back to a persona still answering: its history, then the reply so far, which
        goes on streaming (the persona is open already: its lane is busy with the reply)."""
        answer = self._answers[slug]
        answer.resuming = True
        self.shown.name, self.model_name = answer.name, answer.model
        self.cancel_edit()
        self.conversation.load_avatar(slug)
        self.host.check_language(slug)
        self.w.chat.clear_messages()
        self.conversation.show_latest()  # the stream bubble follows once the page is shown
        self.shown.ready = True
        self.host.show_opened()
        self.show_speed()
        self.w.state_label.setText(tr("{name} is writing…", name=answer.name))

    def _on_page_shown(self, kind: str) -> None:
        answer = self._answers.get(self.shown.slug)
        if answer is None or not answer.resuming or kind != "latest":
            return
        answer.resuming = False
        chat = self.w.chat
        for bubble in list(chat.bubbles):  # the reply as stored so far: the stream shows it instead
            if bubble.status == "streaming" and bubble.id is not None:
                chat.remove_message(bubble.id)
        self.shown.streaming = True
        self.set_busy(True)
        chat.begin_stream(answer.name)
        if answer.text:
            chat.append_stream(answer.text)

    def _on_finished(self, slug: str, result: TurnResult) -> None:
        answer = self._answers.pop(slug, None)
        if result.tokens_per_s:
            self._speeds[slug] = result.tokens_per_s
        if slug != self.shown.slug or not self.shown.streaming:
            self._finished_unseen(slug, answer)
        else:
            self._finished_shown(result, answer.kind if answer is not None else "send")
        self.turn_finished.emit(result)

    def _finished_unseen(self, slug: str, answer: Answer | None) -> None:
        """Not on the screen: the reply is stored in its own conversation. Shown again meanwhile (its page
        on its way), the latest page is read once more, with the reply in it."""
        if slug == self.shown.slug:
            self.conversation.show_latest()
            self.set_busy(False)
            self.show_speed()
            self.w.state_label.setText(tr("Ready"))
        elif answer is not None:
            self.host.show_status(tr("{name} has answered.", name=answer.name), 8000)

    def _finished_shown(self, result: TurnResult, kind: str) -> None:
        self.w.chat.end_stream(result.text, "cut" if result.cut_by_limit else result.status)
        self.shown.streaming = False
        self.show_continue(result.reply_id if result.cut_by_limit else None)
        self.conversation.after_turn(result, kind)
        self.set_busy(False)
        state = self.w.state_label
        state.setToolTip("\n\n".join(tr_notice(w) for w in result.warnings))
        if result.error:
            state.setText(tr("Error: {message}", message=tr_error(result.error).splitlines()[0]))
        elif result.warnings:  # the turn went on, but the person should know recall was weaker
            state.setText(tr("Ready. Memory search used keywords only (details in the tooltip)."))
        else:
            state.setText(tr("Ready"))
        self.show_speed()

    def _on_failed(self, slug: str, message: str) -> None:
        answer = self._answers.pop(slug, None)
        if slug != self.shown.slug or not self.shown.streaming:
            if slug == self.shown.slug:
                self.conversation.show_latest()
                self.set_busy(False)
            name = answer.name if answer is not None else slug
            line = message.splitlines()[0] if message else ""
            self.host.show_status(tr("{name} could not answer: {message}", name=name, message=line), 15_000)
            return
        chat = self.w.chat
        chat.end_stream(chat.streaming_text, "error")
        self.conversation.turn_failed(answer.kind if answer is not None else "send")
        if answer is not None and answer.sent and not self.w.input.toPlainText().strip():
            self.w.input.setPlainText(answer.sent)  # the message could not be saved: give it back
        self.shown.streaming = False
        self.set_busy(False)
        self.w.state_label.setText(tr("Error: {message}", message=message.splitlines()[0]))

    def show_speed(self) -> None:
        """The last reply's speed of the persona shown (another persona's is not this one's)."""
        speed = self._speeds.get(self.shown.slug)
        self.w.speed_label.setText(tr("{tps:.1f} tokens/s", tps=speed) if speed else "")

    def set_busy(self, busy: bool) -> None:
        self.w.send_button.setEnabled(not busy)
        self.w.model_button.setEnabled(not self.shown.streaming and not self.host.room_shown())
        self.w.stop_button.setEnabled(self.shown.streaming)

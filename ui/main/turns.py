"""The main window's turn: send, stream, stop, continue, regenerate and edit, through the session worker (each
persona's requests run in order on a lane of its own). A part of MainWindow (a mixin), kept apart so each
file holds one job.

A reply belongs to its persona, not to the view: while one persona answers, another may be opened and
talked with; the answer goes on in its own conversation (kept here as it streams, shown again if the person
comes back before it ends), and the status line's speed is always the persona's shown."""

from __future__ import annotations

from dataclasses import dataclass

from nexus_ark.agent.session import TurnResult
from ui.chat.session_worker import SessionWorker
from ui.util.i18n import tr, tr_error, tr_notice


@dataclass
class Answer:
    """A reply under way for one persona, shown or not: what has streamed so far, to show it again."""

    name: str  # the persona's name, as its bubble shows it
    model: str  # the model it answers on, for the status bar when it is shown again
    kind: str  # "send" | "continue" | "regenerate" | "edit"
    sent: str = ""  # the person's message, given back if it could not be saved
    text: str = ""
    resuming: bool = False  # shown again: its stream bubble follows the history page


class Turns:
    def _start_worker(self) -> None:
        self.worker = SessionWorker(self.app, self.app.settings.stream_coalesce_ms)
        # The window's requests carry what the person did; the slug is the persona shown when it was done.
        self.request_open.connect(self.worker.open_persona)
        self.request_send.connect(lambda text: self.worker.send(self.current_slug, text))
        self.request_continue.connect(lambda reply: self.worker.continue_reply(self.current_slug, reply))
        self.request_regenerate.connect(lambda reply: self.worker.regenerate(self.current_slug, reply))
        self.request_edit.connect(lambda mid, text: self.worker.edit(self.current_slug, mid, text))
        self.request_change.connect(lambda *change: self.worker.change(self.current_slug, *change))
        self.worker.changed.connect(self._on_changed)
        self.worker.change_failed.connect(
            lambda message: self.state_label.setText(tr("Error: {message}", message=message.splitlines()[0]))
        )
        self.worker.opened.connect(self._on_opened)
        self.worker.open_failed.connect(self._on_open_failed)
        self.worker.delta.connect(self._on_delta)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)

    def show_continue(self, reply_id: int | None) -> None:
        """The last reply was cut by the token limit: Continue goes on with it."""
        self._cut_reply = reply_id
        self.continue_button.setVisible(reply_id is not None and not self.streaming)

    def continue_reply(self) -> None:
        if self._cut_reply is None or self.streaming or not self.ready:
            return
        self.continue_button.setVisible(False)
        self.chat.begin_stream(self.current_name)
        self._start_turn("continue")
        self.request_continue.emit(self._cut_reply)

    def _start_turn(self, kind: str, sent: str = "") -> None:
        self._answers[self.current_slug] = Answer(self.current_name, self.model_name, kind, sent)
        self.streaming = True
        self._set_busy(True)
        self.state_label.setText(tr("{name} is writing…", name=self.current_name))

    def answering(self, slug: str) -> bool:
        """This persona's reply is under way (shown or not)."""
        return slug in self._answers

    def send_message(self) -> None:
        text = self.input.toPlainText().strip()
        if not text or self.streaming or not self.ready:
            return
        self.input.clear()
        self.continue_button.setVisible(False)
        editing, self._editing = self._editing, None
        self.edit_banner.setVisible(False)
        if self.chat.has_newer:  # an older stretch is shown: the conversation goes on at its end
            self.conversation.show_latest()
        if editing is not None:
            self.chat.remove_from(editing)  # what followed stays as a branch; the view reloads after
        self.chat.add_message(tr("You"), "user", text)
        self.chat.begin_stream(self.current_name)
        if editing is not None:
            self._start_turn("edit", text)
            self.request_edit.emit(editing, text)
        else:
            self._start_turn("send", text)
            self.request_send.emit(text)

    def regenerate(self, reply_id: int) -> None:
        """A new version of a reply; the earlier ones stay, browsable with ‹ ›."""
        if self.streaming or not self.ready:
            return
        self.chat.remove_from(reply_id)
        self.chat.begin_stream(self.current_name)
        self._start_turn("regenerate")
        self.request_regenerate.emit(reply_id)

    def begin_edit(self, message_id: int, text: str) -> None:
        self._editing = message_id
        self.input.setPlainText(text)
        self.input.moveCursor(self.input.textCursor().MoveOperation.End)
        self.edit_banner.setVisible(True)
        self.input.setFocus()

    def cancel_edit(self) -> None:
        if self._editing is not None:
            self._editing = None
            self.input.clear()
        self.edit_banner.setVisible(False)

    def _on_changed(self, kind: str, message_id: int) -> None:
        if kind == "delete":
            self.chat.remove_message(message_id)
            self.statusBar().showMessage(tr("Message deleted."), 4000)
        else:  # another version is on the line now, with what followed it
            self.conversation.show_latest()

    def escape(self) -> None:
        if self.room_panel is not None:  # a room is shown: Esc stops its answer and its auto mode
            self.room_panel.stop()
        elif self.streaming:
            self.stop_reply()
        elif self._editing is not None:
            self.cancel_edit()
        elif self.search_bar.isVisible():
            self.search_bar.close_bar()

    def stop_reply(self) -> None:
        if self.streaming:
            self.worker.stop(self.current_slug)
            self.state_label.setText(tr("Stopping…"))

    # -- what the worker says, for whichever persona ----------------------------------------------
    def _on_delta(self, slug: str, text: str) -> None:
        answer = self._answers.get(slug)
        if answer is None:
            return
        answer.text += text
        if slug == self.current_slug and self.streaming:
            self.chat.append_stream(text)

    def resume_answer(self, slug: str) -> None:
        """The person came back to a persona still answering: its history, then the reply so far, which
        goes on streaming (the persona is open already: its lane is busy with the reply)."""
        answer = self._answers[slug]
        answer.resuming = True
        self.current_name, self.model_name = answer.name, answer.model
        self.cancel_edit()
        self.conversation.load_avatar(slug)
        self._check_language(slug)
        self.chat.clear_messages()
        self.conversation.show_latest()  # the stream bubble follows once the page is shown
        self.ready = True
        self._show_opened()
        self._show_speed()
        self.state_label.setText(tr("{name} is writing…", name=answer.name))

    def _on_page_shown(self, kind: str) -> None:
        answer = self._answers.get(self.current_slug)
        if answer is None or not answer.resuming or kind != "latest":
            return
        answer.resuming = False
        for bubble in list(self.chat.bubbles):  # the reply as stored so far: the stream shows it instead
            if bubble.status == "streaming" and bubble.id is not None:
                self.chat.remove_message(bubble.id)
        self.streaming = True
        self._set_busy(True)
        self.chat.begin_stream(answer.name)
        if answer.text:
            self.chat.append_stream(answer.text)

    def _on_finished(self, slug: str, result: TurnResult) -> None:
        answer = self._answers.pop(slug, None)
        if result.tokens_per_s:
            self._speeds[slug] = result.tokens_per_s
        if slug != self.current_slug or not self.streaming:
            # Not on the screen: the reply is stored in its own conversation. Shown again meanwhile (its
            # page on its way), the latest page is read once more, with the reply in it.
            if slug == self.current_slug:
                self.conversation.show_latest()
                self._set_busy(False)
                self._show_speed()
                self.state_label.setText(tr("Ready"))
            elif answer is not None:
                self.statusBar().showMessage(tr("{name} has answered.", name=answer.name), 8000)
            self.turn_finished.emit(result)
            return
        kind = answer.kind if answer is not None else "send"
        self.chat.end_stream(result.text, "cut" if result.cut_by_limit else result.status)
        self.streaming = False
        self.show_continue(result.reply_id if result.cut_by_limit else None)
        self.conversation.after_turn(result, kind)
        self._set_busy(False)
        self.state_label.setToolTip("\n\n".join(tr_notice(w) for w in result.warnings))
        if result.error:
            self.state_label.setText(tr("Error: {message}", message=tr_error(result.error).splitlines()[0]))
        elif result.warnings:  # the turn went on, but the person should know recall was weaker
            self.state_label.setText(tr("Ready. Memory search used keywords only (details in the tooltip)."))
        else:
            self.state_label.setText(tr("Ready"))
        self._show_speed()
        self.turn_finished.emit(result)

    def _on_failed(self, slug: str, message: str) -> None:
        answer = self._answers.pop(slug, None)
        if slug != self.current_slug or not self.streaming:
            if slug == self.current_slug:
                self.conversation.show_latest()
                self._set_busy(False)
            name = answer.name if answer is not None else slug
            line = message.splitlines()[0] if message else ""
            self.statusBar().showMessage(
                tr("{name} could not answer: {message}", name=name, message=line), 15_000
            )
            return
        self.chat.end_stream(self.chat.streaming_text, "error")
        self.conversation.turn_failed(answer.kind if answer is not None else "send")
        if answer is not None and answer.sent and not self.input.toPlainText().strip():
            self.input.setPlainText(answer.sent)  # the message could not be saved: give it back
        self.streaming = False
        self._set_busy(False)
        self.state_label.setText(tr("Error: {message}", message=message.splitlines()[0]))

    def _show_speed(self) -> None:
        """The last reply's speed of the persona shown (another persona's is not this one's)."""
        speed = self._speeds.get(self.current_slug)
        self.speed_label.setText(tr("{tps:.1f} tokens/s", tps=speed) if speed else "")

    def _set_busy(self, busy: bool) -> None:
        self.send_button.setEnabled(not busy)
        self.model_button.setEnabled(not self.streaming and self.room_panel is None)
        self.stop_button.setEnabled(self.streaming)

"""The main window's turn: send, stream, stop, continue, regenerate and edit, through the session worker (its
requests run in order on a lane of their own). A part of MainWindow (a mixin), kept apart so each file holds
one job."""

from __future__ import annotations

from nexus_ark.agent.session import TurnResult
from ui.chat.session_worker import SessionWorker
from ui.util.i18n import tr, tr_error, tr_notice


class Turns:
    def _start_worker(self) -> None:
        self.worker = SessionWorker(self.app, self.app.settings.stream_coalesce_ms)
        self.request_open.connect(self.worker.open_persona)
        self.request_send.connect(self.worker.send)
        self.request_continue.connect(self.worker.continue_reply)
        self.request_regenerate.connect(self.worker.regenerate)
        self.request_edit.connect(self.worker.edit)
        self.request_change.connect(self.worker.change)
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

    def _start_turn(self, kind: str) -> None:
        self._turn_kind = kind
        self.streaming = True
        self._set_busy(True)
        self.state_label.setText(tr("{name} is writing…", name=self.current_name))

    def send_message(self) -> None:
        text = self.input.toPlainText().strip()
        if not text or self.streaming or not self.ready:
            return
        self.input.clear()
        self.continue_button.setVisible(False)
        self._last_sent = text
        editing, self._editing = self._editing, None
        self.edit_banner.setVisible(False)
        if self.chat.has_newer:  # an older stretch is shown: the conversation goes on at its end
            self.conversation.show_latest()
        if editing is not None:
            self.chat.remove_from(editing)  # what followed stays as a branch; the view reloads after
        self.chat.add_message(tr("You"), "user", text)
        self.chat.begin_stream(self.current_name)
        if editing is not None:
            self._start_turn("edit")
            self.request_edit.emit(editing, text)
        else:
            self._start_turn("send")
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
            self.worker.cancel.set()
            self.state_label.setText(tr("Stopping…"))

    def _on_delta(self, text: str) -> None:
        self.chat.append_stream(text)

    def _on_finished(self, result: TurnResult) -> None:
        self.chat.end_stream(result.text, "cut" if result.cut_by_limit else result.status)
        self.streaming = False
        self.show_continue(result.reply_id if result.cut_by_limit else None)
        self.conversation.after_turn(result, self._turn_kind)
        self._set_busy(False)
        self.state_label.setToolTip("\n\n".join(tr_notice(w) for w in result.warnings))
        if result.error:
            self.state_label.setText(tr("Error: {message}", message=tr_error(result.error).splitlines()[0]))
        elif result.warnings:  # the turn went on, but the person should know recall was weaker
            self.state_label.setText(tr("Ready. Memory search used keywords only (details in the tooltip)."))
        else:
            self.state_label.setText(tr("Ready"))
        if result.tokens_per_s:
            self._tokens_per_s = result.tokens_per_s
            self.speed_label.setText(tr("{tps:.1f} tokens/s", tps=result.tokens_per_s))
        self.turn_finished.emit(result)

    def _on_failed(self, message: str) -> None:
        self.chat.end_stream(self.chat.streaming_text, "error")
        self.conversation.turn_failed(self._turn_kind)
        if not self.input.toPlainText().strip():
            self.input.setPlainText(self._last_sent)  # the message could not be saved: give it back
        self.streaming = False
        self._set_busy(False)
        self.state_label.setText(tr("Error: {message}", message=message.splitlines()[0]))

    def _set_busy(self, busy: bool) -> None:
        self.send_button.setEnabled(not busy)
        self.model_button.setEnabled(not self.streaming and self.room_panel is None)
        self.stop_button.setEnabled(self.streaming)
        self.persona_list.setEnabled(not self.streaming)

"""The voice strip just above the message box: the microphone button (and push-to-talk's hint), the
hands-free switch, the light that says the microphone is open, a Stop speaking button while the persona
speaks, and a one-line notice when a voice cannot be spoken or heard (no audio device, an engine that is
down). A widget only: the main window's voice controller (ui/main/voice.py) drives it and hears its
signals; it never opens a device itself."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from ui.util import theme
from ui.util.i18n import tr

# The microphone's light: red while it is open, whatever the theme (a recording light reads as red).
LISTENING_CSS = "QToolButton { background:#c62828; color:white; border-radius:4px; padding:2px 8px; }"
# Hands-free switched on reads as on at a glance, in either theme.
HANDS_FREE_CSS = (
    "QToolButton:checked { background:#2e7d32; color:white; border-radius:4px; padding:2px 8px; }"
)


class VoiceBar(QWidget):
    mic_toggled = Signal(bool)  # the person pressed the microphone button: listen (True) or stop (False)
    hands_free_toggled = Signal(bool)
    stop_speaking = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("voiceBar")
        self.mic_button = QToolButton()
        self.mic_button.setObjectName("micButton")
        self.mic_button.setCheckable(True)
        self.mic_button.clicked.connect(self.mic_toggled)
        self.hands_free_button = QToolButton()
        self.hands_free_button.setObjectName("handsFreeButton")
        self.hands_free_button.setCheckable(True)
        self.hands_free_button.setStyleSheet(HANDS_FREE_CSS)
        self.hands_free_button.toggled.connect(self.hands_free_toggled)
        self.indicator = QLabel()
        self.indicator.setObjectName("listeningIndicator")
        self.indicator.setVisible(False)
        self.speaking_label = QLabel()
        self.speaking_label.setObjectName("speakingLabel")
        self.speaking_label.setVisible(False)
        self.stop_button = QToolButton()
        self.stop_button.setObjectName("stopSpeakingButton")
        self.stop_button.setVisible(False)
        self.stop_button.clicked.connect(self.stop_speaking)
        self.notice = QLabel()
        self.notice.setObjectName("voiceNotice")
        self.notice.setWordWrap(True)
        self.notice.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notice.setVisible(False)
        self.notice_close = QToolButton()
        self.notice_close.setText("✕")
        self.notice_close.setVisible(False)
        self.notice_close.clicked.connect(self.clear_notice)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.mic_button, self.hands_free_button, self.indicator):
            layout.addWidget(widget)
        layout.addWidget(self.notice, 1)
        layout.addWidget(self.notice_close)
        layout.addStretch(0)
        layout.addWidget(self.speaking_label)
        layout.addWidget(self.stop_button)
        self.listening = False
        self.waiting = False  # the microphone is being opened (a device, a recogniser loading)
        self.retranslate()

    # -- what the controller shows ----------------------------------------------------------------
    def set_listening(self, listening: bool, *, waiting: bool = False) -> None:
        """The microphone is open (the button red, the light on), being opened, or closed."""
        self.listening, self.waiting = listening, waiting
        self.mic_button.setChecked(listening or waiting)
        self.mic_button.setStyleSheet(LISTENING_CSS if listening else "")
        self.indicator.setVisible(listening or waiting)
        self._label()

    def set_speaking(self, speaking: bool) -> None:
        self.speaking_label.setVisible(speaking)
        self.stop_button.setVisible(speaking)

    def show_notice(self, text: str) -> None:
        """One line saying what went wrong with a voice, until closed or the next success."""
        self.notice.setText(theme.tinted(text.replace("\n", " "), "error"))
        self.notice.setToolTip(text)
        self.notice.setVisible(True)
        self.notice_close.setVisible(True)

    def clear_notice(self) -> None:
        self.notice.clear()
        self.notice.setVisible(False)
        self.notice_close.setVisible(False)

    @property
    def notice_text(self) -> str:
        return self.notice.toolTip() if self.notice.isVisible() else ""

    # -- texts ------------------------------------------------------------------------------------
    def _label(self) -> None:
        if self.listening:
            self.mic_button.setText(tr("● Listening"))
            self.indicator.setText(theme.tinted(tr("The microphone is open"), "error"))
        elif self.waiting:
            self.mic_button.setText(tr("🎤 Opening…"))
            self.indicator.setText(tr("Opening the microphone…"))
        else:
            self.mic_button.setText(tr("🎤 Talk"))

    def retranslate(self) -> None:
        self._label()
        self.mic_button.setToolTip(
            tr(
                "Talk to the persona: the microphone opens until you stop speaking, and what you said "
                "appears in the message box. Or hold Space in an empty message box."
            )
        )
        self.hands_free_button.setText(tr("Hands-free"))
        self.hands_free_button.setToolTip(
            tr(
                "A spoken conversation: what you say is sent at once, the reply is spoken, and the "
                "microphone listens again. Speaking over the persona stops it. Headphones keep it from "
                "hearing itself."
            )
        )
        self.speaking_label.setText(tr("Speaking…"))
        self.stop_button.setText(tr("■ Stop speaking"))
        self.stop_button.setToolTip(tr("Stop speaking (Esc; typing stops it too)"))
        self.notice_close.setToolTip(tr("Close"))

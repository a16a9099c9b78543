"""The persona editor's Voice page (issue 36): persona.toml's [voice] table — whether replies are spoken
aloud, whether the messages it writes first are (never in quiet hours), the engine, the voice, speed and
pitch, the server of an engine the person runs — and a Preview button that speaks a sentence with the page
as it is now, before anything is saved.

Like the Growth page, it is a section of the editor's one form (ui/personas/soul_growth.py PersonaForm), so
its values are validated with the others and written by the editor's one Save (app.admin.save_persona):
one writer of persona.toml. The voices offered are listed on a worker (an engine may ask a server); the
preview is synthesized and played on a worker too, never on the UI thread."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.app import NexusApp
from nexus_ark.voice.audio_out import open_output
from nexus_ark.voice.base import VoiceError, VoiceInfo, VoiceSettings
from nexus_ark.voice.registry import OFFLINE, SHIPPED
from ui.util import theme
from ui.util.form_fields import NUMBER_WIDTH, Editor, label
from ui.util.i18n import N_, tr
from ui.util.tasks import run_in_background, while_open

SECTION = "voice"
ENGINES: dict[str | None, str] = {
    None: N_("Automatic: the offline voice shipped for its language"),
    "openjtalk": N_("Open JTalk (Japanese, offline)"),
    "kokoro-ja": N_("Kokoro (Japanese, offline)"),
    "piper": N_("Piper (English, offline)"),
    "voicevox": N_("VOICEVOX or AivisSpeech (a server you run)"),
    "openai": N_("An OpenAI-compatible speech server"),
    "system": N_("The system's voices"),
}
SERVER_ENGINES = ("voicevox", "openai")
# What Preview says, in the persona's language (the words the persona would speak, not the window's).
SAMPLE = {
    "ja": "こんにちは、{name}です。今日はどんな一日でしたか？",
    "en": "Hello, I'm {name}. How was your day?",
}
PREVIEW_WAIT_S = 60.0  # a preview longer than this is cut (the longest sample is a few seconds)


class _Field(Editor):
    """One field of the page, as SettingsForm.find returns it (its widget is marked when refused)."""

    def __init__(self, widget: QWidget) -> None:
        self.widget = widget


def _named(widget: QWidget, field: str) -> QWidget:
    widget.setObjectName(f"field:{SECTION}.{field}")
    return widget


class VoicePage(Editor):
    """The [voice] table as VoiceSettings' fields. Its Preview button is for VoicePreview to connect."""

    def __init__(self) -> None:
        self.widget = QWidget()
        self.widget.setObjectName("voicePage")
        self.intro = QLabel()
        self.intro.setWordWrap(True)
        self.enabled = QCheckBox()
        self.speak_first = QCheckBox()
        self.engine = QComboBox()
        self.voice = QComboBox()
        self.voice.setEditable(True)  # a VOICEVOX style id or a voice not listed can be typed
        self.speed = QDoubleSpinBox()
        self.pitch = QDoubleSpinBox()
        self.api_base = QLineEdit()
        self.model = QLineEdit()
        self.api_key = QLineEdit()
        fields: dict[str, QWidget] = {
            "enabled": self.enabled, "speak_first_messages": self.speak_first, "engine": self.engine,
            "voice": self.voice, "speed": self.speed, "pitch": self.pitch, "api_base": self.api_base,
            "model": self.model, "api_key": self.api_key,
        }  # fmt: skip
        self.fields = {name: _named(widget, name) for name, widget in fields.items()}
        for spin, low, high, step in ((self.speed, 0.5, 2.0, 0.1), (self.pitch, -12.0, 12.0, 0.5)):
            spin.setRange(low, high)
            spin.setSingleStep(step)
            spin.setDecimals(1)
            spin.setMaximumWidth(NUMBER_WIDTH)
        self.preview_button = QPushButton()
        self.preview_button.setObjectName("voicePreviewButton")
        self.preview_status = QLabel()
        self.preview_status.setObjectName("voicePreviewStatus")
        self.preview_status.setWordWrap(True)
        self.labels: list[QLabel] = []
        self.form = QFormLayout()
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.form.addRow(self.enabled)
        self.form.addRow(self.speak_first)
        for widget in (
            self.engine,
            self.voice,
            self.speed,
            self.pitch,
            self.api_base,
            self.model,
            self.api_key,
        ):
            self.labels.append(QLabel())
            self.form.addRow(self.labels[-1], widget)
        preview = QHBoxLayout()
        preview.addWidget(self.preview_button)
        preview.addWidget(self.preview_status, 1)
        layout = QVBoxLayout(self.widget)
        layout.addWidget(self.intro)
        layout.addLayout(self.form)
        layout.addLayout(preview)
        layout.addStretch(1)
        self._voices: list[VoiceInfo] = []
        self._loaded: dict[str, Any] = {}
        self._pitch_support: dict[str, bool] = {}
        self.language: Callable[[], str] = lambda: "en"  # the persona's, as the form holds it now
        self._voice_id = ""
        for engine in ENGINES:
            self.engine.addItem("", engine)
        self.engine.currentIndexChanged.connect(self._engine_changed)
        self.retranslate()

    # -- the voices offered -----------------------------------------------------------------------
    def set_voices(self, voices: list[VoiceInfo]) -> None:
        """Every engine's voices (listed on a worker); the engine chosen shows its own."""
        self._voices = voices
        self._fill_voices()

    def set_pitch_support(self, supported: dict[str, bool]) -> None:
        """Which engines change the pitch (the offline ones say; a server's is left on): an engine that
        ignores pitch has it greyed ("automatic": the shipped engine of the persona's language now)."""
        self._pitch_support = supported
        self._engine_changed()

    def _engine_changed(self) -> None:
        self._fill_voices()
        engine = self.engine.currentData() or SHIPPED["ja" if self.language() == "ja" else "en"]
        pitched = self._pitch_support.get(engine, True)
        self.pitch.setEnabled(pitched)
        self.pitch.setToolTip(
            "" if pitched else tr("This engine speaks at its own pitch: the setting is ignored")
        )
        server = self.engine.currentData() in SERVER_ENGINES
        self.api_base.setEnabled(server)
        for widget in (self.model, self.api_key):
            widget.setEnabled(self.engine.currentData() == "openai")

    def _fill_voices(self) -> None:
        chosen = self.voice.currentText().strip() if self.voice.count() else self._voice_id
        engine = self.engine.currentData()
        self.voice.blockSignals(True)
        self.voice.clear()
        self.voice.addItem(tr("The engine's default voice"), "")
        for info in self._voices:
            if engine is None or info.engine == engine:
                installed = "" if info.installed else " " + tr("(not downloaded)")
                self.voice.addItem(f"{info.label}{installed}", info.id)
        self._select_voice(chosen)
        self.voice.blockSignals(False)

    def _select_voice(self, voice_id: str) -> None:
        index = self.voice.findData(voice_id) if voice_id else 0
        if index >= 0:
            self.voice.setCurrentIndex(index)
        else:
            self.voice.setEditText(voice_id)

    def _voice_value(self) -> str:
        index = self.voice.currentIndex()
        text = self.voice.currentText()
        if index >= 0 and text == self.voice.itemText(index):
            return str(self.voice.itemData(index) or "")
        return text.strip()  # typed by the person

    # -- Editor -----------------------------------------------------------------------------------
    def value(self) -> dict[str, Any]:
        return {
            **self._loaded,  # a field this page does not show stays as the file has it
            "enabled": self.enabled.isChecked(),
            "engine": self.engine.currentData(),
            "voice": self._voice_value(),
            "speed": round(self.speed.value(), 2),
            "pitch": round(self.pitch.value(), 2),
            "speak_first_messages": self.speak_first.isChecked(),
            "api_base": self.api_base.text().strip(),
            "model": self.model.text().strip(),
            "api_key": self.api_key.text().strip(),
        }

    def set_value(self, value: Any) -> None:
        settings = VoiceSettings.model_validate(value or {})
        self._loaded = settings.model_dump(mode="json")
        self.enabled.setChecked(settings.enabled)
        self.speak_first.setChecked(settings.speak_first_messages)
        self.engine.setCurrentIndex(max(0, self.engine.findData(settings.engine)))
        self._voice_id = settings.voice
        self._fill_voices()
        self._select_voice(settings.voice)
        self.speed.setValue(settings.speed)
        self.pitch.setValue(settings.pitch)
        self.api_base.setText(settings.api_base)
        self.model.setText(settings.model)
        self.api_key.setText(settings.api_key)
        self._engine_changed()

    def settings(self) -> VoiceSettings:
        """The page as it is now (what Preview speaks with); a value out of range raises ValidationError."""
        return VoiceSettings.model_validate(self.value())

    def find(self, loc: tuple[str | int, ...]) -> Editor | None:
        widget = self.fields.get(str(loc[0])) if loc else None
        return _Field(widget) if widget is not None else None

    def editors(self) -> list[Editor]:
        return [_Field(widget) for widget in self.fields.values()]

    def retranslate(self) -> None:
        self.intro.setText(
            tr(
                "How the persona sounds. Replies are spoken sentence by sentence while they are written; "
                "Stop, Esc or typing stops the voice. Preview speaks with what is set here, before saving."
            )
        )
        self.enabled.setText(tr("Speak replies aloud"))
        self.speak_first.setText(tr("Speak the messages it writes first (never in quiet hours)"))
        for index, name in enumerate(ENGINES.values()):
            self.engine.setItemText(index, tr(name))
        rows = ("engine", "voice", "speed", "pitch", "api_base", "model", "api_key")
        for row_label, name in zip(self.labels, rows, strict=True):
            row_label.setText(label(name))
        self.api_base.setPlaceholderText(tr("The engine's own address (VOICEVOX: http://127.0.0.1:50021)"))
        self.model.setPlaceholderText(tr("The server's speech model, e.g. tts-1 or kokoro"))
        self.api_key.setPlaceholderText(
            tr('a reference: "${ENV_VAR}" or "keyring:SERVICE/NAME"; never a key')
        )
        self.preview_button.setText(tr("▶ Preview"))
        self.preview_button.setToolTip(tr("Speak a sentence with these settings (nothing is saved)"))
        self._engine_changed()  # the voices' names and the pitch's note, in the new language


class VoicePreview(QObject):
    """Preview: a sentence in the persona's language, synthesized with the page's settings and played on a
    worker; a second press stops the first. Also lists the voices the page offers (on a worker)."""

    def __init__(
        self,
        app: NexusApp,
        page: VoicePage,
        persona: Callable[[], tuple[str, str]],  # the persona's name and language, as the form holds them
        parent: QObject,
    ) -> None:
        super().__init__(parent)
        self.app = app
        self.page = page
        self.persona = persona
        self._stop: threading.Event | None = None
        page.preview_button.clicked.connect(self.preview)
        page.language = lambda: persona()[1]
        run_in_background(lambda: offered(app), while_open(self, self._offer), lambda _message: None)

    def _offer(self, found: tuple[list[VoiceInfo], dict[str, bool]]) -> None:
        voices, pitch = found
        self.page.set_voices(voices)
        self.page.set_pitch_support(pitch)

    def preview(self) -> None:
        if self._stop is not None:  # playing: this press stops it
            self._stop.set()
            return
        status = self.page.preview_status
        try:
            settings = self.page.settings()
        except ValueError as exc:
            status.setText(theme.tinted(str(exc).splitlines()[0], "error"))
            return
        name, language = self.persona()
        text = SAMPLE.get(language, SAMPLE["en"]).format(name=name)
        stop = self._stop = threading.Event()
        status.setText(tr("Speaking the preview…"))
        self.page.preview_button.setText(tr("■ Stop"))
        run_in_background(
            lambda: speak_preview(self.app, settings, language, text, stop),
            while_open(self, self._spoken),
            while_open(self, self._failed),
        )

    def _spoken(self, seconds: float) -> None:
        self._done()
        self.page.preview_status.setText(tr("Spoke {seconds:.1f} s of speech.", seconds=seconds))

    def _failed(self, message: str) -> None:
        self._done()
        self.page.preview_status.setText(theme.tinted(message.splitlines()[0], "error"))

    def _done(self) -> None:
        self._stop = None
        self.page.preview_button.setText(tr("▶ Preview"))

    def stop(self) -> None:
        """The editor closes: a preview playing stops."""
        if self._stop is not None:
            self._stop.set()


def offered(app: NexusApp) -> tuple[list[VoiceInfo], dict[str, bool]]:
    """On a worker: every voice to choose from, and whether each offline engine changes the pitch (the
    engines are made once per app: later calls are quick)."""
    voices = app.voice.voices()
    pitch: dict[str, bool] = {}
    for name in OFFLINE:
        try:
            engine = app.voice.engines.engine_for(VoiceSettings(engine=name), "en")
        except VoiceError:
            continue  # not installed here: its voices are not offered either
        pitch[name] = bool(getattr(engine, "pitch_supported", True))
    return voices, pitch


def speak_preview(
    app: NexusApp, settings: VoiceSettings, language: str, text: str, stop: threading.Event
) -> float:
    """On a worker: synthesize `text` with these settings and play it to the end (or until `stop`); the
    seconds of audio spoken. A missing device or an engine that is down raises VoiceError, in words."""
    engine = app.voice.engines.engine_for(settings, "ja" if language == "ja" else "en")
    audio = engine.synthesize(text, settings)
    output = open_output()
    try:
        output.play(audio)
        deadline = audio.seconds + PREVIEW_WAIT_S
        waited = 0.0
        while not output.wait(0.05):
            waited += 0.05
            if stop.is_set() or waited > deadline:
                output.stop()
                break
    finally:
        output.close()
    return audio.seconds

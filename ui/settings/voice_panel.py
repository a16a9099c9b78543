"""The Settings window's Voice tab (issue 36): what every persona shares — the sound devices (with Tests
that play a chime and listen to the microphone: ui/settings/voice_devices.py), the speech recognisers and
which one hears Japanese and English, an OpenAI-compatible transcription server, the Piper voices to
download, keeping recordings and hands-free sending. Each persona's own voice is its editor's Voice page
(ui/personas/voice_page.py).

A panel the Settings window owns (ui/settings/settings_dialog.py): it shows config.toml's [voice] and
[transcription] and gives the window its changes, which the window's Apply saves with the rest. Listing
devices asks PortAudio and listing recognisers reads the disk: both on workers. A missing device or no
PortAudio is a line of text here, never a traceback."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.app import NexusApp
from nexus_ark.app.voice import Recogniser, best_whisper
from nexus_ark.config.app_settings import TranscriptionSettings, VoiceAppSettings
from nexus_ark.model_config import is_key_reference
from nexus_ark.voice.base import Language
from nexus_ark.voice.catalogue import catalogue_entries, entry_by_id
from nexus_ark.voice.downloads import installed_voices
from nexus_ark.voice.whisper_local import PACKAGED_MODEL_ID
from ui.settings.voice_devices import DevicesBox
from ui.settings.voice_downloads import DownloadList, Row
from ui.util import theme
from ui.util.i18n import tr


def recogniser_rows(app: NexusApp) -> list[Row]:
    """app.voice.recognisers() with the catalogue's labels and licences (reads the disk: on a worker)."""
    rows = []
    for found in sorted(app.voice.recognisers(), key=_recogniser_order):
        entry = entry_by_id(found.id)
        shipped = found.id == PACKAGED_MODEL_ID and found.installed and entry is not None
        rows.append(
            Row(
                id=found.id,
                label=entry.label if entry is not None else found.id,
                language=found.language,
                size_bytes=found.size_bytes,
                licence=entry.licence if entry is not None else "",
                licence_url=entry.licence_url if entry is not None else "",
                installed=found.installed,
                shipped=shipped and not (app.voice.voices_dir() / found.id).is_dir(),
            )
        )
    return rows


def _recogniser_order(found: Recogniser) -> tuple[bool, bool, int]:
    """The shipped one first, then those that know Japanese, smallest first (fastest to slowest)."""
    return (found.id != PACKAGED_MODEL_ID, found.language == "en", found.size_bytes)


def voice_rows(app: NexusApp) -> list[Row]:
    """The catalogue's downloadable voices, and which are on disk (on a worker)."""
    installed = {v.id for v in installed_voices(app.voice.voices_dir())}
    return [
        Row(e.id, e.label, e.language, e.size_bytes, e.licence, e.licence_url, e.id in installed)
        for e in catalogue_entries()
        if e.kind == "voice"
    ]


def who_hears(language: Language, rows: list[Row], server_model: str) -> str:
    """The recogniser app.voice.transcriber(language) takes, in words (the same rule)."""
    downloaded = [Path(r.id) for r in rows if r.installed and not r.shipped]
    best = best_whisper(language, downloaded)
    if best is not None:
        return best.name
    if server_model:
        return tr("the transcription server ({model})", model=server_model)
    if language == "en" and any(r.shipped for r in rows):
        return tr("{name}, shipped with the app", name=PACKAGED_MODEL_ID)
    if language == "en":
        return tr("nothing yet — download a Whisper")
    return tr("nothing yet — download a Whisper that knows Japanese")


class VoicePanel(QWidget):
    """config.toml's [voice] and [transcription], and the downloads. say(text) shows a message in the
    window's status line."""

    def __init__(self, app: NexusApp, say: Callable[[str], None]) -> None:
        super().__init__()
        self.app = app
        self._say = say
        content = QWidget()
        layout = QVBoxLayout(content)
        self.devices = DevicesBox(say)
        layout.addWidget(self.devices)
        layout.addWidget(self._recognition_box())
        layout.addWidget(self._server_box())
        layout.addWidget(self._voices_box())
        layout.addWidget(self._listening_box())
        layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        self.show_settings()
        self.devices.refresh()
        self.recognisers.refresh()
        self.voices.refresh()

    # -- construction -------------------------------------------------------------------------------
    def _recognition_box(self) -> QGroupBox:
        self.recognition = QGroupBox()
        self.rule = QLabel()
        self.rule.setWordWrap(True)
        self.now_hearing = QLabel()
        self.now_hearing.setObjectName("nowHearing")
        self.now_hearing.setWordWrap(True)
        self.recognisers = DownloadList(self.app, lambda: recogniser_rows(self.app), "recognisers")
        self.recognisers.changed.connect(self._show_who_hears)
        self.recognisers.listed.connect(self._show_who_hears)
        layout = QVBoxLayout(self.recognition)
        layout.addWidget(self.rule)
        layout.addWidget(self.recognisers)
        layout.addWidget(self.now_hearing)
        return self.recognition

    def _server_box(self) -> QGroupBox:
        self.server = QGroupBox()
        self.server_note = QLabel()
        self.server_note.setWordWrap(True)
        self.server_model = QLineEdit()
        self.server_model.setObjectName("transcriptionModel")
        self.server_model.textChanged.connect(self._show_who_hears)
        self.server_base = QLineEdit()
        self.server_base.setObjectName("transcriptionApiBase")
        self.server_key = QLineEdit()
        self.server_key.setObjectName("transcriptionApiKey")
        self.server_key.textChanged.connect(lambda _t: self.server_key.setStyleSheet(""))
        self.model_label, self.base_label, self.key_label = QLabel(), QLabel(), QLabel()
        form = QFormLayout(self.server)
        form.addRow(self.server_note)
        form.addRow(self.model_label, self.server_model)
        form.addRow(self.base_label, self.server_base)
        form.addRow(self.key_label, self.server_key)
        return self.server

    def _voices_box(self) -> QGroupBox:
        self.voices_group = QGroupBox()
        self.voices_note = QLabel()
        self.voices_note.setWordWrap(True)
        self.voices = DownloadList(self.app, lambda: voice_rows(self.app), "voices")
        layout = QVBoxLayout(self.voices_group)
        layout.addWidget(self.voices_note)
        layout.addWidget(self.voices)
        return self.voices_group

    def _listening_box(self) -> QGroupBox:
        self.listening = QGroupBox()
        self.keep_recordings = QCheckBox()
        self.keep_recordings.setObjectName("keepRecordings")
        self.recordings_note = QLabel()
        self.recordings_note.setWordWrap(True)
        self.open_recordings = QPushButton()
        self.open_recordings.setObjectName("openRecordings")
        self.open_recordings.clicked.connect(lambda: self.open_recordings_folder())
        self.hands_free_sends = QCheckBox()
        self.hands_free_sends.setObjectName("handsFreeSends")
        self.hands_free_note = QLabel()
        self.hands_free_note.setWordWrap(True)
        layout = QVBoxLayout(self.listening)
        layout.addWidget(self.keep_recordings)
        recordings_row = QHBoxLayout()
        recordings_row.addWidget(self.recordings_note, 1)
        recordings_row.addWidget(self.open_recordings)
        layout.addLayout(recordings_row)
        layout.addWidget(self.hands_free_sends)
        layout.addWidget(self.hands_free_note)
        return self.listening

    def retranslate(self) -> None:
        self.devices.retranslate()
        self.recognition.setTitle(tr("Speech recognition"))
        self.rule.setText(
            tr(
                "Which recogniser hears you: for Japanese, the most accurate downloaded Whisper that knows "
                "Japanese (small, then base, then tiny; the .en ones know only English), else the "
                "transcription server below. For English, the most accurate downloaded Whisper of either "
                "kind, else the server, else Whisper tiny.en, shipped with the app."
            )
        )
        self.server.setTitle(tr("Transcription server"))
        self.server_note.setText(
            tr(
                "Any OpenAI-compatible speech-to-text server (a whisper server on your network, or "
                "OpenAI), used where no downloaded Whisper knows the language. Leave the model empty for "
                "none."
            )
        )
        self.model_label.setText(tr("Model"))
        self.base_label.setText(tr("Address"))
        self.key_label.setText(tr("API key reference"))
        self.server_model.setPlaceholderText(tr("e.g. whisper-1; empty: no server"))
        self.server_base.setPlaceholderText(tr("e.g. http://127.0.0.1:8000/v1; empty: OpenAI"))
        self.server_key.setPlaceholderText(
            tr('a reference: "${ENV_VAR}" or "keyring:SERVICE/NAME"; never a key')
        )
        self.voices_group.setTitle(tr("Voices to download"))
        self.voices_note.setText(
            tr("More voices for the personas (choose one in a persona's Voice settings once it is here).")
        )
        self.listening.setTitle(tr("Listening"))
        self.keep_recordings.setText(tr("Keep recordings of what I say"))
        self.open_recordings.setText(tr("Open folder"))
        self.recordings_note.setText(
            tr(
                "Off, no audio is ever written. On, each thing you say is kept as a WAV file in {folder}.",
                folder=str(self.app.layout.recordings_dir),
            )
        )
        self.hands_free_sends.setText(tr("In hands-free mode, send what I said at once"))
        self.hands_free_note.setText(
            tr("Off, what you said waits in the message box for you to send or edit it.")
        )
        self.recognisers.retranslate()
        self.voices.retranslate()
        self._show_who_hears()

    def stop_downloads(self) -> None:
        """The window closes: a download under way stops (what arrived is kept, and goes on next time)."""
        self.recognisers.cancel()
        self.voices.cancel()

    def open_recordings_folder(self) -> bool:
        folder = self.app.layout.recordings_dir
        folder.mkdir(parents=True, exist_ok=True)
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

    # -- settings -----------------------------------------------------------------------------------
    def show_settings(self) -> None:
        settings = self.app.settings
        voice, server = settings.voice, settings.transcription
        self.devices.choose(voice.output_device, voice.input_device)
        self.keep_recordings.setChecked(voice.keep_recordings)
        self.hands_free_sends.setChecked(voice.hands_free_sends)
        self.server_model.setText(server.model)
        self.server_base.setText(server.api_base)
        self.server_key.setText(server.api_key)

    def changes(self) -> dict[str, Any]:
        """[voice] and [transcription] as the tab shows them, where they differ from config.toml. A key
        typed in plain is refused (ValueError naming the field): only a reference is ever saved."""
        settings = self.app.settings
        key = self.server_key.text().strip()
        if not is_key_reference(key):
            self.server_key.setStyleSheet(f"border: 1px solid {theme.colour('error').name()};")
            raise ValueError(
                tr(
                    "Transcription server › API key reference: this looks like a plain API key; use "
                    '"${ENV_VAR}" or the OS keyring.'
                )
            )
        output, input_ = self.devices.chosen()
        voice = VoiceAppSettings(
            output_device=output,
            input_device=input_,
            keep_recordings=self.keep_recordings.isChecked(),
            hands_free_sends=self.hands_free_sends.isChecked(),
        )
        server = TranscriptionSettings(
            model=self.server_model.text().strip(), api_base=self.server_base.text().strip(), api_key=key
        )
        changes: dict[str, Any] = {}
        if voice != settings.voice:
            changes["voice"] = voice
        if server != settings.transcription:
            changes["transcription"] = server
        return changes

    # -- recognisers --------------------------------------------------------------------------------
    def _show_who_hears(self, *_args: object) -> None:
        rows = self.recognisers.rows
        if not rows:
            self.now_hearing.setText("")
            return
        model = self.server_model.text().strip()
        self.now_hearing.setText(
            tr("Japanese is heard now by: {name}", name=who_hears("ja", rows, model))
            + "\n"
            + tr("English is heard now by: {name}", name=who_hears("en", rows, model))
        )

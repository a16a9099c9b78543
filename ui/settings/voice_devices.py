"""Settings → Voice's sound devices (ui/settings/voice_panel.py): the speaker and the microphone, the
system's default first, then what PortAudio lists (asked on a worker); ▶ Test plays a chime through the
speaker chosen and ● Test listens to the microphone chosen for a moment and says how loud it heard. A
device chosen that the system does not list now stays chosen, marked not connected; no device at all or no
PortAudio is a line of text, never a traceback."""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QPushButton

from nexus_ark.voice.audio_in import input_devices, open_microphone
from nexus_ark.voice.audio_out import open_output, output_devices
from nexus_ark.voice.base import Audio
from ui.util import theme
from ui.util.i18n import tr
from ui.util.tasks import run_in_background, while_open

CHIME_S = 0.6  # the speaker's Test: two soft notes
TEST_WAIT_S = 5.0
LISTEN_S = 2.0  # the microphone's Test: how long it listens
SILENCE_DB = -60.0  # quieter than this is silence (a muted or unplugged microphone)
MISSING = Qt.ItemDataRole.UserRole + 1  # a device chosen that the system does not list now


def chime(rate: int = 24000) -> Audio:
    """Two notes (A5 then E6) with a soft start and end: what Test plays through the chosen output."""
    half = int(rate * CHIME_S / 2)
    t = np.arange(half) / rate
    envelope = np.minimum(1.0, t / 0.01) * np.exp(-t * 6)
    notes = [0.3 * np.sin(2 * np.pi * f * t) * envelope for f in (880.0, 1318.5)]
    return Audio(np.concatenate(notes).astype(np.float32), rate)


def play_test(device: str) -> str:
    """Plays the chime through `device` ("" = the system's default) and returns the device's name."""
    output = open_output(device or None)
    try:
        output.play(chime())
        output.wait(TEST_WAIT_S)
        return output.device
    finally:
        output.close()


def listen_test(device: str, seconds: float = LISTEN_S) -> tuple[str, float]:
    """Listens to `device` ("" = the default) for `seconds`; its name and the loudest 20 ms it heard, in
    dB below full scale (-inf for digital silence). The device is open only for those seconds."""
    microphone = open_microphone(device or None)
    loudest = [0.0]
    heard = threading.Event()
    frames = [0]

    def on_chunk(chunk: np.ndarray) -> None:
        for start in range(0, len(chunk), 320):  # 20 ms at 16 kHz
            part = chunk[start : start + 320]
            if len(part):
                loudest[0] = max(loudest[0], float(np.sqrt(np.mean(np.square(part)))))
        frames[0] += len(chunk)
        if frames[0] >= seconds * microphone.rate:
            heard.set()

    microphone.start(on_chunk)
    try:
        heard.wait(seconds + TEST_WAIT_S)
    finally:
        microphone.stop()
    return microphone.device, 20 * float(np.log10(loudest[0])) if loudest[0] > 0 else float("-inf")


class DevicesBox(QGroupBox):
    """The two device pickers and their tests. say(text) shows a message in the window's status line."""

    def __init__(self, say: Callable[[str], None]) -> None:
        super().__init__()
        self._say = say
        self.error = ""  # PortAudio's answer when it could not list the devices
        self.listed = False  # PortAudio answered: a device chosen that it lacks is not connected
        self.output_box = QComboBox()
        self.output_box.setObjectName("outputDevice")
        self.input_box = QComboBox()
        self.input_box.setObjectName("inputDevice")
        for box in (self.output_box, self.input_box):
            box.addItem("", "")  # the system's default, always there
            box.currentIndexChanged.connect(lambda _i: self._show_note())
        self.test_button = QPushButton()
        self.test_button.setObjectName("testOutput")
        self.test_button.clicked.connect(lambda: self.test_output())
        self.listen_button = QPushButton()
        self.listen_button.setObjectName("testInput")
        self.listen_button.clicked.connect(lambda: self.test_input())
        self.note = QLabel()
        self.note.setObjectName("devicesNote")
        self.note.setWordWrap(True)
        self.output_label, self.input_label = QLabel(), QLabel()
        output_row, input_row = QHBoxLayout(), QHBoxLayout()
        output_row.addWidget(self.output_box, 1)
        output_row.addWidget(self.test_button)
        input_row.addWidget(self.input_box, 1)
        input_row.addWidget(self.listen_button)
        form = QFormLayout(self)
        form.addRow(self.output_label, output_row)
        form.addRow(self.input_label, input_row)
        form.addRow(self.note)

    def retranslate(self) -> None:
        self.setTitle(tr("Sound devices"))
        self.output_label.setText(tr("Speaker"))
        self.input_label.setText(tr("Microphone"))
        for box in (self.output_box, self.input_box):
            box.setItemText(0, tr("System default"))
            for index in range(1, box.count()):
                name = str(box.itemData(index))
                missing = box.itemData(index, MISSING)
                box.setItemText(index, tr("{device} (not connected)", device=name) if missing else name)
        self.test_button.setText(tr("▶ Test"))
        self.test_button.setToolTip(tr("Play a short chime through the chosen speaker"))
        self.listen_button.setText(tr("● Test"))
        self.listen_button.setToolTip(tr("Listen to the chosen microphone for two seconds: speak"))
        self._show_note()

    # -- values -------------------------------------------------------------------------------------
    def choose(self, output: str, input_: str) -> None:
        self._choose(self.output_box, output)
        self._choose(self.input_box, input_)

    def chosen(self) -> tuple[str, str]:
        """The speaker's and the microphone's names as config.toml keeps them ("" = the default)."""
        return str(self.output_box.currentData() or ""), str(self.input_box.currentData() or "")

    def _choose(self, box: QComboBox, device: str) -> None:
        index = box.findData(device)
        if index < 0:
            box.addItem(device, device)
            index = box.count() - 1
            box.setItemData(index, self.listed, MISSING)
        box.setCurrentIndex(index)

    # -- listing ------------------------------------------------------------------------------------
    def refresh(self) -> None:
        run_in_background(
            lambda: (output_devices(), input_devices()),
            while_open(self, self._show_devices),
            while_open(self, self._not_listed),
        )

    def _show_devices(self, found: tuple[list[str], list[str]]) -> None:
        self.error = "" if any(found) else tr("The sound system lists no speaker or microphone.")
        self.listed = True
        for box, names in zip((self.output_box, self.input_box), found, strict=True):
            chosen = str(box.currentData() or "")
            box.blockSignals(True)
            while box.count() > 1:
                box.removeItem(1)
            for name in names:
                box.addItem(name, name)
            self._choose(box, chosen)
            box.blockSignals(False)
        self.retranslate()

    def _not_listed(self, message: str) -> None:
        self.error = message
        self._show_note()

    def _show_note(self) -> None:
        lines = [self.error] if self.error else []
        for box, kind in ((self.output_box, tr("speaker")), (self.input_box, tr("microphone"))):
            index = box.currentIndex()
            if index > 0 and box.itemData(index, MISSING):
                lines.append(
                    tr(
                        "The {kind} chosen, {device}, is not connected: connect it or choose another.",
                        kind=kind,
                        device=str(box.itemData(index)),
                    )
                )
        self.note.setText(theme.tinted("<br>".join(lines), "error") if lines else "")
        self.note.setVisible(bool(lines))

    # -- tests --------------------------------------------------------------------------------------
    def test_output(self) -> None:
        device = self.chosen()[0]
        self.test_button.setEnabled(False)
        self._say(tr("Playing a chime…"))

        def played(name: str) -> None:
            self.test_button.setEnabled(True)
            self._say(tr("Played a chime through {device}.", device=name))

        run_in_background(
            lambda: play_test(device), while_open(self, played), while_open(self, self._test_failed)
        )

    def test_input(self) -> None:
        device = self.chosen()[1]
        self.listen_button.setEnabled(False)
        self._say(tr("Listening for two seconds: say something…"))

        def heard(result: tuple[str, float]) -> None:
            name, level = result
            self.listen_button.setEnabled(True)
            if level < SILENCE_DB:
                self._say(theme.tinted(tr("{device} heard only silence.", device=name), "error"))
            else:
                self._say(
                    tr(
                        "{device} works: the loudest it heard was {level} dB.",
                        device=name,
                        level=round(level),
                    )
                )

        run_in_background(
            lambda: listen_test(device), while_open(self, heard), while_open(self, self._test_failed)
        )

    def _test_failed(self, message: str) -> None:
        self.test_button.setEnabled(True)
        self.listen_button.setEnabled(True)
        self._say(theme.tinted(message, "error"))

"""The window's main loop while the persona speaks and while it listens: does the UI ever stall? (issue 36,
goal: the largest stall ≤ 16 ms, one frame.)

The real MainWindow (offscreen) on a temporary data folder, the scripted model (the bench measures the
voice, not a model: its reply streams word by word every --word-ms), Aria's voice on (Piper, the shipped
English engine), real sound on a real device with no sound card (a JACK server on its dummy driver,
tests/null_sound.py, started here unless JACK_DEFAULT_SERVER names one). The spoken sentences the window
hears are Piper's, played into the listener from WAV files at a microphone's pace
(tests/ui/voice_sources.py), through the real VAD and the Whisper tiny.en model a package ships.

A 10 ms QTimer probe records how late each tick came: the time the main loop could not run. Scenarios:

- idle: nothing running (the timer's own jitter on this machine: the floor);
- library: the speech queue alone (nexus_ark/voice/speaking.py, the same engine and device, fed the reply
  sentence by sentence from the main thread, no window involved): what synthesis and playback cost the
  main loop by themselves;
- speaking: a reply streamed into the window and spoken sentence by sentence while it streams, to its end;
- listening: the microphone button, a sentence heard, transcribed and put in the message box;
- hands-free: a sentence heard and sent at once, the reply streamed and spoken, the microphone open all along.

    OMP_NUM_THREADS=1 QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.voice_ui_stall [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication

from bench.ui_stall import Probe, spin
from nexus_ark.app import NexusApp
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.sentences import sentences
from nexus_ark.voice.audio_out import open_output
from nexus_ark.voice.base import VoiceSettings
from nexus_ark.voice.speaking import SpeechEvent, SpeechQueue
from tests.null_sound import start_null_sound
from tests.ui.voice_sources import WavMicrophone, speak_to_wav
from ui.main.main_window import MainWindow
from ui.util import i18n
from ui.util.tasks import favour_the_ui_thread, freeze_long_lived

REPLY = (
    "The lighthouse keeper woke early, before the gulls. He climbed the hundred stairs to the lamp and "
    "wiped the glass until it shone. Far out, a fishing boat was coming home with its lights still on. "
    "He waved, though nobody could see him. Then he made tea and wrote the weather in his book: calm sea, "
    "light wind from the west, a good day."
)
HEARD = "Hello, how are you today?"


def _model(_messages: Sequence[ChatMessage]) -> str:
    return REPLY


def _idle(qt: QApplication, probe: Probe, seconds: float) -> dict:
    probe.start()
    end = time.monotonic() + seconds
    spin(qt, lambda: time.monotonic() >= end, seconds + 1)
    return probe.stop()


def _library(qt: QApplication, probe: Probe, app: NexusApp) -> dict:
    """The speech queue alone: the reply fed a sentence at a time from this (the main) thread."""
    synthesize = app.voice.synthesizer_for("aria")
    output = open_output()
    queue = SpeechQueue(synthesize, output)
    try:
        probe.start()
        started = time.monotonic()
        for sentence in sentences(REPLY):
            queue.feed(sentence)
            spin(qt, lambda s=started: time.monotonic() - s > 0.2, 5)  # a sentence's words streaming in
            started = time.monotonic()
        queue.finish()
        spin(qt, lambda: queue.wait(0), 300)
        return probe.stop()
    finally:
        queue.close()
        output.close()


class TimedProbe(Probe):
    """The probe, also keeping each stall over 16 ms: when it came (seconds into the scenario), how long,
    and how much of it the main thread itself ran (its CPU time: the rest it waited, for the interpreter
    lock or for a core the machine's other work held)."""

    def start(self) -> None:
        super().start()
        self.began = self.last
        self.cpu = time.thread_time()
        self.late: list[tuple[float, float, float]] = []
        self.busy_ms = 0.0  # the main thread's CPU time in stalls over 16 ms

    def _tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        stall = (now - self.last) * 1000 - 10
        if stall > 16:
            ran = (cpu - self.cpu) * 1000
            self.busy_ms = max(self.busy_ms, ran)
            self.late.append((round(now - self.began, 2), round(stall, 1), round(ran, 1)))
        self.cpu = cpu
        super()._tick()

    def stop(self) -> dict:
        result = super().stop()
        result["main_thread_ran_ms_in_worst"] = round(self.busy_ms, 1)
        result["stalls_over_16ms"] = self.late[:12]  # (at s, stall ms, of which the main thread ran ms)
        return result


def _speaking(qt: QApplication, probe: Probe, window: MainWindow) -> dict:
    events: list[tuple[float, SpeechEvent]] = []
    window.voice.speech_event.connect(lambda e: events.append((time.monotonic(), e)))
    probe.start()
    sent = time.monotonic()
    window.input.setPlainText("Tell me about your morning.")
    window.turns.send_message()
    spin(qt, lambda: not window.streaming and not window.voice.speaking, 300)
    result = probe.stop()
    starts = [t for t, e in events if e.kind == "started"]
    result["first_audio_s"] = round(starts[0] - sent, 2) if starts else None
    result["sentences_spoken"] = len([e for _t, e in events if e.kind == "finished"])
    result["seconds"] = round(time.monotonic() - sent, 1)
    return result


def _listening(qt: QApplication, probe: Probe, window: MainWindow, heard: Path) -> dict:
    microphone = WavMicrophone([(heard, None)])
    window.voice.ears.open_microphone = lambda: microphone
    window.input.clear()
    probe.start()
    began = time.monotonic()
    window.voice_bar.mic_button.click()
    spin(qt, lambda: bool(window.input.toPlainText()) and window.voice.ears.listener is None, 300)
    result = probe.stop()
    result["heard"] = window.input.toPlainText()
    result["seconds"] = round(time.monotonic() - began, 1)
    window.input.clear()
    return result


def _hands_free(qt: QApplication, probe: Probe, window: MainWindow, heard: Path) -> dict:
    microphone = WavMicrophone([(heard, None)])
    window.voice.ears.open_microphone = lambda: microphone
    finished: list[object] = []
    window.turn_finished.connect(finished.append)
    probe.start()
    began = time.monotonic()
    window.voice_bar.hands_free_button.click()
    spin(qt, lambda: bool(finished) and not window.voice.speaking, 300)
    result = probe.stop()
    result["microphone_open_after"] = microphone.is_open
    result["seconds"] = round(time.monotonic() - began, 1)
    window.voice_bar.hands_free_button.click()
    return result


def run(word_ms: int, rounds: int) -> dict:
    start_null_sound()  # before a device is opened (sounddevice, imported then, lists the devices once)
    favour_the_ui_thread()  # as ui/app/application.py does
    qt = QApplication.instance() or QApplication([])
    assert isinstance(qt, QApplication)
    i18n.set_language("en")
    with tempfile.TemporaryDirectory() as tmp:
        heard = speak_to_wav(HEARD, Path(tmp) / "heard.wav")
        backend = lambda config: ScriptedBackend(_model, delay_s=word_ms / 1000)  # noqa: E731
        app = NexusApp(Path(tmp) / "data", backend_factory=backend).open()
        window = MainWindow(app)
        window.show()
        spin(qt, lambda: window.send_button.isEnabled() and window.current_slug == "aria", 300)
        freeze_long_lived()  # as the app does once its window is built
        probe = TimedProbe(qt)
        result: dict = {"idle": _idle(qt, probe, 3.0), "library": _library(qt, probe, app)}
        for round_ in range(1, rounds + 1):  # the first round loads the recogniser and opens the devices
            app.voice.save_settings("aria", VoiceSettings(enabled=False))
            result[f"reply_unspoken_{round_}"] = _speaking(qt, probe, window)  # the turn's own cost
            app.voice.save_settings("aria", VoiceSettings(enabled=True))
            result[f"speaking_{round_}"] = _speaking(qt, probe, window)
            result[f"listening_{round_}"] = _listening(qt, probe, window, heard)
            result[f"hands_free_{round_}"] = _hands_free(qt, probe, window, heard)
        window.close()
        spin(qt, lambda: True, 1)
        app.close()
    result["word_ms"] = word_ms
    result["cpus"] = os.cpu_count()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--word-ms", type=int, default=30, help="the scripted reply's pace, a word every N ms"
    )
    parser.add_argument("--rounds", type=int, default=2, help="each window scenario this many times")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = run(args.word_ms, args.rounds)
    print(json.dumps(result, indent=2, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()

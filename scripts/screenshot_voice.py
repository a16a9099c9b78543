"""Screenshots of the voice in the window, for docs/screenshots (issue 36), in English and Japanese:

- voice-page-{en,ja}.png: the persona editor's Voice page after Preview spoke (Aria in English, ひかり
  in Japanese, each with the offline voice shipped for its language);
- voice-listening-{en,ja}.png: the main window with the microphone open (the button red, its light on),
  under a reply that was spoken (▶ Play under it);
- voice-hands-free-{en,ja}.png: hands-free mode, the person's spoken sentence sent and the reply being
  spoken (■ Stop speaking), the microphone listening again.

The sound is real and goes nowhere: a JACK server on its dummy driver (tests/null_sound.py, Debian's
jackd2); the spoken sentence is Piper's, played into the listener from a WAV file (tests/ui/voice_sources.py)
and heard by the Whisper tiny.en model a package ships (English only: Aria is the one listened to). The
model is a scripted stand-in, so the reply's words are the same in every run.

    xvfb-run -a .venv/bin/python scripts/screenshot_voice.py [OUT_DIR]
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(
    0, str(Path(__file__).resolve().parents[1])
)  # tests/: the null sound device, the WAV microphone
sys.path.insert(0, str(Path(__file__).resolve().parent))

from PySide6.QtWidgets import QApplication
from shots import each_language, settle, wait

from nexus_ark.app import NexusApp
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.scripted import ScriptedBackend
from nexus_ark.voice.base import VoiceSettings
from tests.null_sound import start_null_sound
from tests.ui.voice_sources import WavMicrophone, speak_to_wav
from ui.main.main_window import MainWindow
from ui.personas.persona_editor import PersonaEditor
from ui.util import i18n

STORY = "The lighthouse keeper woke early. He climbed the stairs to the lamp. The sea was calm that night."
ANSWER = "I'm well, thank you! I spent the morning reading about lighthouses. How was your day?"


def _model(messages: Sequence[ChatMessage]) -> str:
    return ANSWER if "how are you" in messages[-1].content.lower() else STORY


def _settings(qt: QApplication, core: NexusApp, slug: str, out: Path) -> None:
    editor = PersonaEditor(core, slug)
    editor.ask_before_discard = False
    editor.resize(900, 640)
    editor.show()
    wait(qt, lambda: editor.persona is not None)
    page = editor.form.voice
    editor.tabs.setCurrentWidget(editor.form.pages["voice"])
    wait(qt, lambda: page.voice.count() > 1, 120)
    page.enabled.setChecked(True)
    page.speak_first.setChecked(True)
    page.preview_button.click()
    wait(qt, lambda: page.preview_status.text() and "…" not in page.preview_status.text(), 120)
    settle(qt)
    editor.grab().save(str(out))
    editor.close()


def _window(qt: QApplication, core: NexusApp) -> MainWindow:
    window = MainWindow(core)
    window.show()
    wait(qt, lambda: window.send_button.isEnabled(), 120)
    if window.current_slug != "aria":  # the Japanese window starts on ひかり: Aria is the one heard here
        window.select_persona("aria")
        wait(qt, lambda: window.send_button.isEnabled() and window.current_slug == "aria", 120)
    return window


def shoot(qt: QApplication, language: str, out: Path) -> None:
    i18n.set_language(language)
    tmp = Path(tempfile.mkdtemp())
    hello = speak_to_wav("Hello, how are you today?", tmp / "hello.wav")
    with NexusApp(tmp / "data", backend_factory=lambda config: ScriptedBackend(_model, delay_s=0.03)) as core:
        core.voice.save_settings("aria", VoiceSettings(enabled=True))
        _settings(qt, core, "aria" if language == "en" else "hikari", out / f"voice-page-{language}.png")

        window = _window(qt, core)
        window.input.setPlainText("Tell me a story about a lighthouse.")
        window.turns.send_message()
        wait(qt, lambda: not window.streaming, 120)
        wait(qt, lambda: not window.voice.speaking, 120)  # the story spoken to its end
        window.voice_bar.mic_button.click()  # the real (null) microphone
        wait(qt, lambda: window.voice.ears.listener is not None, 120)
        settle(qt, 0.5)
        window.grab().save(str(out / f"voice-listening-{language}.png"))
        window.voice_bar.mic_button.click()

        window.voice.ears.open_microphone = lambda: WavMicrophone([(hello, None)])
        window.voice_bar.hands_free_button.click()
        wait(qt, lambda: window.voice_bar.stop_button.isVisible() and not window.streaming, 180)
        settle(qt, 0.5)
        window.grab().save(str(out / f"voice-hands-free-{language}.png"))
        window.voice_bar.hands_free_button.click()
        window.close()
        settle(qt)


if __name__ == "__main__":
    start_null_sound()  # before a device is opened (sounddevice, imported then, lists the devices once)
    raise SystemExit(each_language(shoot))

"""Screenshots of Settings → Voice, for docs/screenshots: voice-settings-{en,ja}.png (the sound devices
PortAudio lists — the test session's JACK null device where jackd is installed — the recognisers and which
one hears each language, a transcription server set with its key as a reference, the voices to download).

    xvfb-run -a .venv/bin/python scripts/screenshot_voice_settings.py [OUT_DIR]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from tests.null_sound import start_null_sound  # noqa: E402  (before sounddevice lists the devices)

start_null_sound()

from PySide6.QtWidgets import QApplication  # noqa: E402
from shots import each_language, settle, wait  # noqa: E402

from nexus_ark.app import NexusApp  # noqa: E402
from nexus_ark.config.app_settings import TranscriptionSettings  # noqa: E402
from ui.settings.settings_dialog import SettingsDialog  # noqa: E402
from ui.util import i18n  # noqa: E402


def shoot(qt: QApplication, language: str, out: Path) -> None:
    i18n.set_language(language)
    with NexusApp(Path(tempfile.mkdtemp()) / "data") as core:
        server = TranscriptionSettings(
            model="whisper-1", api_base="http://127.0.0.1:8000/v1", api_key="${WHISPER_API_KEY}"
        )
        core.admin.update_settings(transcription=server)
        dialog = SettingsDialog(core)
        dialog.resize(860, 960)  # tall enough to show the whole tab without its scroll bar
        dialog.show()
        dialog.tabs.setCurrentWidget(dialog.voice)
        panel = dialog.voice
        wait(qt, lambda: (panel.devices.listed or panel.devices.error) and panel.recognisers.rows)
        wait(qt, lambda: panel.voices.rows)
        panel.recognisers.select("whisper-base")
        settle(qt)
        dialog.grab().save(str(out / f"voice-settings-{language}.png"))
        dialog.close()


if __name__ == "__main__":
    raise SystemExit(each_language(shoot))

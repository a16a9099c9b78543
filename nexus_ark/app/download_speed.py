"""How fast downloads reach this computer: the speed the last one measured, kept in the data folder's models/
(the first start's estimate of the next download, app/first_start.py, reads it; app.models.get records it)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from nexus_ark.providers.model_download import Progress, ProgressFn

# The speed the last download on this computer reached, in the data folder's models/: the next estimate's.
SPEED_FILE = ".download-speed.json"
MEASURED_AFTER_BYTES = 4_000_000  # a rate over the first few hundred KB says little about the line


class SpeedRecorder:
    """A download's progress callback that also remembers how fast the bytes came (the rate over the last
    seconds once a few MB arrived), written to the data folder when the download ends."""

    def __init__(self, models_dir: Path, inner: ProgressFn | None = None) -> None:
        self.models_dir = models_dir
        self.inner = inner
        self.bytes_per_s = 0.0

    def __call__(self, progress: Progress) -> None:
        moved = progress.done - progress.resumed_from
        if progress.stage == "downloading" and progress.bytes_per_s > 0 and moved >= MEASURED_AFTER_BYTES:
            self.bytes_per_s = progress.bytes_per_s
        if self.inner is not None:
            self.inner(progress)

    def save(self) -> None:
        """Remember the rate measured (a download that ended early still measured the line)."""
        if self.bytes_per_s > 0:
            remember_download_speed(self.models_dir, self.bytes_per_s)


def remember_download_speed(models_dir: Path, bytes_per_s: float) -> None:
    """Written whole or not at all; a folder that cannot be written keeps the estimate assumed, no more."""
    try:
        models_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=models_dir, delete=False, suffix=".tmp") as out:
            json.dump({"bytes_per_s": round(bytes_per_s)}, out)
        os.replace(out.name, models_dir / SPEED_FILE)
    except OSError:
        pass


def measured_download_speed(models_dir: Path) -> float | None:
    """The speed the last download here reached; None when none was measured (or the file is unreadable)."""
    try:
        value = json.loads((models_dir / SPEED_FILE).read_text(encoding="utf-8")).get("bytes_per_s")
    except (OSError, ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, int | float) and value > 0 else None

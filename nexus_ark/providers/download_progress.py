"""How a model download reports where it stands: Progress, the transfer rate over the last seconds, and
sizes in the units a person reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a download stands: bytes on disk of `total`, the rate over the last seconds, time left."""

    done: int
    total: int
    bytes_per_s: float = 0.0
    resumed_from: int = 0
    stage: str = "downloading"  # downloading | verifying | done

    @property
    def seconds_left(self) -> float | None:
        if self.bytes_per_s <= 0 or self.done >= self.total:
            return None
        return (self.total - self.done) / self.bytes_per_s


ProgressFn = Callable[[Progress], None]


class TransferRate:
    """Bytes per second over a sliding window of a few seconds (a mean since the start hides a stall)."""

    def __init__(self, window_s: float = 4.0) -> None:
        self.window_s = window_s
        self.samples: list[tuple[float, int]] = []

    def add(self, now: float, done: int) -> float:
        self.samples.append((now, done))
        while len(self.samples) > 2 and now - self.samples[0][0] > self.window_s:
            self.samples.pop(0)
        (t0, d0), (t1, d1) = self.samples[0], self.samples[-1]
        return (d1 - d0) / (t1 - t0) if t1 > t0 else 0.0


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit in ("B", "KB") else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"

"""What one recomputation of the drives is, as data: the names, the levels against their thresholds and
the report. Its own module so that the numbers (drives.py) and the words (narrative.py) both build on it
and drives.py can call narrative.py without an import circle."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

DriveName = Literal["boredom", "curiosity", "goal_achievement", "devotion"]
DRIVES: tuple[DriveName, ...] = ("boredom", "curiosity", "goal_achievement", "devotion")
# "How you feel now" goes into the chat prompt for drives at or above this level (seed 001).
FEELING_LEVEL = 0.4


class DriveLevel(BaseModel):
    level: float = Field(ge=0.0, le=1.0)
    threshold: float = Field(ge=0.0, le=1.0)
    inputs: dict[str, Any] = Field(default_factory=dict)

    @property
    def over(self) -> bool:
        return self.level >= self.threshold

    @property
    def margin(self) -> float:
        """How far past its own threshold (negative: how far below it)."""
        return self.level - self.threshold


class DriveReport(BaseModel):
    """One recomputation: the `nexus-ark drives --json` object, stored in drive_history."""

    time: datetime
    drives: dict[DriveName, DriveLevel]
    dominant: DriveName | None
    narrative: str = ""

"""`nexus-ark emotion classify`: one text a line in, one reading a line out (the scripting contract)."""

from __future__ import annotations

import io
import json
from typing import BinaryIO, TextIO

from nexus_ark.mind.emotion import EmotionDetector, EmotionReading


def format_reading(reading: EmotionReading, text: str) -> str:
    snippet = text if len(text) <= 60 else text[:57] + "..."
    return f"{reading.label:<8} {reading.value:+.1f}  {reading.confidence:4.0%}  {snippet}"


def classify_stream(
    stdin: BinaryIO, stdout: TextIO, *, as_json: bool, detector: EmotionDetector | None = None
) -> int:
    """Read UTF-8 lines (bytes, so a console's code page cannot garble Japanese), skip empty ones, and
    answer each as soon as it is read, so a script can talk to the command line by line."""
    detector = detector or EmotionDetector()
    if hasattr(stdout, "reconfigure"):  # the JSON carries Japanese as-is: UTF-8 whatever the console
        stdout.reconfigure(encoding="utf-8", errors="replace")
    for line in io.TextIOWrapper(stdin, encoding="utf-8", errors="replace"):
        text = line.rstrip("\r\n")
        if not text.strip():
            continue
        reading = detector.classify(text)
        if as_json:
            stdout.write(json.dumps(reading.model_dump(), ensure_ascii=False) + "\n")
        else:
            stdout.write(format_reading(reading, text.strip()) + "\n")
        stdout.flush()
    return 0

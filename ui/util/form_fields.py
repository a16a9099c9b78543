"""The settings form's pieces for one field: its label (LABELS, a test fails when a field has none) and an
editor for each plain type: a check box, a spin box whose range is the field's constraints, a choice, a
line. ui/util/settings_form.py puts them together into sections, nested models and tables."""

from __future__ import annotations

from typing import Any

import annotated_types
from pydantic.fields import FieldInfo
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from ui.util.i18n import N_, tr

NUMBER_WIDTH = 160  # spin boxes: wide enough for their numbers, not the whole window


# The label of each settings field, by field name (the same name means the same thing in every section).
LABELS: dict[str, str] = {
    "name": N_("Name"),
    "language": N_("Language"),
    "description": N_("Description"),
    "user_name": N_("What it calls you"),
    "model": N_("Model"),
    "internal_model": N_("Own internal model"),
    "conversation": N_("Conversation"),
    "drives": N_("Drive thresholds"),
    "autonomy": N_("Autonomy"),
    "spec": N_("Model"),
    "api_base": N_("Server URL"),
    "api_key": N_("API key reference"),
    "context_size": N_("Context size (tokens)"),
    "state_cache_mb": N_("Prompt cache (MB)"),
    "timeouts": N_("Timeouts"),
    "connect_s": N_("Connect (s)"),
    "first_token_s": N_("First token (s)"),
    "between_tokens_s": N_("Between tokens (s)"),
    "structured_output": N_("Structured output"),
    "temperature": N_("Temperature"),
    "top_p": N_("Top p"),
    "repeat_penalty": N_("Repeat penalty"),
    "max_tokens": N_("Longest reply (tokens)"),
    "history_messages": N_("Recent messages in the prompt"),
    "episode_lookback_days": N_("Lookback (days)"),
    "tools": N_("Memory tools"),
    "text_tools": N_("Tools as text"),
    "compress_at": N_("Summarise at"),
    "idle_minutes_end": N_("Conversation ends after (minutes)"),
    "boredom": N_("Boredom"),
    "curiosity": N_("Curiosity"),
    "goal_achievement": N_("Goal drive"),
    "devotion": N_("Devotion"),
    "enabled": N_("Writes first"),
    "quiet_hours": N_("Quiet hours"),
    "cooldown_minutes": N_("Cooldown (minutes)"),
    "daily_cap": N_("Daily cap"),
    "max_unanswered": N_("Unanswered messages in a row (at most)"),
    "heartbeat_minutes": N_("Heartbeat (minutes)"),
    "dream_idle_minutes": N_("Dream after idle (minutes)"),
    "routines": N_("Routines"),
    "cron": N_("When (cron)"),
    "task": N_("Task"),
    "soul": N_("Growth"),  # persona.toml's [soul]: how the soul may grow (the soul itself is persona.md)
    "proposals": N_("May propose changes to its soul"),
    "fixed": N_("Fixed sections"),
    "voice": N_("Voice"),  # persona.toml's [voice] (ui/personas/voice_page.py), and the voice it uses
    "engine": N_("Engine"),
    "speed": N_("Speed"),
    "pitch": N_("Pitch (semitones)"),
    "speak_first_messages": N_("Speak the messages it writes first"),
}


# How a Literal's values are shown; values not named here are shown as written.
CHOICES: dict[str, str] = {
    "en": "English",
    "ja": "日本語",
    "auto": N_("automatic"),
    "on": N_("on"),
    "off": N_("off"),
}


def label(name: str) -> str:
    return tr(LABELS[name]) if name in LABELS else name.replace("_", " ").capitalize()


def field_path_label(loc: tuple[str | int, ...]) -> str:
    """A validation error's location in the person's words: "Autonomy › Routines › row 1 › Task"."""
    return " › ".join(tr("row {n}", n=part + 1) if isinstance(part, int) else label(part) for part in loc)


# -- editors, one per field type ---------------------------------------------------------------------------
class Editor:
    widget: QWidget

    def value(self) -> Any:
        raise NotImplementedError

    def set_value(self, value: Any) -> None:
        raise NotImplementedError

    def retranslate(self) -> None:
        pass


class CheckEditor(Editor):
    widget: QCheckBox

    def __init__(self) -> None:
        self.widget = QCheckBox()

    def value(self) -> bool:
        return self.widget.isChecked()

    def set_value(self, value: Any) -> None:
        self.widget.setChecked(bool(value))


def field_bounds(info: FieldInfo) -> tuple[float | None, float | None, bool]:
    """(lowest, highest, lowest excluded) from a field's constraints."""
    low: Any = None  # the constraint's own number (an int stays an int)
    high: Any = None
    open_low = False
    for meta in info.metadata:
        if isinstance(meta, annotated_types.Ge):
            low = meta.ge
        elif isinstance(meta, annotated_types.Gt):
            low, open_low = meta.gt, True
        elif isinstance(meta, annotated_types.Le):
            high = meta.le
        elif isinstance(meta, annotated_types.Lt):
            high = meta.lt
    return low, high, open_low


class IntEditor(Editor):
    widget: QSpinBox

    def __init__(self, info: FieldInfo) -> None:
        self.widget = QSpinBox()
        self.widget.setMaximumWidth(NUMBER_WIDTH)
        low, high, open_low = field_bounds(info)
        low = -1_000_000_000 if low is None else int(low) + (1 if open_low else 0)
        self.widget.setRange(low, 1_000_000_000 if high is None else int(high))

    def value(self) -> int:
        return self.widget.value()

    def set_value(self, value: Any) -> None:
        self.widget.setValue(int(value))


class FloatEditor(Editor):
    widget: QDoubleSpinBox

    def __init__(self, info: FieldInfo) -> None:
        self.widget = QDoubleSpinBox()
        self.widget.setMaximumWidth(NUMBER_WIDTH)
        low, high, open_low = field_bounds(info)
        self.widget.setDecimals(2)
        low = -1e9 if low is None else float(low) + (0.01 if open_low else 0.0)
        high = 1e6 if high is None else float(high)
        self.widget.setRange(low, high)
        self.widget.setSingleStep(0.05 if high <= 2 else 1.0)

    def value(self) -> float:
        return round(self.widget.value(), 2)

    def set_value(self, value: Any) -> None:
        self.widget.setValue(float(value))


class TextEditor(Editor):
    widget: QLineEdit

    def __init__(self, info: FieldInfo) -> None:
        self.widget = QLineEdit()
        for meta in info.metadata:
            if isinstance(meta, annotated_types.MaxLen):
                self.widget.setMaxLength(meta.max_length)

    def value(self) -> str:
        return self.widget.text()

    def set_value(self, value: Any) -> None:
        self.widget.setText("" if value is None else str(value))


class ChoiceEditor(Editor):
    widget: QComboBox

    def __init__(self, values: tuple[Any, ...]) -> None:
        self.widget = QComboBox()
        self.widget.setMaximumWidth(NUMBER_WIDTH * 2)
        for value in values:
            self.widget.addItem(str(value), value)
        self.retranslate()

    def value(self) -> Any:
        return self.widget.currentData()

    def set_value(self, value: Any) -> None:
        self.widget.setCurrentIndex(max(0, self.widget.findData(value)))

    def retranslate(self) -> None:
        for index in range(self.widget.count()):
            value = str(self.widget.itemData(index))
            self.widget.setItemText(index, tr(CHOICES[value]) if value in CHOICES else value)

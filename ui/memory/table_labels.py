"""The Memory window's tables: relabelling a column in the language shown now, and filling a row."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

DATA_ROLE = Qt.ItemDataRole.UserRole  # what a translated cell shows, kept to show it again after a switch


def relabel(table: QTableWidget, column: int, label: Callable[[Any], str]) -> None:
    """Show a column's translated cells again from what they stand for (kept in DATA_ROLE), after a switch."""
    for row in range(table.rowCount()):
        item = table.item(row, column)
        if item is not None and item.data(DATA_ROLE) is not None:
            item.setText(label(item.data(DATA_ROLE)))


def set_row(table: QTableWidget, row: int, values: list[str], column: int, meaning: object) -> None:
    """A row's cells; the translated cell in `column` keeps what it stands for (for relabel)."""
    for col, value in enumerate(values):
        item = QTableWidgetItem(value)
        if col == column:
            item.setData(DATA_ROLE, meaning)
        table.setItem(row, col, item)

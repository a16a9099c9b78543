"""Relabelling a table's column in the language shown now (the Memory window's tables)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableWidget

DATA_ROLE = Qt.ItemDataRole.UserRole  # what a translated cell shows, kept to show it again after a switch


def relabel(table: QTableWidget, column: int, label: Callable[[Any], str]) -> None:
    """Show a column's translated cells again from what they stand for (kept in DATA_ROLE), after a switch."""
    for row in range(table.rowCount()):
        item = table.item(row, column)
        if item is not None and item.data(DATA_ROLE) is not None:
            item.setText(label(item.data(DATA_ROLE)))

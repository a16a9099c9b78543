"""Reading a table widget's cells (a row may lack an item in a column)."""

from __future__ import annotations

from PySide6.QtWidgets import QTableWidget


def cell_text(table: QTableWidget, row: int, column: int) -> str:
    """A cell's text ("" where the row has no item in that column)."""
    item = table.item(row, column)
    return item.text() if item is not None else ""

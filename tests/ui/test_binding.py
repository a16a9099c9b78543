"""The Qt binding itself: PySide6 6.12.0 under Python 3.11 released a reference to None on every call of a
void method (QLabel.setText, QWidget.setEnabled, ...), so a window aborted with "none_dealloc" after some
ten thousand UI updates: a streamed reply alone made thousands. pyproject.toml keeps a binding that does
not; this test fails on one that does."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QLabel


def test_ten_thousand_widget_updates_leave_none_alone(qtbot):
    label = QLabel()
    qtbot.addWidget(label)
    before = sys.getrefcount(None)
    for i in range(10_000):
        label.setText(str(i))
        label.setEnabled(i % 2 == 0)
    assert sys.getrefcount(None) - before > -100  # a healthy binding leaves it where it was

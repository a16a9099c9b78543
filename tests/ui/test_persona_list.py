"""The persona list's model: each row carries its persona (slug, name, avatar, why it cannot be opened, its
unread count) as roles, and what the row shows follows them: an unread count appears in bold and goes
when it is read. The same in the window, with a persona writing first: tests/ui/test_life_window.py."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage

from nexus_ark.app import NexusApp
from ui.util.persona_list import (
    AVATAR_PX,
    AVATAR_ROLE,
    ERROR_ROLE,
    NAME_ROLE,
    SLUG_ROLE,
    UNREAD_ROLE,
    PersonaList,
    draw_avatars,
)

pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints")  # offscreen platform, shown window


def _corner(icon) -> QColor:
    return icon.pixmap(AVATAR_PX, AVATAR_PX).toImage().pixelColor(1, 1)


def test_rows_carry_their_persona_and_an_unread_count_shows_in_bold_until_read(
    qtbot, english_core: NexusApp
) -> None:
    core = english_core
    picture = QImage(80, 60, QImage.Format.Format_RGB32)
    picture.fill(QColor("#d01010"))
    assert picture.save(str(core.personas.store.avatar_file("hikari")), "PNG")
    infos = core.personas.all()
    view = PersonaList()
    qtbot.addWidget(view)
    assert view.show_personas(infos, "aria") == "Aria"
    view.show_avatars(draw_avatars(core, infos))  # on a worker in the window
    model = view.personas
    rows = {model.index(row).data(SLUG_ROLE): model.index(row) for row in range(model.rowCount())}
    aria, hikari = rows["aria"], rows["hikari"]
    assert (aria.data(NAME_ROLE), hikari.data(NAME_ROLE)) == ("Aria", "ひかり")
    assert view.currentIndex() == aria and view.names() == {"aria": "Aria", "hikari": "ひかり"}
    picture_corner = _corner(hikari.data(AVATAR_ROLE))  # its picture, filling the square
    assert picture_corner.alpha() == 255 and picture_corner.red() > 180 and picture_corner.green() < 60
    assert _corner(aria.data(AVATAR_ROLE)).alpha() == 0  # no picture: the disc with its initial
    assert aria.data(ERROR_ROLE) == "" and view.can_open("hikari")

    with qtbot.waitSignal(model.dataChanged) as changed:  # the view repaints the row
        view.show_unread({"hikari": 2})
    assert changed.args[0].row() == hikari.row()
    assert hikari.data() == "ひかり  ● 2" and hikari.data(UNREAD_ROLE) == 2
    assert hikari.data(Qt.ItemDataRole.FontRole).bold()
    assert hikari.data(Qt.ItemDataRole.ToolTipRole) == "2 unread messages written first"
    assert aria.data() == "Aria" and aria.data(UNREAD_ROLE) == 0

    with qtbot.waitSignal(model.dataChanged):
        view.show_unread({"hikari": 0})  # its conversation was opened
    assert hikari.data() == "ひかり" and hikari.data(UNREAD_ROLE) == 0
    assert hikari.data(Qt.ItemDataRole.FontRole) is None
    assert "unread" not in (hikari.data(Qt.ItemDataRole.ToolTipRole) or "")

    view.show()
    with qtbot.waitSignal(view.chosen) as chosen:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(hikari).center())
    assert chosen.args == ["hikari"]


def test_a_persona_that_cannot_be_opened_says_why_and_is_never_selected(
    qtbot, english_core: NexusApp
) -> None:
    core = english_core
    (core.personas.store.root / "aria" / "persona.toml").write_text("this is = = not toml", encoding="utf-8")
    infos = core.personas.all()
    view = PersonaList()
    qtbot.addWidget(view)
    assert view.show_personas(infos, "aria") is None  # there, but it cannot be opened
    row = view.personas.index(view.personas.row_of("aria"))
    assert row.data() == "aria ⚠" and "persona.toml" in row.data(ERROR_ROLE)
    assert not view.can_open("aria") and view.problem("aria") == row.data(ERROR_ROLE)
    assert not row.flags() & Qt.ItemFlag.ItemIsSelectable
    assert not view.selectionModel().isSelected(row)

"""File > Import a character card / Export as a character card: the work runs on a worker, the window is told
how it went, and what is written is a PNG that Qt's own image reader opens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from nexus_ark.app import NexusApp
from nexus_ark.personas.cards import read_card_file
from tests import cards_maker
from ui.personas import card_actions
from ui.util import i18n

CARDS = Path(__file__).resolve().parents[1] / "data" / "cards"
# The offscreen platform says so for every shown window and dialog.
pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints")


@pytest.fixture
def core(data_dir: Path):
    app = NexusApp(data_dir).open()
    i18n.set_language("en")
    yield app
    app.close()
    i18n.set_language("en")


@pytest.fixture
def window(qtbot) -> QWidget:
    widget = QWidget()
    qtbot.addWidget(widget)
    widget.show()
    return widget


def _shown(parent: QWidget) -> list[QMessageBox]:
    return [b for b in parent.findChildren(QMessageBox, "card-result") if b.isVisible()]


def _result(qtbot, parent: QWidget) -> QMessageBox:
    """The message box the work ended with (the result arrives on the UI thread, later)."""
    qtbot.waitUntil(lambda: bool(_shown(parent)), timeout=30_000)
    box = _shown(parent)[0]
    box.hide()
    return box


def test_import_runs_on_a_worker_and_opens_the_new_persona(qtbot, core: NexusApp, window: QWidget) -> None:
    opened: list[str] = []
    card_actions.import_card_file(window, core, CARDS / "seraphina_v2.png", opened.append)
    assert opened == []  # the call returned before the work was done: the UI thread did not wait
    box = _result(qtbot, window)
    qtbot.waitUntil(lambda: opened == ["seraphina-vale"], timeout=10_000)  # the main loop's next turn
    assert box.icon() == QMessageBox.Icon.Information
    assert box.text() == ("Seraphina Vale is ready: 3 greetings, 2 lore entries in memory, 1 always in mind.")
    assert core.personas.load("seraphina-vale").settings.name == "Seraphina Vale"


def test_a_bad_card_is_explained_and_nothing_is_created(
    qtbot, core: NexusApp, window: QWidget, tmp_path: Path
) -> None:
    bad = tmp_path / "broken.png"
    bad.write_bytes(b"not a picture")
    opened: list[str] = []
    card_actions.import_card_file(window, core, bad, opened.append)
    box = _result(qtbot, window)
    assert box.icon() == QMessageBox.Icon.Warning
    assert box.windowTitle() == "Character card not imported"
    assert "broken.png is not a PNG image" in box.text()
    assert opened == [] and core.personas.store.slugs() == ["aria", "hikari"]


def test_export_writes_a_png_qt_reads_and_a_card_we_read_back(
    qtbot, core: NexusApp, window: QWidget, tmp_path: Path
) -> None:
    out = tmp_path / "aria.png"
    card_actions.export_card_file(window, core, "aria", out, "png")
    box = _result(qtbot, window)
    assert box.text() == f"Saved as {out}."
    image = QImage(str(out))
    assert not image.isNull() and image.width() == 256  # the app icon, still a picture
    assert read_card_file(out).data.name == "Aria"
    fixture = QImage(str(CARDS / "shizuku_v3.png"))  # the fixtures are real pictures too
    assert (fixture.width(), fixture.height()) == (64, 64)


def test_the_file_dialogs_lead_to_the_same_work(
    qtbot, core: NexusApp, window: QWidget, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(CARDS / "shizuku_v3.json"), ""))
    opened: list[str] = []
    card_actions.import_card(window, core, opened.append)
    _result(qtbot, window)
    qtbot.waitUntil(lambda: len(opened) == 1, timeout=10_000)  # the main loop's next turn
    # "Save as" without a suffix and the JSON filter chosen: a .json card.
    json_filter = "JSON card (*.json)"
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", lambda *a, **k: (str(tmp_path / "shizuku"), json_filter)
    )
    card_actions.export_card(window, core, opened[0])
    _result(qtbot, window)
    assert read_card_file(tmp_path / "shizuku.json").data.name == "月野しずく"


def test_messages_are_in_japanese_when_the_window_is(qtbot, core: NexusApp, window: QWidget) -> None:
    i18n.set_language("ja")
    card_actions.import_card_file(window, core, CARDS / "shizuku_v3.png")
    box = _result(qtbot, window)
    assert box.windowTitle() == "キャラクターカードを読み込みました"
    assert box.text().startswith("月野しずくの準備ができました。")
    assert i18n.tr(card_actions.IMPORT_ACTION) == "キャラクターカードを読み込む…"


def test_a_cards_notes_are_in_japanese_when_the_window_is(
    qtbot, core: NexusApp, window: QWidget, tmp_path: Path
) -> None:
    card = {"name": "Old Card", "description": "<script>alert(1)</script>", "first_mes": "hi"}  # V1: no spec
    path = tmp_path / "old.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    i18n.set_language("ja")
    card_actions.import_card_file(window, core, path)
    box = _result(qtbot, window)
    notes = box.text().split("\n\n", 1)[1]
    assert notes.startswith(i18n.tr("Notes:")) and i18n.tr("Notes:") != "Notes:"
    assert "V1 のカードです" in notes and "<script> タグが含まれています" in notes
    assert "read as a V2 card" not in notes and "never run" not in notes


def test_a_hostile_card_is_refused_in_japanese_when_the_window_is(
    qtbot, core: NexusApp, window: QWidget, tmp_path: Path
) -> None:
    """Each problem named in Japanese with its field as the card writes it; pydantic's own words and the
    value found are kept as they are. Nothing is created."""
    card = cards_maker.v2_card()
    card["data"]["tags"] = "fantasy"
    card["data"]["character_book"]["entries"] = [{"keys": ["k"], "content": "c"}] * 10_001
    path = tmp_path / "hostile.png"
    path.write_bytes(cards_maker.with_text_chunks(cards_maker.picture(), [("chara", cards_maker.b64(card))]))
    i18n.set_language("ja")
    card_actions.import_card_file(window, core, path)
    box = _result(qtbot, window)
    assert box.icon() == QMessageBox.Icon.Warning
    assert box.windowTitle() == "キャラクターカードを読み込めませんでした"
    assert box.text() == (
        "hostile.png: 項目 'data.tags': Input should be a valid list（値は 'fantasy'）; "
        "項目 'data.character_book.entries': 10001 件の項目があります。読み込めるのは 10000 までです。\n"
        "何も読み込んでいません。"
    )
    assert core.personas.store.slugs() == ["aria", "hikari"]

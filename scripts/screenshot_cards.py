"""Screenshots of File > Import a character card… for docs/screenshots: card-import-{en,ja}[-dark].png.

A temporary data folder, the scripted mind, and a V3 card made here: a PNG with a picture drawn by Qt,
three greetings and a lorebook (two entries for memory, one always in mind), in English or in Japanese.
It is imported the way the menu does it (ui.personas.card_actions.import_card_file, with the main window's
_on_card_imported), and the picture is what the person then sees: the window with the new persona open
on its greeting, and the result box over it. The box is a window of its own, so it is painted over the
window's picture where Qt centres it, under a plain title bar where the window manager would draw its
own (Xvfb has none).

    xvfb-run -a .venv/bin/python scripts/screenshot_cards.py [OUT_DIR]
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QPointF, QRect, Qt
from PySide6.QtGui import QColor, QFont, QImage, QLinearGradient, QPainter, QPalette, QPen, QPixmap
from PySide6.QtWidgets import QApplication, QMessageBox

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.personas.cards import embed_card, v2_copy
from nexus_ark.runtime.scripted_mind import ScriptedMind
from ui.main.main_window import MainWindow
from ui.personas import card_actions
from ui.util import i18n, theme

NOW = datetime.now(UTC).replace(microsecond=0)
CARDS = {
    "en": {
        "file": "mira-holt.png",
        "initial": "M",
        "colours": ("#1f4e79", "#f2b35e"),
        "data": {
            "name": "Mira Holt",
            "description": "{{char}} keeps the Greyhaven lighthouse on a windy northern island. She reads "
            "the sky like a book and writes the weather into a logbook every hour.",
            "personality": "Calm, dry humour, patient with beginners, stubborn about safety.",
            "scenario": "{{user}} is stranded on the island for a week while the ferry is repaired.",
            "first_mes": "Welcome to Greyhaven. The ferry won't come back before Friday, I'm afraid. "
            "Tea for {{user}}? And tell me, do you like storms?",
            "mes_example": "<START>\n{{user}}: Is it going to rain?\n{{char}}: Look at the gulls. "
            "They have all gone inland. Yes.",
            "alternate_greetings": [
                "You found the stairs, {{user}}. Two hundred and twelve steps. Sit, catch your breath.",
                "The lamp needs oil and I need a second pair of hands. Are you busy, {{user}}?",
            ],
            "system_prompt": "",
            "post_history_instructions": "",
            "creator_notes": "A quiet lighthouse keeper, made for Nexus Ark's screenshots.",
            "tags": ["slice of life", "lighthouse"],
            "creator": "Nexus Ark",
            "character_version": "1.0",
            "character_book": {
                "name": "Greyhaven",
                "entries": [
                    {
                        "keys": ["Greyhaven", "lighthouse"],
                        "content": "A white stone lighthouse from 1891; its lamp turns every 12 seconds.",
                        "name": "Greyhaven lighthouse",
                        "enabled": True,
                        "insertion_order": 10,
                    },
                    {
                        "keys": ["Oskar", "ferry"],
                        "content": "Oskar runs the ferry to the mainland and owes Mira three bottles of rum.",
                        "name": "Oskar",
                        "enabled": True,
                        "insertion_order": 20,
                    },
                    {
                        "keys": [],
                        "content": "Mira never lies about the weather.",
                        "constant": True,
                        "enabled": True,
                        "insertion_order": 5,
                    },
                ],
            },
        },
    },
    "ja": {
        "file": "shiomi-mio.png",
        "initial": "澪",
        "colours": ("#2b3a67", "#ffcf70"),
        "data": {
            "name": "汐見 澪",
            "description": "{{char}}は北の小さな島で灯台守をしている。空を本のように読み、一時間ごとに"
            "天気を日誌に書きつける。",
            "personality": "落ち着いていて、少し皮肉屋。初心者には辛抱強いが、安全のことでは頑固。",
            "scenario": "連絡船の修理のあいだ、{{user}}は一週間この島から出られない。",
            "first_mes": "灰ヶ浜へようこそ。連絡船は金曜日まで戻りませんよ。{{user}}さんもお茶をいかが？"
            "嵐はお好き？",
            "mes_example": "<START>\n{{user}}: 雨になる？\n{{char}}: カモメを見て。みんな内陸に"
            "行ったでしょう。降りますよ。",
            "alternate_greetings": [
                "階段を見つけたのね、{{user}}さん。二百十二段。座って息を整えて。",
                "ランプに油を差したいの。もう一組の手が要るんだけど、{{user}}さん、手は空いてる？",
            ],
            "system_prompt": "",
            "post_history_instructions": "",
            "creator_notes": "静かな灯台守。Nexus Ark のスクリーンショット用。",
            "tags": ["日常", "灯台"],
            "creator": "Nexus Ark",
            "character_version": "1.0",
            "character_book": {
                "name": "灰ヶ浜",
                "entries": [
                    {
                        "keys": ["灰ヶ浜", "灯台"],
                        "content": "1891年に建てられた白い石の灯台。灯りは12秒ごとにひと回りする。",
                        "name": "灰ヶ浜灯台",
                        "enabled": True,
                        "insertion_order": 10,
                    },
                    {
                        "keys": ["オスカー", "連絡船"],
                        "content": "オスカーは本土への連絡船の船長。澪にラム酒を三本借りている。",
                        "name": "オスカー",
                        "enabled": True,
                        "insertion_order": 20,
                    },
                    {
                        "keys": [],
                        "content": "澪は天気のことで嘘をつかない。",
                        "constant": True,
                        "enabled": True,
                        "insertion_order": 5,
                    },
                ],
            },
        },
    },
}


def _picture(initial: str, colours: tuple[str, str]) -> bytes:
    """The card's picture, portrait as cards are: a night sky, a lighthouse and its beam, and the
    character's initial on a disc in the middle (what an avatar cropped to its middle square shows)."""
    image = QImage(400, 600, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    sky = QLinearGradient(0, 0, 0, 600)
    sky.setColorAt(0, QColor(colours[0]).darker(170))
    sky.setColorAt(1, QColor(colours[0]).lighter(140))
    painter.fillRect(image.rect(), sky)
    painter.setPen(Qt.PenStyle.NoPen)
    beam = QColor(colours[1])
    beam.setAlpha(70)
    painter.setBrush(beam)
    painter.drawPolygon([QPointF(330, 470), QPointF(0, 380), QPointF(0, 520)])
    painter.setBrush(QColor("#f4f1ea"))
    painter.drawPolygon([QPointF(315, 600), QPointF(322, 470), QPointF(338, 470), QPointF(345, 600)])
    painter.setBrush(QColor(colours[1]))
    painter.drawEllipse(QPointF(200, 300), 150, 150)
    painter.setPen(QColor(colours[0]).darker(140))
    font = QFont()
    font.setPixelSize(170)
    font.setBold(True)
    painter.setFont(font)
    painter.drawText(QRect(50, 150, 300, 300), Qt.AlignmentFlag.AlignCenter, initial)
    painter.end()
    blob = QByteArray()
    buffer = QBuffer(blob)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(blob.data())


def make_card(folder: Path, language: str) -> Path:
    """A V3 PNG card (with its V2 copy in `chara`, as exported cards carry) in `folder`."""
    spec = CARDS[language]
    card = {"spec": "chara_card_v3", "spec_version": "3.0", "data": spec["data"]}
    path = folder / spec["file"]
    path.write_bytes(embed_card(_picture(spec["initial"], spec["colours"]), card, v2_copy(card), path.name))
    return path


def _pump(seconds: float) -> None:
    app = QApplication.instance()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.02)


def _with_box(window: MainWindow, box: QMessageBox) -> QPixmap:
    """The window's picture with the result box over it, centred as Qt places a dialog on its parent, under
    a title bar showing the box's title."""
    picture = window.grab()
    inside = box.grab()
    palette = box.palette()
    bar = box.fontMetrics().height() + 12
    width, height = inside.width(), inside.height() + bar
    at = QPoint((picture.width() - width) // 2, (picture.height() - height) // 2)
    painter = QPainter(picture)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    for spread in range(8, 0, -1):  # a soft shadow, so the box stands off the window in either theme
        painter.fillRect(
            QRect(at.x() - spread, at.y() - spread + 3, width + 2 * spread, height + 2 * spread),
            QColor(0, 0, 0, 7),
        )
    title = palette.color(QPalette.ColorRole.Window).darker(115)
    painter.fillRect(QRect(at.x(), at.y(), width, bar), title)
    painter.setPen(palette.color(QPalette.ColorRole.WindowText))
    font = box.font()
    font.setBold(True)
    painter.setFont(font)
    painter.drawText(
        QRect(at.x() + 12, at.y(), width - 24, bar), Qt.AlignmentFlag.AlignVCenter, box.windowTitle()
    )
    painter.drawPixmap(at.x(), at.y() + bar, inside)
    painter.setPen(QPen(palette.color(QPalette.ColorRole.Mid), 1))
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.drawRect(QRect(at.x(), at.y(), width - 1, height - 1))
    painter.end()
    return picture


def shoot(out: Path, language: str, dark: bool) -> Path:
    data = Path(tempfile.mkdtemp(prefix="nexus-shot-"))
    core = NexusApp(data, clock=FixedClock(NOW), backend_factory=lambda config: ScriptedMind()).open()
    core.state.last_persona = "aria" if language == "en" else "hikari"
    theme.apply_theme("dark" if dark else "light")
    i18n.set_language(language)
    window = MainWindow(core)
    window.show_language(language)
    window.resize(1000, 700)
    window.show()
    app = QApplication.instance()
    for _ in range(400):
        app.processEvents()
        if window.ready:
            break
        time.sleep(0.02)
    card = make_card(data, language)
    before = window.current_slug
    card_actions.import_card_file(window, core, card, window.on_card_imported)
    box: QMessageBox | None = None
    for _ in range(1500):  # the import runs on a worker; the new persona's page arrives from another
        app.processEvents()
        shown = [b for b in window.findChildren(QMessageBox, "card-result") if b.isVisible()]
        box = shown[0] if shown else None
        switched = window.current_slug != before  # opened on the main loop's turn after the box
        if box and switched and window.ready and window.chat.bubbles and not window.chat.drawing:
            break
        time.sleep(0.02)
    if box is None:
        raise SystemExit(f"the import of {card.name} did not finish")
    _pump(1.0)  # the avatar and the language check arrive a moment later
    target = out / f"card-import-{language}{'-dark' if dark else ''}.png"
    _with_box(window, box).save(str(target))
    box.close()
    window.close()
    core.close()
    return target


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/screenshots")
    out.mkdir(parents=True, exist_ok=True)
    QApplication.instance() or QApplication([])
    for language, dark in (("en", False), ("ja", False), ("en", True), ("ja", True)):
        print(shoot(out, language, dark))


if __name__ == "__main__":
    main()

"""Screenshots of an MCP tool in a conversation, for docs/screenshots: tool-approval-{en,ja}.png (the card
asking before the weather tool of tests/integration's MCP test server runs) and tool-result-{en,ja}.png (the
reply that used it, its call opened under it). The model is a scripted stand-in that calls the tool.

    xvfb-run -a .venv/bin/python scripts/screenshot_tool_turn.py [OUT_DIR]
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QApplication

from nexus_ark.agent.reply import TurnResult
from nexus_ark.app import BUNDLED_HINT_KEY, NexusApp
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.scripted import ScriptedBackend
from ui.main.main_window import MainWindow
from ui.util import i18n

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shots import each_language, settle, wait

SERVER = Path(__file__).resolve().parents[1] / "tests" / "integration" / "mcp_test_server.py"
ASK = {"en": "What is the weather in Kyoto today?", "ja": "今日の京都の天気はどう？"}
ANSWER = {"en": "It is sunny in Kyoto today, 21 degrees: a good day for a walk along the river.",
          "ja": "今日の京都は晴れ、21度だよ。鴨川を散歩するのにいい日だね。"}  # fmt: skip
CALL = '<tool_call>{"name": "helper__weather", "arguments": {"city": "Kyoto"}}</tool_call>'


def model(language: str) -> Callable[[Sequence[ChatMessage]], str]:
    return lambda messages: ANSWER[language] if "<tool_result" in messages[-1].content else CALL


def shoot(qt: QApplication, language: str, out: Path) -> None:
    i18n.set_language(language)
    data = Path(tempfile.mkdtemp()) / "data"
    factory = lambda config: ScriptedBackend(model(language), text_tools=True, parameters=4_000_000_000)  # noqa: E731
    with NexusApp(data, backend_factory=factory) as core:
        server = {"command": sys.executable, "args": [str(SERVER)], "useWhen": "the weather"}
        (core.layout.root / "mcp.json").write_text(json.dumps({"mcpServers": {"helper": server}}))
        # The stand-in model is not the bundled one: the notices about the bundled model are closed.
        core.models.dismiss_advice("aria", BUNDLED_HINT_KEY)
        if (advice := core.models.language_advice("hikari")) is not None:
            core.models.dismiss_advice("hikari", advice)
        window = MainWindow(core)
        window.resize(980, 680)
        window.show()
        slug = "aria" if language == "en" else "hikari"  # a Japanese window opens on ひかり
        wait(qt, lambda: window.send_button.isEnabled() and window.current_slug == slug)
        results: list[TurnResult] = []
        window.turn_finished.connect(results.append)
        window.input.setPlainText(ASK[language])
        window.turns.send_message()
        wait(qt, window.tool_approval.isVisible)
        settle(qt)
        window.grab().save(str(out / f"tool-approval-{language}.png"))
        window.tool_approval.once_button.click()
        wait(qt, lambda: results)
        wait(qt, lambda: "⚙" in window.chat.toPlainText(), 10)
        window.chat.anchorClicked.emit(QUrl(f"nexus:tools/{results[0].reply_id}"))
        settle(qt)
        window.grab().save(str(out / f"tool-result-{language}.png"))
        window.close()


if __name__ == "__main__":
    raise SystemExit(each_language(shoot))

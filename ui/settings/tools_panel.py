"""The Settings window's Tools tab: the MCP servers the personas may use (app-wide, or one persona's own),
each server's tools, and the person's decision for each tool (per persona): ask every time, always allow,
never. Servers are added by importing or pasting the mcpServers JSON other apps write. Listing starts the
servers, so it runs on a worker; so do imports and decisions (they write files)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.app import NexusApp
from nexus_ark.app.tools import ServerStatus
from nexus_ark.mcp_tools.approvals import Decision
from nexus_ark.mcp_tools.servers import MCP_FILE, add_servers, parse_servers, remove_server
from nexus_ark.personas.model import PersonaInfo
from nexus_ark.providers.secrets import store_key
from ui.util import theme
from ui.util.i18n import tr
from ui.util.tasks import run_in_background, while_open

DECISIONS: tuple[Decision, ...] = ("ask", "always", "never")


def decision_words(decision: Decision) -> str:
    return {"ask": tr("Ask every time"), "always": tr("Always allow"), "never": tr("Never")}[decision]


class ToolsPanel(QWidget):
    """Servers and tools. say(text) shows a message in the window's status line."""

    def __init__(self, app: NexusApp, say: Callable[[str], None], *, current_persona: str = "") -> None:
        super().__init__()
        self.app = app
        self._say = say
        self._current_persona = current_persona
        self.statuses: list[ServerStatus] = []
        self.decisions: dict[str, Decision] = {}
        self._shown = False
        self.scope_label = QLabel()
        self.scope = QComboBox()
        self.scope.setObjectName("toolsScope")
        self.scope.currentIndexChanged.connect(lambda _i: self.refresh())
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.tree = QTreeWidget()
        self.tree.setObjectName("toolsTree")
        self.tree.setColumnCount(3)
        self.tree.itemSelectionChanged.connect(self._update_buttons)
        self.import_button = QPushButton()
        self.import_button.setObjectName("importTools")
        self.import_button.clicked.connect(lambda: self.import_file())
        self.paste_button = QPushButton()
        self.paste_button.clicked.connect(lambda: self.paste())
        self.remove_button = QPushButton()
        self.remove_button.setObjectName("removeServer")
        self.remove_button.clicked.connect(lambda: self.remove_selected())
        self.refresh_button = QPushButton()
        self.refresh_button.clicked.connect(lambda: self.refresh())
        scope_row = QHBoxLayout()
        scope_row.addWidget(self.scope_label)
        scope_row.addWidget(self.scope, 1)
        buttons = QHBoxLayout()
        for button in (self.import_button, self.paste_button, self.remove_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.refresh_button)
        layout = QVBoxLayout(self)
        layout.addLayout(scope_row)
        layout.addWidget(self.note)
        layout.addWidget(self.tree, 1)
        layout.addLayout(buttons)
        self._update_buttons()

    def showEvent(self, event: QShowEvent) -> None:
        """Listing starts the servers: only once the tab is looked at."""
        super().showEvent(event)
        if not self._shown:
            self._shown = True
            self.refresh_personas()

    def retranslate(self) -> None:
        self.scope_label.setText(tr("Servers of"))
        if self.scope.count():
            self.scope.setItemText(0, tr("Every persona (app-wide)"))
        self.note.setText(
            tr(
                "Tools let a persona act for you: read your notes, look at your calendar or the weather, "
                "through MCP servers. Each tool asks you first unless you allow it here. The built-in model "
                "is too small to use tools; choose a bigger model to use them."
            )
        )
        self.tree.setHeaderLabels([tr("Server and tool"), tr("What it does"), tr("Your decision")])
        self.import_button.setText(tr("Import…"))
        self.paste_button.setText(tr("Paste…"))
        self.remove_button.setText(tr("Remove server"))
        self.refresh_button.setText(tr("Refresh"))
        self._show(self.statuses, self.decisions)

    # -- reading ---------------------------------------------------------------------------------------
    def refresh_personas(self) -> None:
        run_in_background(
            self.app.personas.all, while_open(self, self._show_personas), while_open(self, self._error)
        )

    def _show_personas(self, personas: list[PersonaInfo]) -> None:
        self.scope.blockSignals(True)
        self.scope.clear()
        self.scope.addItem(tr("Every persona (app-wide)"), "")
        for info in personas:
            if info.ok:
                self.scope.addItem(info.name, info.slug)
        self.scope.setCurrentIndex(max(0, self.scope.findData(self._current_persona)))
        self.scope.blockSignals(False)
        self.refresh()

    def choose_persona(self, slug: str) -> None:
        """Show this persona's servers: at once when the list is there, else once it is read."""
        self._current_persona = slug
        index = self.scope.findData(slug)
        if index >= 0:
            self.scope.setCurrentIndex(index)

    def persona(self) -> str:
        return str(self.scope.currentData() or "")

    def refresh(self) -> None:
        slug = self.persona()
        self._say(tr("Starting the tool servers to list their tools…"))

        def read() -> tuple[str, list[ServerStatus], dict[str, Decision]]:
            return slug, self.app.tools.statuses(slug or None), self.app.tools.decisions(slug) if slug else {}

        run_in_background(read, while_open(self, self._listed), while_open(self, self._error))

    def _listed(self, result: tuple[str, list[ServerStatus], dict[str, Decision]]) -> None:
        slug, statuses, decisions = result
        if slug != self.persona():
            return  # another persona was chosen meanwhile: its listing follows
        self._say("")
        self._show(statuses, decisions)

    def _show(self, statuses: list[ServerStatus], decisions: dict[str, Decision]) -> None:
        self.statuses, self.decisions = statuses, decisions
        self.tree.clear()
        for status in statuses:
            where = (
                " ".join([status.config.command, *status.config.args])
                if status.config.command
                else status.config.url
            )
            server = QTreeWidgetItem([status.name, status.config.use_when or where, ""])
            server.setToolTip(1, where)
            server.setData(0, 256, status.name)
            self.tree.addTopLevelItem(server)
            if status.fault is not None:
                fault = QTreeWidgetItem(["", str(status.fault.message), ""])
                fault.setToolTip(1, str(status.fault.message))
                server.addChild(fault)
            for tool in status.tools:
                item = QTreeWidgetItem([tool.name, tool.description, ""])
                item.setToolTip(1, tool.description)
                server.addChild(item)
                self.tree.setItemWidget(item, 2, self._decision_box(tool.key))
            server.setExpanded(True)
        for column in range(3):
            self.tree.resizeColumnToContents(column)
        self._update_buttons()

    def _decision_box(self, key: str) -> QWidget:
        box = QComboBox()
        box.setObjectName(f"decision:{key}")
        for decision in DECISIONS:
            box.addItem(decision_words(decision), decision)
        box.setCurrentIndex(DECISIONS.index(self.decisions.get(key, "ask")))
        slug = self.persona()
        box.setEnabled(bool(slug))
        if not slug:
            box.setToolTip(tr("Choose a persona above to decide for each tool."))
        box.currentIndexChanged.connect(lambda _i: self.decide(key, box.currentData()))
        return box

    # -- changing --------------------------------------------------------------------------------------
    def decide(self, key: str, decision: Decision) -> None:
        slug = self.persona()
        self.decisions[key] = decision
        run_in_background(
            lambda: self.app.tools.decide(slug, key, decision),
            while_open(
                self,
                lambda _r: self._say(tr("{tool}: {decision}", tool=key, decision=decision_words(decision))),
            ),
            while_open(self, self._error),
        )

    def _target(self, slug: str) -> Path:
        """The mcp.json the tab's choice writes (read from the persona's folder: on a worker)."""
        if slug:
            return self.app.personas.store.load(slug).folder / MCP_FILE
        return self.app.layout.root / MCP_FILE

    def import_file(self, path: str | None = None) -> None:
        if path is None:
            path, _ = QFileDialog.getOpenFileName(
                self, tr("Import MCP servers"), "", tr("MCP servers (*.json)")
            )
        if path:
            self.add_text(lambda: Path(path).read_text(encoding="utf-8"), path)

    def paste(self, text: str | None = None) -> None:
        if text is None:
            text, ok = QInputDialog.getMultiLineText(
                self, tr("Paste MCP servers"), tr('The "mcpServers" JSON from another app:')
            )
            if not ok:
                return
        self.add_text(lambda: text or "", tr("the pasted text"))

    def add_text(self, read: Callable[[], str], source: str) -> None:
        slug = self.persona()

        def add() -> list[str]:
            servers = parse_servers(read(), source)
            added, _moved = add_servers(self._target(slug), servers, store_key)
            return added

        run_in_background(add, while_open(self, self._added), while_open(self, self._error))

    def _added(self, names: list[str]) -> None:
        self._say(tr("Added: {names}", names=", ".join(names)) if names else tr("No servers in it."))
        self.refresh()

    def selected_server(self) -> str:
        item = self.tree.currentItem()
        while item is not None and item.parent() is not None:
            item = item.parent()
        return str(item.data(0, 256)) if item is not None else ""

    def remove_selected(self) -> None:
        name, slug = self.selected_server(), self.persona()
        if name:
            run_in_background(
                lambda: remove_server(self._target(slug), name),
                while_open(self, lambda _r: self.refresh()),
                while_open(self, self._error),
            )

    def _update_buttons(self) -> None:
        self.remove_button.setEnabled(bool(self.selected_server()))

    def _error(self, message: str) -> None:
        self._say(theme.tinted(message, "error"))

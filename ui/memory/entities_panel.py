"""The Memory window's "People and things" tab: the names the persona knows about, and the one selected to
read and edit. A panel the window owns (ui/memory/memory_window.py); its reads and saves run on the
window's lane (ui/memory/memory_lane.py)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.memory.components import Entity
from ui.memory.memory_lane import MemoryHost
from ui.util.i18n import tr


class EntitiesPanel(QWidget):
    """The list of names, and the selected one's text to read and edit."""

    def __init__(self, host: MemoryHost) -> None:
        super().__init__()
        self._host = host
        self._request = 0  # the selection whose entity is being read; older answers are dropped
        texts = host.texts
        self.entity_list = QListWidget()
        self.entity_list.setObjectName("entityList")
        self.entity_list.setUniformItemSizes(True)  # one name a row: laid out at once, however many
        # An item's text may carry a label ("Calvin (you)"); the entity's name is its data.
        self.entity_list.currentItemChanged.connect(
            lambda item, _: self._show_entity(item.data(Qt.ItemDataRole.UserRole) if item else "")
        )
        self.entity_name = QLineEdit()
        texts.follow(lambda: self.entity_name.setPlaceholderText(tr("Name")))
        self.entity_text = QPlainTextEdit()
        save = QPushButton()
        texts.follow(lambda: save.setText(tr("Save")))
        save.clicked.connect(self.save_entity)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.addWidget(self.entity_name)
        right_layout.addWidget(self.entity_text, 1)
        right_layout.addWidget(save, 0, Qt.AlignmentFlag.AlignRight)
        splitter = QSplitter()
        splitter.addWidget(self.entity_list)
        splitter.addWidget(right)
        splitter.setSizes([220, 640])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

    def load(self) -> None:
        """The names are read on the lane: a card's lorebook brings thousands of them."""
        self._host.lane.read(
            lambda store: (store.components.entity_names(), store.components.person_entity()),
            self._show_names,
        )

    def _show_names(self, found: tuple[list[str], str]) -> None:
        """The names, the one marked as the person (what the persona knows about you) labelled so."""
        names, person = found
        self.entity_list.clear()
        for name in names:
            item = QListWidgetItem(tr("{name} (you)", name=name) if name == person else name)
            item.setData(Qt.ItemDataRole.UserRole, name)
            if name == person:
                item.setToolTip(tr("What {persona} knows about you", persona=self._host.persona_name))
            self.entity_list.addItem(item)

    def _show_entity(self, name: str) -> None:
        """The selected entity, read on the lane; its fields are read-only until it arrives (so nothing
        typed is overwritten), and an answer for a selection that is no longer current is dropped."""
        self._request += 1
        request = self._request
        if not name:
            self._fill(None)
            return
        self.entity_name.setReadOnly(True)
        self.entity_text.setReadOnly(True)

        def arrived(entity: Entity | None) -> None:
            if request == self._request:
                self._fill(entity)

        def failed() -> None:
            if request == self._request:
                self._fill(None)

        self._host.lane.read(lambda store: store.components.entity(name), arrived, failed)

    def _fill(self, entity: Entity | None) -> None:
        self.entity_name.setText(entity.name if entity else "")
        self.entity_text.setPlainText(entity.text if entity else "")
        self.entity_name.setReadOnly(False)
        self.entity_text.setReadOnly(False)

    def save_entity(self) -> None:
        name, text = self.entity_name.text(), self.entity_text.toPlainText().strip()
        say = self._host.say

        def saved(_: object) -> None:
            self.load()
            say(lambda: tr("Saved."))

        say(lambda: tr("Saving…"))
        self._host.lane.change("save entity", lambda store: store.components.write_entity(name, text), saved)

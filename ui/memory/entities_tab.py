"""The Memory window's "People and things" tab: the names the persona knows about, and the one selected to
read and edit. Mixed into MemoryWindow (ui/memory/memory_window.py); the work runs on the window's worker."""

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
from ui.util.i18n import tr


class EntitiesTab:
    """The entities tab's widgets and what they do; needs the window's worker and status line."""

    def _entities_tab(self) -> QWidget:
        self.entity_list = QListWidget()
        self.entity_list.setObjectName("entityList")
        self.entity_list.setUniformItemSizes(True)  # one name a row: laid out at once, however many
        # An item's text may carry a label ("Calvin (you)"); the entity's name is its data.
        self.entity_list.currentItemChanged.connect(
            lambda item, _: self._show_entity(item.data(Qt.ItemDataRole.UserRole) if item else "")
        )
        self.entity_name = QLineEdit()
        self.follow(lambda: self.entity_name.setPlaceholderText(tr("Name")))
        self.entity_text = QPlainTextEdit()
        save = QPushButton()
        self.follow(lambda: save.setText(tr("Save")))
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
        return splitter

    def _load_entities(self) -> None:
        """The names are read on the worker: a card's lorebook brings thousands of them."""
        self._in_background(
            lambda store: (store.components.entity_names(), store.components.person_entity()),
            self._show_entity_names,
        )

    def _show_entity_names(self, found: tuple[list[str], str]) -> None:
        """The names, the one marked as the person (what the persona knows about you) labelled so."""
        names, person = found
        self.entity_list.clear()
        for name in names:
            item = QListWidgetItem(tr("{name} (you)", name=name) if name == person else name)
            item.setData(Qt.ItemDataRole.UserRole, name)
            if name == person:
                item.setToolTip(tr("What {persona} knows about you", persona=self.persona_name))
            self.entity_list.addItem(item)

    def _show_entity(self, name: str) -> None:
        """The selected entity, read on the worker; its fields are read-only until it arrives (so nothing
        typed is overwritten), and an answer for a selection that is no longer current is dropped."""
        self._entity_request += 1
        request = self._entity_request
        if not name:
            self._fill_entity(None)
            return
        self.entity_name.setReadOnly(True)
        self.entity_text.setReadOnly(True)

        def arrived(entity: Entity | None) -> None:
            if request == self._entity_request:
                self._fill_entity(entity)

        def failed() -> None:
            if request == self._entity_request:
                self._fill_entity(None)

        self._in_background(lambda store: store.components.entity(name), arrived, failed)

    def _fill_entity(self, entity: Entity | None) -> None:
        self.entity_name.setText(entity.name if entity else "")
        self.entity_text.setPlainText(entity.text if entity else "")
        self.entity_name.setReadOnly(False)
        self.entity_text.setReadOnly(False)

    def save_entity(self) -> None:
        name, text = self.entity_name.text(), self.entity_text.toPlainText().strip()

        def saved(_: object) -> None:
            self._load_entities()
            self.say(lambda: tr("Saved."))

        self.say(lambda: tr("Saving…"))
        self._change("save entity", lambda store: store.components.write_entity(name, text), saved)

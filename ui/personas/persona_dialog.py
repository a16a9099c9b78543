"""The 'New persona' dialog."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QVBoxLayout,
)

from ui.util.i18n import current_language, tr


class NewPersonaDialog(QDialog):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("New persona"))
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText(tr("e.g. Mika"))
        self.language_box = QComboBox()
        self.language_box.addItem("English", "en")
        self.language_box.addItem("日本語", "ja")
        self.language_box.setCurrentIndex(1 if current_language() == "ja" else 0)
        self.description_edit = QLineEdit()
        form = QFormLayout()
        form.addRow(tr("Name"), self.name_edit)
        form.addRow(tr("Language"), self.language_box)
        form.addRow(tr("Description"), self.description_edit)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText(tr("Create"))
        buttons.button(QDialogButtonBox.StandardButton.Cancel).setText(tr("Cancel"))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setEnabled(False)
        self.name_edit.textChanged.connect(lambda t: self.ok_button.setEnabled(bool(t.strip())))
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)

    def values(self) -> tuple[str, str, str]:
        return (
            self.name_edit.text().strip(),
            self.language_box.currentData(),
            self.description_edit.text().strip(),
        )

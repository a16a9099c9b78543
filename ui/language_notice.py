"""A short notice above the conversation when the persona's model does not speak its language (ひかり on
the English-only bundled model writes broken Japanese), with the catalogue's suggestion and a way to the
model settings. Closing it remembers the choice for this persona, model and language."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton

from nexus_ark.providers.catalogue import LanguageAdvice
from ui.i18n import N_, tr

# Whole sentences per language (a language's name alone would read as the language picker's own label).
MISMATCH = {
    "en": N_("{name} speaks English, but its model ({model}) does not: its replies may be broken."),
    "ja": N_("{name} speaks Japanese, but its model ({model}) does not: its replies may be broken."),
}
SUGGESTION = {
    "en": N_("Suggested for English: {suggestion} ({size} GB)."),
    "ja": N_("Suggested for Japanese: {suggestion} ({size} GB)."),
}


class LanguageNotice(QFrame):
    open_models = Signal()
    dismissed = Signal(object)  # the LanguageAdvice closed

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("languageNotice")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.models_button = QPushButton()
        self.models_button.clicked.connect(self.open_models)
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.clicked.connect(self._dismiss)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.models_button)
        layout.addWidget(self.close_button)
        self.advice: LanguageAdvice | None = None
        self.persona_name = ""
        self.setVisible(False)

    def show_advice(self, persona_name: str, advice: LanguageAdvice | None) -> None:
        self.advice, self.persona_name = advice, persona_name
        self.retranslate()
        self.setVisible(advice is not None)

    def _dismiss(self) -> None:
        advice = self.advice
        self.show_advice(self.persona_name, None)
        if advice is not None:
            self.dismissed.emit(advice)

    def retranslate(self) -> None:
        self.models_button.setText(tr("Model settings…"))
        self.close_button.setToolTip(tr("Do not show this again for this persona and model"))
        advice = self.advice
        if advice is None:
            self.label.setText("")
            return
        text = tr(MISMATCH.get(advice.language, MISMATCH["en"]), name=self.persona_name, model=advice.model)
        if advice.suggestion is not None:
            text += " " + tr(
                SUGGESTION.get(advice.language, SUGGESTION["en"]),
                suggestion=advice.suggestion.name,
                size=advice.suggestion.size_gb,
            )
        self.label.setText(text)

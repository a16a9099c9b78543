"""A short notice above the conversation when the persona's model does not speak its language (ひかり on
the English-only bundled model writes broken Japanese), with the catalogue's suggestion, one button that
downloads it and switches the persona to it, and a way to the model settings. Closing it remembers the
choice for this persona, model and language. At first start on the bundled model it says in one line which
model is in use and that a better one is a click away (closed once, never again)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton

from nexus_ark.app import BUNDLED_HINT_KEY
from nexus_ark.providers.catalogue import LanguageAdvice
from ui.util.i18n import N_, tr
from ui.util.language_words import mismatch_text

SUGGESTION = {
    "en": N_("Suggested for English: {suggestion} ({size} GB)."),
    "ja": N_("Suggested for Japanese: {suggestion} ({size} GB)."),
}


# The first start's one line, while the persona is on the bundled model (until closed once).
BUNDLED_HINT = N_(
    "{name} is talking on the small built-in model: quick, but simple, and too small to reflect on your days."
    " A better one is a click away."
)


class LanguageNotice(QFrame):
    open_models = Signal()
    dismissed = Signal(object)  # the LanguageAdvice closed, or BUNDLED_HINT_KEY
    get_model = Signal(object)  # the CatalogueEntry to download and switch to; None: the list to choose

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("languageNotice")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.models_button = QPushButton()
        self.models_button.clicked.connect(self.open_models)
        self.get_button = QPushButton()
        self.get_button.setObjectName("getSuggestedModel")
        self.get_button.clicked.connect(self._get)
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.clicked.connect(self._dismiss)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.get_button)
        layout.addWidget(self.models_button)
        layout.addWidget(self.close_button)
        self.advice: LanguageAdvice | None = None
        self.bundled_hint = False
        self.persona_name = ""
        self.setVisible(False)

    def show_advice(
        self, persona_name: str, advice: LanguageAdvice | None, *, bundled_hint: bool = False
    ) -> None:
        """The language advice, else (on the bundled model, at first) the one line saying a better model
        is a click away, else nothing."""
        self.advice, self.persona_name = advice, persona_name
        self.bundled_hint = bundled_hint and advice is None
        self.retranslate()
        self.setVisible(advice is not None or self.bundled_hint)

    def _dismiss(self) -> None:
        advice = self.advice if self.advice is not None else (BUNDLED_HINT_KEY if self.bundled_hint else None)
        self.show_advice(self.persona_name, None)
        if advice is not None:
            self.dismissed.emit(advice)

    def _get(self) -> None:
        if self.advice is not None and self.advice.suggestion is not None:
            self.get_model.emit(self.advice.suggestion)
        elif self.bundled_hint:
            self.get_model.emit(None)  # the list to choose from

    def retranslate(self) -> None:
        self.models_button.setText(tr("Model settings…"))
        self.close_button.setToolTip(tr("Do not show this again for this persona and model"))
        advice = self.advice
        suggestion = advice.suggestion if advice is not None else None
        self.get_button.setVisible(self.bundled_hint or (suggestion is not None and suggestion.obtainable))
        self.models_button.setVisible(not self.bundled_hint)
        if self.bundled_hint:
            self.label.setText(tr(BUNDLED_HINT, name=self.persona_name))
            self.get_button.setText(tr("Get a model…"))
            return
        if advice is None:
            self.label.setText("")
            return
        text = mismatch_text(self.persona_name, advice)
        if suggestion is not None:
            size = f"{suggestion.size_bytes() / 1e9:.1f}"
            text += " " + tr(
                SUGGESTION.get(advice.language, SUGGESTION["en"]), suggestion=suggestion.name, size=size
            )
            # The sentence beside it names the model: the button stays short, so the sentence has the room
            # (with the model's name again on the button, a Japanese notice wrapped into four lines).
            self.get_button.setText(tr("Download it ({size} GB)", size=size))
            self.get_button.setToolTip(tr("Download {name} ({size} GB)", name=suggestion.name, size=size))
        self.label.setText(text)

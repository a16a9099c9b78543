"""The persona editor's Growth page (issue 25): whether the persona may propose changes to its own soul, which
of the soul's sections are fixed (never proposed: only the person changes them), and a way to its history.

The page edits persona.toml's [soul] table like the generated settings pages edit theirs: it is the
SettingsForm's "soul" section (PersonaForm below), so its values are validated and saved with the others
through the editor's one save (app.admin.save_persona). The sections offered are the "## " headings of the
soul as the editor holds it now, read again as the person types; a fixed heading the soul no longer has is
kept, and said to be missing, so nothing the person chose disappears unseen."""

from __future__ import annotations

from typing import Any

from pydantic import create_model
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.personas.model import PersonaSettings, SoulSettings
from nexus_ark.soul import sections
from ui.personas.voice_page import SECTION as VOICE
from ui.personas.voice_page import VoicePage
from ui.util.form_fields import Editor, label
from ui.util.i18n import tr
from ui.util.settings_form import SettingsForm

SECTION = "soul"
HEADING_ROLE = Qt.ItemDataRole.UserRole


class _Field(Editor):
    """One field of the page, as SettingsForm.find returns it (its widget is marked when refused)."""

    def __init__(self, widget: QWidget) -> None:
        self.widget = widget


class GrowthPage(Editor):
    """The [soul] table of persona.toml: {"proposals": bool, "fixed": [heading, ...]}. Its History… button
    is for the editor to connect (it opens the soul's history window)."""

    def __init__(self) -> None:
        self.widget = QWidget()
        self.widget.setObjectName("growthPage")
        self.intro = QLabel()
        self.intro.setWordWrap(True)
        self.proposals = QCheckBox()
        self.proposals.setObjectName("field:soul.proposals")
        self.fixed_title = QLabel()
        self.fixed_title.setWordWrap(True)
        self.fixed = QListWidget()
        self.fixed.setObjectName("field:soul.fixed")
        self.fixed.setMinimumHeight(140)
        self.history_button = QPushButton()
        self.history_button.setObjectName("soulHistoryButton")
        layout = QVBoxLayout(self.widget)
        layout.addWidget(self.intro)
        layout.addWidget(self.proposals)
        layout.addSpacing(8)
        layout.addWidget(self.fixed_title)
        layout.addWidget(self.fixed, 1)
        layout.addWidget(self.history_button, 0, Qt.AlignmentFlag.AlignLeft)
        self._headings: list[str] = []
        self._extra: list[str] = []  # fixed headings the soul does not have (now)
        self.retranslate()

    # -- the soul's sections ------------------------------------------------------------------------
    def set_soul(self, text: str) -> None:
        """Offer the headings of this soul (the editor's text as it is now); what is ticked stays ticked."""
        headings = list(dict.fromkeys(h for h in sections.headings(text) if h))
        if headings == self._headings:
            return
        chosen = self.value()["fixed"]
        self._headings = headings
        self._fill(chosen)

    def _fill(self, chosen: list[str]) -> None:
        folded = {sections.fold(h) for h in chosen}
        present = {sections.fold(h) for h in self._headings}
        self._extra = [h for h in chosen if sections.fold(h) not in present]
        self.fixed.clear()
        for heading in [*self._headings, *self._extra]:
            item = QListWidgetItem()
            item.setData(HEADING_ROLE, heading)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
            ticked = sections.fold(heading) in folded
            item.setCheckState(Qt.CheckState.Checked if ticked else Qt.CheckState.Unchecked)
            self.fixed.addItem(item)
        self._label_items()

    def _label_items(self) -> None:
        for row in range(self.fixed.count()):
            item = self.fixed.item(row)
            heading = item.data(HEADING_ROLE)
            missing = heading in self._extra
            item.setText(tr("{heading} (not in the soul now)", heading=heading) if missing else heading)

    def set_fixed(self, heading: str, fixed: bool) -> bool:
        """Tick or untick a section, as a click does (False: the soul has no such section offered)."""
        for row in range(self.fixed.count()):
            item = self.fixed.item(row)
            if sections.fold(item.data(HEADING_ROLE)) == sections.fold(heading):
                item.setCheckState(Qt.CheckState.Checked if fixed else Qt.CheckState.Unchecked)
                return True
        return False

    # -- Editor -----------------------------------------------------------------------------------
    def value(self) -> dict[str, Any]:
        fixed = [
            self.fixed.item(row).data(HEADING_ROLE)
            for row in range(self.fixed.count())
            if self.fixed.item(row).checkState() == Qt.CheckState.Checked
        ]
        return {"proposals": self.proposals.isChecked(), "fixed": fixed}

    def set_value(self, value: Any) -> None:
        settings = SoulSettings.model_validate(value or {})
        self.proposals.setChecked(settings.proposals)
        self._fill(settings.fixed)

    def find(self, loc: tuple[str | int, ...]) -> Editor | None:
        if loc and loc[0] == "proposals":
            return _Field(self.proposals)
        if loc and loc[0] == "fixed":
            return _Field(self.fixed)
        return None

    def retranslate(self) -> None:
        self.intro.setText(
            tr(
                "A persona can grow: after a night's reflection it may propose to change a section of its "
                "soul. Nothing changes until you accept; every version is kept in its history."
            )
        )
        self.proposals.setText(label("proposals"))
        proposals_tip = tr(SoulSettings.model_fields["proposals"].description or "")
        self.proposals.setToolTip(proposals_tip)
        self.fixed_title.setText(
            tr(
                "{fixed}: tick a section that only you change; the persona never proposes a change to it.",
                fixed=label("fixed"),
            )
        )
        self.fixed.setToolTip(tr(SoulSettings.model_fields["fixed"].description or ""))
        self.history_button.setText(tr("History…"))
        self._label_items()


def _settings_without_soul() -> type[PersonaSettings]:
    """PersonaSettings less its [soul] table, for SettingsForm to generate the other pages from."""
    fields = {name: (info.annotation, info) for name, info in PersonaSettings.model_fields.items()}
    fields.pop(SECTION)
    fields.pop(VOICE, None)  # its own page (ui/personas/voice_page.py): an engine is a choice or "automatic"
    return create_model(  # type: ignore[call-overload]
        "PersonaSettingsForm", __config__=PersonaSettings.model_config, **fields
    )


class PersonaForm(SettingsForm):
    """The persona editor's settings: the generated pages, and the Growth page as the "soul" section."""

    def __init__(self) -> None:
        super().__init__(_settings_without_soul())
        self.model = PersonaSettings  # validated whole, [soul] included
        self.growth = GrowthPage()
        self.sections[SECTION] = self.growth
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.growth.widget)
        scroll.setObjectName(f"section:{SECTION}")
        self.pages[SECTION] = scroll
        self.voice = VoicePage()
        self.sections[VOICE] = self.voice
        self.pages[VOICE] = voice_scroll = QScrollArea()
        voice_scroll.setWidgetResizable(True)
        voice_scroll.setWidget(self.voice.widget)
        voice_scroll.setObjectName(f"section:{VOICE}")

    def find(self, loc: tuple[str | int, ...]) -> Editor | None:
        if loc and loc[0] == SECTION:
            return self.growth.find(loc[1:]) or self.growth
        if loc and loc[0] == VOICE:
            return self.voice.find(loc[1:]) or self.voice
        return super().find(loc)

    def all_editors(self) -> list[Editor]:
        growth = [_Field(self.growth.proposals), _Field(self.growth.fixed)]
        return [*super().all_editors(), *growth, *self.voice.editors()]

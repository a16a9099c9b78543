"""The dashboard's panels for what dreams write: the episodic timeline, people and things (editable) and
the dream diary. Each memory says which messages it came from."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.memory.components import Entity, Episode, Insight
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.narrative import emotion_name
from ui.life.dashboard_data import DreamEntry, local_time, sources_text, timestamp
from ui.util import theme
from ui.util.i18n import current_language, tr

Write = Callable[[Callable[[MemoryStore], Any], Callable[[Any], None]], None]

TONE = "#7a5ea8"  # an episode's tone and an insight's topic, beside the date


def _css(palette: QPalette) -> str:
    """The dates take the text's own colour; tone, labels and sources colours that read on the browser's
    background in the theme drawn now (fixed greys were 1.3:1 on the dark theme)."""
    tone, muted = theme.colour(TONE, palette).name(), theme.colour("muted", palette).name()
    return (
        f"<style>h3{{margin:10px 0 2px 0}} .tone{{color:{tone};font-weight:normal}}"
        f" .src{{color:{muted};font-size:small}} .label{{color:{muted}}}</style>"
    )


def _browser(name: str) -> QTextBrowser:
    browser = QTextBrowser()
    browser.setObjectName(name)
    browser.setOpenLinks(False)
    return browser


class _Themed(QWidget):
    """A panel whose HTML carries colours: drawn again when the theme changes (from the panel's own
    palette: its children get the new one after it)."""

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.retranslate()

    def retranslate(self) -> None:
        raise NotImplementedError


class EpisodesPanel(_Themed):
    """One summary a day, newest first: its emotional tone, key events and sources."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.episodes: list[Episode] = []
        self.view = _browser("episodes")
        layout = QVBoxLayout(self)
        layout.addWidget(self.view)

    def show_episodes(self, episodes: list[Episode]) -> None:
        self.episodes = episodes
        if not episodes:
            self.view.setHtml(f"<p>{escape(tr('No episodes yet: dreams write one summary a day.'))}</p>")
            return
        language = current_language()
        parts = [_css(self.palette())]
        for ep in reversed(episodes):
            tone = tr("tone: {tone}", tone=emotion_name(ep.emotional_tone, language))
            parts.append(
                f"<h3>{escape(ep.date)} <span class='tone'>· {escape(tone)}</span></h3>"
                f"<p>{escape(ep.summary)}</p>"
            )
            if ep.key_events:
                events = "".join(f"<li>{escape(e)}</li>" for e in ep.key_events)
                parts.append(f"<p class='label'>{escape(tr('Key events'))}</p><ul>{events}</ul>")
            parts.append(f"<p class='src'>{escape(sources_text(ep.source_ids))}</p>")
        self.view.setHtml("".join(parts))

    def retranslate(self) -> None:
        self.show_episodes(self.episodes)


class DiaryPanel(_Themed):
    """The dream diary, newest first: the insight, the strategy it led to and the diary entry."""

    get_model = Signal()  # the person asked for a model that can reflect

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.insights: list[Insight] = []
        self.held_back = ""  # why the latest dream did not reflect ('' when it did)
        self.held_back_model = ""
        self.dreams: list[DreamEntry] = []
        self.view = _browser("dreamDiary")
        self.get_model_button = QPushButton()
        self.get_model_button.setObjectName("diaryGetModel")
        self.get_model_button.clicked.connect(self.get_model)
        self.get_model_button.setVisible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view)
        layout.addWidget(self.get_model_button, 0, Qt.AlignmentFlag.AlignLeft)

    def show_insights(
        self,
        insights: list[Insight],
        held_back: str = "",
        model: str = "",
        dreams: list[DreamEntry] | None = None,
    ) -> None:
        """The insights and the dreams that wrote none (a model too small to reflect writes the day's
        episode and people and things only), one timeline, newest first."""
        self.insights, self.held_back, self.held_back_model = insights, held_back, model
        self.dreams = list(dreams or [])
        self.get_model_button.setText(tr("Get a model…"))
        self.get_model_button.setVisible(bool(held_back))
        reason = ""
        if held_back:  # the persona's model writes no insights: say why beside what it did write
            reason = (
                f"<p class='heldBack'><b>{escape(tr('Reflection needs a larger model.'))}</b> "
                + escape(
                    tr(
                        "{model} keeps to the day's own words: the episode quotes the day and people and "
                        "things keep the sentences that name them; it writes no insights, values, questions "
                        "or goals, which it would make up.",
                        model=model or tr("This model"),
                    )
                )
                + "</p>"
            )
        entries = [(i.created_at, self._insight_html(i)) for i in insights]
        entries += [(d.finished_at, self._dream_html(d)) for d in self.dreams if not d.reflected]
        if not entries:
            self.view.setHtml(
                _css(self.palette())
                + reason
                + f"<p>{escape(tr('No dreams yet: the diary is written while the persona sleeps.'))}</p>"
            )
            return
        entries.sort(key=lambda entry: _moment(entry[0]), reverse=True)
        self.view.setHtml("".join([_css(self.palette()), reason, *(html for _, html in entries)]))

    @staticmethod
    def _insight_html(i: Insight) -> str:
        when, topic = escape(local_time(i.created_at)), escape(i.trigger_topic)
        parts = [
            f"<h3>{when} <span class='tone'>· {topic}</span></h3>"
            f"<p><span class='label'>{escape(tr('Insight'))}:</span> {escape(i.insight)}</p>"
            f"<p><span class='label'>{escape(tr('Strategy'))}:</span> {escape(i.strategy)}</p>"
        ]
        if i.log_entry:
            parts.append(
                f"<p><span class='label'>{escape(tr('Diary'))}:</span> <i>{escape(i.log_entry)}</i></p>"
            )
        parts.append(f"<p class='src'>{escape(sources_text(i.source_ids))}</p>")
        return "".join(parts)

    @staticmethod
    def _dream_html(d: DreamEntry) -> str:
        """A dream that wrote no insight: which day it dreamt of, and what it kept."""
        about = {
            2: tr("a dream of the week to {date}", date=d.date),
            3: tr("a dream of the month to {date}", date=d.date),
        }.get(d.level) or tr("a dream of {date}", date=d.date)
        parts = [f"<h3>{escape(local_time(d.finished_at))} <span class='tone'>· {escape(about)}</span></h3>"]
        if d.episode:
            parts.append(f"<p><span class='label'>{escape(tr('Episode'))}:</span> {escape(d.episode)}</p>")
        if d.entities:
            parts.append(
                f"<p><span class='label'>{escape(tr('People and things'))}:</span> "
                f"{escape(', '.join(d.entities))}</p>"
            )
        if d.questions or d.goals:
            asked = tr("{questions} open questions and {goals} goals", questions=d.questions, goals=d.goals)
            parts.append(f"<p>{escape(asked)}</p>")
        if not (d.episode or d.entities or d.questions or d.goals):
            parts.append(f"<p>{escape(tr('Nothing new to keep from that day.'))}</p>")
        return "".join(parts)

    def retranslate(self) -> None:
        self.show_insights(self.insights, self.held_back, self.held_back_model, self.dreams)


def _moment(stamp: str) -> float:
    """Sort key of a stored time (one that cannot be read sorts last)."""
    try:
        return timestamp(stamp) if stamp else 0.0
    except ValueError:
        return 0.0


class EntitiesPanel(QWidget):
    """People and things the persona knows about, each a free text the person may correct."""

    def __init__(self, write: Write, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._write = write
        self.entities: list[Entity] = []
        self.list = QListWidget()
        self.list.setObjectName("dashboardEntities")
        self.list.currentTextChanged.connect(self._show_entity)
        self.name = QLineEdit()
        self.text = QPlainTextEdit()
        self.sources = QLabel()
        theme.set_tone(self.sources, "muted")
        self.sources.setWordWrap(True)
        self.save_button = QPushButton()
        self.save_button.clicked.connect(self.save)
        self.saved = QLabel()
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.addWidget(self.name)
        right_layout.addWidget(self.text, 1)
        right_layout.addWidget(self.sources)
        row = QHBoxLayout()
        row.addWidget(self.saved, 1)
        row.addWidget(self.save_button, 0, Qt.AlignmentFlag.AlignRight)
        right_layout.addLayout(row)
        splitter = QSplitter()
        splitter.addWidget(self.list)
        splitter.addWidget(right)
        splitter.setSizes([220, 640])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)
        self.retranslate()

    def retranslate(self) -> None:
        self.name.setPlaceholderText(tr("Name"))
        self.save_button.setText(tr("Save"))
        self._show_entity(self.list.currentItem().text() if self.list.currentItem() else "", keep_text=True)

    def show_entities(self, entities: list[Entity]) -> None:
        self.entities = entities
        # A refresh never overwrites the editor (the person may be typing); it selects what is edited.
        current = self.name.text().strip()
        self.list.blockSignals(True)
        self.list.clear()
        for entity in entities:
            self.list.addItem(entity.name)
        matches = self.list.findItems(current, Qt.MatchFlag.MatchFixedString) if current else []
        if matches:
            self.list.setCurrentItem(matches[0])
        self.list.blockSignals(False)
        self._show_entity(matches[0].text() if matches else "", keep_text=True)

    def _show_entity(self, name: str, keep_text: bool = False) -> None:
        entity = next((e for e in self.entities if e.name == name), None)
        if not keep_text:  # a refresh while the person types keeps what they typed
            self.name.setText(entity.name if entity else "")
            self.text.setPlainText(entity.text if entity else "")
        self.sources.setText(
            tr(
                "{sources} · updated {time}",
                sources=sources_text(entity.source_ids),
                time=local_time(entity.updated_at),
            )
            if entity
            else ""
        )

    def save(self) -> None:
        name, text = self.name.text().strip(), self.text.toPlainText().strip()
        if not name:
            self.saved.setText(tr("An entity needs a name."))
            return
        self.saved.setText(tr("Saving…"))
        self._write(
            lambda store: store.components.write_entity(name, text),
            lambda _: self.saved.setText(tr("Saved.")),
        )

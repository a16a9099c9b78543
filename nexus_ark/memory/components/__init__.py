"""The memory components beside the archive: what each holds and how it is edited.

Core memory and the notepad are single texts, always in the prompt. Episodes (one summary a day),
entities (free text per person, thing or concept), dream-diary insights and goals are also indexed as
archive items, so recall finds them. Drives, open questions and the emotion log are the persona's
internal state. Every change keeps where it came from (source ids) and when.
"""

import sqlite_utils

from nexus_ark.clock import Clock, SystemClock
from nexus_ark.memory.activity import ActivityLog
from nexus_ark.memory.archive import Archive
from nexus_ark.memory.components.goals import GoalMemory
from nexus_ark.memory.components.inner_state import InnerState
from nexus_ark.memory.components.records import (
    Drive,
    EmotionEntry,
    Entity,
    Episode,
    Goal,
    GoalStatus,
    GoalTerm,
    Insight,
    OpenQuestion,
)
from nexus_ark.memory.components.written import WrittenMemory

__all__ = [
    "Components",
    "Drive",
    "EmotionEntry",
    "Entity",
    "Episode",
    "Goal",
    "GoalStatus",
    "GoalTerm",
    "Insight",
    "OpenQuestion",
]


class Components:
    """Reads and edits of every component, each change in one transaction with its archive item and its
    entry in the activity timeline. Three parts, each with its own state and given the same connection,
    archive, clock and timeline: `written` (core memory, notepad, episodes, entities, insights),
    `goal_book` (goals and the reflection notes) and `inner` (drives, open questions, emotions). The
    methods here are what the rest of Nexus Ark calls; each hands on to its part."""

    def __init__(
        self,
        db: sqlite_utils.Database,
        archive: Archive,
        clock: Clock | None = None,
        *,
        activity: ActivityLog | None = None,
    ) -> None:
        self.db = db
        clock = clock or SystemClock()
        activity = activity or ActivityLog(db, clock)
        self.written = WrittenMemory(db, archive, clock, activity=activity)
        self.goal_book = GoalMemory(db, archive, clock, activity=activity)
        self.inner = InnerState(db, archive, clock, activity=activity)

    # -- WrittenMemory -----------------------------------------------------------------------------
    def core_memory(self) -> str:
        return self.written.core_memory()

    def set_core_memory(self, text: str) -> None:
        self.written.set_core_memory(text)

    def notepad(self) -> str:
        return self.written.notepad()

    def set_notepad(self, text: str) -> None:
        self.written.set_notepad(text)

    def put_episode(self, episode: Episode) -> None:
        self.written.put_episode(episode)

    def episodes(self, since: str | None = None) -> list[Episode]:
        return self.written.episodes(since)

    def entity(self, name: str) -> Entity | None:
        return self.written.entity(name)

    def write_entity(self, name: str, text: str, source_ids: list[str] | None = None) -> Entity:
        return self.written.write_entity(name, text, source_ids)

    def person_entity(self) -> str:
        return self.written.person_entity()

    def write_person(self, name: str, text: str, source_ids: list[str] | None = None) -> Entity:
        return self.written.write_person(name, text, source_ids)

    def entities(self) -> list[Entity]:
        return self.written.entities()

    def entity_names(self) -> list[str]:
        return self.written.entity_names()

    def set_reading(self, name: str, reading: str) -> Entity:
        return self.written.set_reading(name, reading)

    def readings(self) -> dict[str, str]:
        return self.written.readings()

    def add_insight(self, insight: Insight) -> int:
        return self.written.add_insight(insight)

    def insights(self, limit: int = 50) -> list[Insight]:
        return self.written.insights(limit)

    def latest_strategy(self) -> str:
        return self.written.latest_strategy()

    # -- GoalMemory --------------------------------------------------------------------------------
    def put_goal(self, goal: Goal) -> Goal:
        return self.goal_book.put_goal(goal)

    def goals(self, term: GoalTerm | None = None, status: GoalStatus | None = "active") -> list[Goal]:
        return self.goal_book.goals(term, status)

    def goal(self, goal_id: str) -> Goal | None:
        return self.goal_book.goal(goal_id)

    def add_progress(self, goal_id: str, note: str, source_ids: list[str] | None = None) -> Goal:
        return self.goal_book.add_progress(goal_id, note, source_ids)

    def set_goal_status(self, goal_id: str, status: GoalStatus, note: str = "") -> Goal:
        return self.goal_book.set_goal_status(goal_id, status, note)

    def reflection_meta(self) -> dict[str, str]:
        return self.goal_book.reflection_meta()

    def set_reflection_meta(self, key: str, value: str) -> None:
        self.goal_book.set_reflection_meta(key, value)

    # -- InnerState --------------------------------------------------------------------------------
    def set_drive(self, drive: Drive) -> None:
        self.inner.set_drive(drive)

    def drives(self) -> list[Drive]:
        return self.inner.drives()

    def add_question(self, question: OpenQuestion) -> int:
        return self.inner.add_question(question)

    def resolve_question(
        self, question_id: int, *, evidence_message_id: int | None = None, by: str = "conversation"
    ) -> None:
        self.inner.resolve_question(question_id, evidence_message_id=evidence_message_id, by=by)

    def delete_question(self, question_id: int) -> bool:
        return self.inner.delete_question(question_id)

    def open_questions(self, include_resolved: bool = False) -> list[OpenQuestion]:
        return self.inner.open_questions(include_resolved)

    def log_emotion(self, entry: EmotionEntry) -> None:
        self.inner.log_emotion(entry)

    def revise_emotion(self, message_id: int, emotion: str, value: float) -> bool:
        return self.inner.revise_emotion(message_id, emotion, value)

    def emotions(self, since: str | None = None) -> list[EmotionEntry]:
        return self.inner.emotions(since)

    def emotion_labels(self, message_ids: list[int]) -> list[str]:
        return self.inner.emotion_labels(message_ids)

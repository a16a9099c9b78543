"""The memory components beside the archive: what each holds and how it is edited.

Core memory and the notepad are single texts, always in the prompt. Episodes (one summary a day),
entities (free text per person, thing or concept), dream-diary insights and goals are also indexed as
archive items, so recall finds them. Drives, open questions and the emotion log are the persona's
internal state. Every change keeps where it came from (source ids) and when.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Literal

import sqlite_utils
from pydantic import BaseModel, Field

from nexus_ark.clock import Clock, SystemClock, iso
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.activity import ActivityLog, clip
from nexus_ark.memory.archive import Archive, NewItem
from nexus_ark.notices import notice

GoalTerm = Literal["short", "long"]
GoalStatus = Literal["active", "completed", "abandoned"]


class Episode(BaseModel):
    date: str  # YYYY-MM-DD
    summary: str
    key_events: list[str] = Field(default_factory=list)
    emotional_tone: str = "neutral"
    source_ids: list[str] = Field(default_factory=list)


class Entity(BaseModel):
    name: str
    text: str
    source_ids: list[str] = Field(default_factory=list)
    created_at: str = ""
    updated_at: str = ""


class Insight(BaseModel):
    trigger_topic: str
    insight: str
    strategy: str
    log_entry: str
    source_ids: list[str] = Field(default_factory=list)
    created_at: str = ""


class Goal(BaseModel):
    id: str = ""
    term: GoalTerm
    goal: str
    status: GoalStatus = "active"
    priority: int = 1
    progress_notes: list[str] = Field(default_factory=list)
    related_values: list[str] = Field(default_factory=list)
    source_ids: list[str] = Field(default_factory=list)
    created_at: str = ""
    updated_at: str = ""


class Drive(BaseModel):
    name: str
    level: float = Field(ge=0.0, le=1.0)
    threshold: float = Field(default=0.6, ge=0.0, le=1.0)
    info: dict[str, Any] = Field(default_factory=dict)
    updated_at: str = ""


class OpenQuestion(BaseModel):
    id: int = 0
    question: str
    topic: str = ""
    context: str = ""  # what the persona was thinking of when it asked
    priority: float = Field(default=0.5, ge=0.0, le=1.0)
    source_ids: list[str] = Field(default_factory=list)
    created_at: str = ""
    resolved_at: str | None = None
    resolved_by: str | None = None  # "conversation" (the end-of-conversation check) or "user"


class EmotionEntry(BaseModel):
    timestamp: str
    emotion: str
    value: float
    snippet: str = ""
    message_id: int | None = None


# A goal's term and status in the timeline's sentences: in English as stored ("short-term"), in a window
# translated.
_TERM_WORDS = {"short": notice("short-term"), "long": notice("long-term")}
_STATUS_WORDS = {
    "active": notice("active"),
    "completed": notice("completed"),
    "abandoned": notice("abandoned"),
}


def _said(text: str) -> str:
    """What a rewritten text says now, for the timeline (an emptied one says so)."""
    return clip(text) if text.strip() else notice("(emptied)")


def _json_list(value: str | None) -> list[Any]:
    return json.loads(value) if value else []


_ENTITY_COLUMNS = "name, text, source_ids, created_at, updated_at"


def _entity(row: tuple[Any, ...]) -> Entity:
    return Entity(
        name=row[0], text=row[1], source_ids=_json_list(row[2]), created_at=row[3], updated_at=row[4]
    )


_GOAL_COLUMNS = (
    "id, term, goal, status, priority, progress_notes, related_values, source_ids, created_at, updated_at"
)


def _goal(row: Any) -> Goal:
    a, b, c, d, e, f, g, h, i, j = row
    return Goal(
        id=a,
        term=b,
        goal=c,
        status=d,
        priority=e,
        progress_notes=_json_list(f),
        related_values=_json_list(g),
        source_ids=_json_list(h),
        created_at=i,
        updated_at=j,
    )


class Components:
    """Reads and edits of every component, each change in one transaction with its archive item and its
    entry in the activity timeline."""

    def __init__(
        self,
        db: sqlite_utils.Database,
        archive: Archive,
        clock: Clock | None = None,
        *,
        activity: ActivityLog | None = None,
    ) -> None:
        self.db = db
        self.archive = archive
        self.clock = clock or SystemClock()
        self.activity = activity or ActivityLog(db, self.clock)

    def _now(self) -> str:
        return iso(self.clock.now())

    # -- core memory and notepad: single texts ----------------------------------------------------
    def core_memory(self) -> str:
        row = self.db.execute("select text from core_memory where id = 1").fetchone()
        return row[0] if row else ""

    def set_core_memory(self, text: str) -> None:
        """Core memory is also one protected archive item (kind "core"), so recall finds its facts."""
        with self.db.atomic():
            self.db.execute(
                "insert into core_memory (id, text, updated_at) values (1, ?, ?) "
                "on conflict(id) do update set text = excluded.text, updated_at = excluded.updated_at",
                [text, self._now()],
            )
            row = self.db.execute("select id from items where kind = 'core' limit 1").fetchone()
            item_id = row[0] if row else None
            if row:
                self.archive.update_text(row[0], text)
            elif text.strip():
                item_id = self.archive.add(NewItem(kind="core", text=text, importance=1.0))
            self.activity.memory_write(notice("core memory"), _said(text), item_id=item_id, chars=len(text))

    def notepad(self) -> str:
        row = self.db.execute("select text from notepad where id = 1").fetchone()
        return row[0] if row else ""

    def set_notepad(self, text: str) -> None:
        with self.db.atomic():
            self.db.execute(
                "insert into notepad (id, text, updated_at) values (1, ?, ?) "
                "on conflict(id) do update set text = excluded.text, updated_at = excluded.updated_at",
                [text, self._now()],
            )
            self.activity.memory_write(notice("notepad"), _said(text), chars=len(text))

    # -- episodes ---------------------------------------------------------------------------------
    def put_episode(self, episode: Episode) -> None:
        text = f"{episode.date}: {episode.summary}"
        if episode.key_events:
            text += " Key events: " + "; ".join(episode.key_events)
        now = self._now()
        with self.db.atomic():
            row = self.db.execute("select item_id from episodes where date = ?", [episode.date]).fetchone()
            if row and row[0]:
                self.archive.update_text(row[0], text)
                item_id = row[0]
            else:
                item_id = self.archive.add(
                    NewItem(
                        kind="episode",
                        text=text,
                        source_ids=episode.source_ids,
                        created_at=f"{episode.date}T23:59:00",
                    )
                )
            self.db.execute(
                "insert into episodes (date, summary, key_events, emotional_tone, source_ids, item_id, created_at, "
                "updated_at) values (?,?,?,?,?,?,?,?) on conflict(date) do update set summary = excluded.summary, "
                "key_events = excluded.key_events, emotional_tone = excluded.emotional_tone, "
                "source_ids = excluded.source_ids, item_id = excluded.item_id, updated_at = excluded.updated_at",
                [
                    episode.date,
                    episode.summary,
                    json.dumps(episode.key_events, ensure_ascii=False),
                    episode.emotional_tone,
                    json.dumps(episode.source_ids),
                    item_id,
                    now,
                    now,
                ],
            )
            self.activity.memory_write(
                notice("episode"), f"{episode.date}: {episode.summary}", item_id=item_id
            )

    def episodes(self, since: str | None = None) -> list[Episode]:
        rows = self.db.execute(
            "select date, summary, key_events, emotional_tone, source_ids from episodes "
            "where date >= coalesce(?, '') order by date",
            [since],
        ).fetchall()
        return [
            Episode(date=d, summary=s, key_events=_json_list(k), emotional_tone=t, source_ids=_json_list(src))
            for d, s, k, t, src in rows
        ]

    # -- entities ---------------------------------------------------------------------------------
    def entity(self, name: str) -> Entity | None:
        row = self.db.execute(
            f"select {_ENTITY_COLUMNS} from entities where name = ?", [name.strip()]
        ).fetchone()
        return _entity(row) if row else None

    def write_entity(self, name: str, text: str, source_ids: list[str] | None = None) -> Entity:
        name = name.strip()
        if not name:
            raise NexusArkError(notice("An entity needs a name."))
        now = self._now()
        with self.db.atomic():
            row = self.db.execute(
                "select item_id, source_ids from entities where name = ?", [name]
            ).fetchone()
            sources = sorted({*(_json_list(row[1]) if row else []), *(source_ids or [])})
            item_text = f"{name}: {text}"
            if row and row[0]:
                item_id = row[0]
                self.archive.update_text(row[0], item_text)
                self.db.execute(
                    "update entities set text = ?, source_ids = ?, updated_at = ? where name = ?",
                    [text, json.dumps(sources), now, name],
                )
            else:
                item_id = self.archive.add(NewItem(kind="entity", text=item_text, source_ids=sources))
                self.db.execute(
                    "insert into entities (name, text, source_ids, item_id, created_at, updated_at) "
                    "values (?,?,?,?,?,?)",
                    [name, text, json.dumps(sources), item_id, now, now],
                )
            self.activity.memory_write(notice("entity"), f"{name}: {text}", item_id=item_id, name=name)
        entity = self.entity(name)
        assert entity is not None
        return entity

    def entities(self) -> list[Entity]:
        rows = self.db.execute(f"select {_ENTITY_COLUMNS} from entities order by name collate nocase")
        return [_entity(row) for row in rows]

    def entity_names(self) -> list[str]:
        """Every entity's name, in the order entities() gives them (a lorebook brings thousands)."""
        return [r[0] for r in self.db.execute("select name from entities order by name collate nocase")]

    # -- dream diary ------------------------------------------------------------------------------
    def add_insight(self, insight: Insight) -> int:
        now = insight.created_at or self._now()
        with self.db.atomic():
            item_id = self.archive.add(
                NewItem(
                    kind="insight",
                    text=f"{insight.trigger_topic}: {insight.insight} Strategy: {insight.strategy}",
                    source_ids=insight.source_ids,
                    created_at=now,
                    importance=0.7,
                )
            )
            cur = self.db.execute(
                "insert into insights (trigger_topic, insight, strategy, log_entry, source_ids, item_id, created_at)"
                " values (?,?,?,?,?,?,?)",
                [
                    insight.trigger_topic,
                    insight.insight,
                    insight.strategy,
                    insight.log_entry,
                    json.dumps(insight.source_ids),
                    item_id,
                    now,
                ],
            )
            self.activity.memory_write(
                notice("insight"), f"{insight.trigger_topic}: {insight.insight}", item_id=item_id
            )
        return int(cur.lastrowid)

    def insights(self, limit: int = 50) -> list[Insight]:
        rows = self.db.execute(
            "select trigger_topic, insight, strategy, log_entry, source_ids, created_at from insights "
            "order by id desc limit ?",
            [limit],
        ).fetchall()
        return [
            Insight(
                trigger_topic=a, insight=b, strategy=c, log_entry=d, source_ids=_json_list(e), created_at=f
            )
            for a, b, c, d, e, f in rows
        ]

    def latest_strategy(self) -> str:
        row = self.db.execute("select strategy from insights order by id desc limit 1").fetchone()
        return row[0] if row else ""

    # -- goals ------------------------------------------------------------------------------------
    def put_goal(self, goal: Goal) -> Goal:
        if not goal.goal.strip():
            raise NexusArkError(notice("A goal needs a text: an empty goal was not saved."))
        goal = goal.model_copy(update={"id": goal.id or f"{goal.term[:2]}_{uuid.uuid4().hex[:8]}"})
        now = self._now()
        text = f"{goal.term}-term goal ({goal.status}): {goal.goal}"
        with self.db.atomic():
            row = self.db.execute("select item_id from goals where id = ?", [goal.id]).fetchone()
            term = _TERM_WORDS.get(goal.term, f"{goal.term}-term")
            status = _STATUS_WORDS.get(goal.status, goal.status)
            if row and row[0]:
                self.archive.update_text(row[0], text)
                item_id = row[0]
            else:
                item_id = self.archive.add(
                    NewItem(kind="goal", text=text, source_ids=goal.source_ids, importance=0.6)
                )
            self.db.execute(
                "insert into goals (id, term, goal, status, priority, progress_notes, related_values, source_ids, "
                "item_id, created_at, updated_at) values (?,?,?,?,?,?,?,?,?,?,?) on conflict(id) do update set "
                "goal = excluded.goal, status = excluded.status, priority = excluded.priority, "
                "progress_notes = excluded.progress_notes, related_values = excluded.related_values, "
                "source_ids = excluded.source_ids, updated_at = excluded.updated_at",
                [
                    goal.id,
                    goal.term,
                    goal.goal,
                    goal.status,
                    goal.priority,
                    json.dumps(goal.progress_notes, ensure_ascii=False),
                    json.dumps(goal.related_values, ensure_ascii=False),
                    json.dumps(goal.source_ids),
                    item_id,
                    now,
                    now,
                ],
            )
            what = (
                notice("{term} updated ({status}): {goal}", term=term, status=status, goal=goal.goal)
                if row
                else notice("{term} added ({status}): {goal}", term=term, status=status, goal=goal.goal)
            )
            self.activity.memory_write(
                notice("goal"),
                what,
                item_id=item_id,
                goal_id=goal.id,
            )
        return goal

    def goals(self, term: GoalTerm | None = None, status: GoalStatus | None = "active") -> list[Goal]:
        rows = self.db.execute(
            f"select {_GOAL_COLUMNS} from goals "
            "where (? is null or term = ?) and (? is null or status = ?) order by priority, created_at",
            [term, term, status, status],
        ).fetchall()
        return [_goal(row) for row in rows]

    def goal(self, goal_id: str) -> Goal | None:
        row = self.db.execute(f"select {_GOAL_COLUMNS} from goals where id = ?", [goal_id]).fetchone()
        return _goal(row) if row else None

    def _existing_goal(self, goal_id: str) -> Goal:
        goal = self.goal(goal_id)
        if goal is None:
            raise NexusArkError(notice("There is no goal {goal_id!r}.", goal_id=goal_id))
        return goal

    def add_progress(self, goal_id: str, note: str, source_ids: list[str] | None = None) -> Goal:
        """A progress note on a goal (by the persona in a dream or a tool, or by the user)."""
        if not note.strip():
            raise NexusArkError(notice("A progress note needs a text: an empty note was not saved."))
        goal = self._existing_goal(goal_id)
        sources = [*goal.source_ids, *(s for s in source_ids or [] if s not in goal.source_ids)]
        return self.put_goal(
            goal.model_copy(
                update={"progress_notes": [*goal.progress_notes, note.strip()], "source_ids": sources}
            )
        )

    def set_goal_status(self, goal_id: str, status: GoalStatus, note: str = "") -> Goal:
        """Complete or abandon a goal (or take it up again), with an optional note saying why."""
        goal = self._existing_goal(goal_id)
        notes = [*goal.progress_notes, note.strip()] if note.strip() else goal.progress_notes
        return self.put_goal(goal.model_copy(update={"status": status, "progress_notes": notes}))

    def reflection_meta(self) -> dict[str, str]:
        """The dream levels' bookkeeping (seed 001's goal metadata): last_reflection_level and
        last_level1_date / last_level2_date / last_level3_date, among other keys."""
        return dict(self.db.execute("select key, value from reflection_meta").fetchall())

    def set_reflection_meta(self, key: str, value: str) -> None:
        with self.db.atomic():
            self.db.execute("insert or replace into reflection_meta (key, value) values (?, ?)", [key, value])

    # -- internal state ---------------------------------------------------------------------------
    def set_drive(self, drive: Drive) -> None:
        with self.db.atomic():
            self.db.execute(
                "insert or replace into drives (name, level, threshold, info, updated_at) values (?,?,?,?,?)",
                [
                    drive.name,
                    drive.level,
                    drive.threshold,
                    json.dumps(drive.info, ensure_ascii=False),
                    drive.updated_at or self._now(),
                ],
            )

    def drives(self) -> list[Drive]:
        rows = self.db.execute("select name, level, threshold, info, updated_at from drives order by name")
        return [
            Drive(name=a, level=b, threshold=c, info=json.loads(d), updated_at=e) for a, b, c, d, e in rows
        ]

    def add_question(self, question: OpenQuestion) -> int:
        with self.db.atomic():
            cur = self.db.execute(
                "insert into open_questions (question, topic, context, priority, source_ids, created_at) "
                "values (?,?,?,?,?,?)",
                [
                    question.question,
                    question.topic,
                    question.context,
                    question.priority,
                    json.dumps(question.source_ids),
                    question.created_at or self._now(),
                ],
            )
            self.activity.memory_write(
                notice("open question"),
                notice("asked: {question}", question=question.question),
                question_id=int(cur.lastrowid),
            )
        return int(cur.lastrowid)

    def resolve_question(
        self, question_id: int, *, evidence_message_id: int | None = None, by: str = "conversation"
    ) -> None:
        """Mark a question answered (by the end-of-conversation check, or by the user). With the message
        that answered it, that message joins the question's source ids and its timeline entry points at it."""
        with self.db.atomic():
            cur = self.db.execute(
                "update open_questions set resolved_at = ?, resolved_by = ? where id = ? and resolved_at is null",
                [self._now(), by, question_id],
            )
            if cur.rowcount:
                question, sources = self.db.execute(
                    "select question, source_ids from open_questions where id = ?", [question_id]
                ).fetchone()
                if evidence_message_id is not None:
                    evidence = f"msg:{evidence_message_id}"
                    ids = [s for s in _json_list(sources) if s != evidence] + [evidence]
                    self.db.execute(
                        "update open_questions set source_ids = ? where id = ?",
                        [json.dumps(ids), question_id],
                    )
                self.activity.memory_write(
                    notice("open question"),
                    notice("resolved: {question}", question=question),
                    message_id=evidence_message_id,
                    question_id=question_id,
                )

    def delete_question(self, question_id: int) -> bool:
        """The user removes a question the persona should stop wondering about."""
        with self.db.atomic():
            row = self.db.execute(
                "select question from open_questions where id = ?", [question_id]
            ).fetchone()
            if row is None:
                return False
            self.db.execute("delete from open_questions where id = ?", [question_id])
            self.activity.memory_write(
                notice("open question"),
                notice("deleted: {question}", question=row[0]),
                question_id=question_id,
            )
        return True

    def open_questions(self, include_resolved: bool = False) -> list[OpenQuestion]:
        rows = self.db.execute(
            "select id, question, topic, context, priority, source_ids, created_at, resolved_at, resolved_by "
            "from open_questions where ? or resolved_at is null order by priority desc, id",
            [int(include_resolved)],
        ).fetchall()
        return [
            OpenQuestion(
                id=a,
                question=b,
                topic=c,
                context=d,
                priority=min(1.0, max(0.0, e)),
                source_ids=_json_list(f),
                created_at=g,
                resolved_at=h,
                resolved_by=i,
            )
            for a, b, c, d, e, f, g, h, i in rows
        ]

    def log_emotion(self, entry: EmotionEntry) -> None:
        with self.db.atomic():
            self.db.execute(
                "insert into emotion_log (timestamp, emotion, value, snippet, message_id) values (?,?,?,?,?)",
                [entry.timestamp, entry.emotion, entry.value, entry.snippet[:200], entry.message_id],
            )

    def revise_emotion(self, message_id: int, emotion: str, value: float) -> bool:
        """A better reading of a message's emotion (the internal model's second opinion) replaces the
        first in the log; returns whether there was one to revise."""
        with self.db.atomic():
            cur = self.db.execute(
                "update emotion_log set emotion = ?, value = ? where message_id = ?",
                [emotion, value, message_id],
            )
        return cur.rowcount > 0

    def emotions(self, since: str | None = None) -> list[EmotionEntry]:
        rows = self.db.execute(
            "select timestamp, emotion, value, snippet, message_id from emotion_log "
            "where timestamp >= coalesce(?, '') order by timestamp",
            [since],
        ).fetchall()
        return [
            EmotionEntry(timestamp=a, emotion=b, value=c, snippet=d, message_id=e) for a, b, c, d, e in rows
        ]

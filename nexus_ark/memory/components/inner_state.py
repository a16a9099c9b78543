"""The persona's internal state: drive levels, the open questions it wants answered, the emotion log."""

# SQL reads best as one statement a line.
# ruff: noqa: E501

from __future__ import annotations

import json

from nexus_ark.memory.components.base import ComponentPart, inserted_id, json_list
from nexus_ark.memory.components.records import Drive, EmotionEntry, OpenQuestion
from nexus_ark.notices import notice


class InnerState(ComponentPart):
    """Drives, open questions and emotions: reads and edits (a question asked, resolved or deleted enters
    the timeline)."""

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
                question_id=inserted_id(cur),
            )
        return inserted_id(cur)

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
                    ids = [s for s in json_list(sources) if s != evidence] + [evidence]
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
                source_ids=json_list(f),
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

    def emotion_labels(self, message_ids: list[int]) -> list[str]:
        """The emotion the reader logged for each of these messages that has a reading."""
        labels: list[str] = []
        for start in range(0, len(message_ids), 500):
            chunk = message_ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            labels += [
                str(r[0])
                for r in self.db.execute(
                    f"select emotion from emotion_log where message_id in ({marks})", chunk
                ).fetchall()
            ]
        return labels

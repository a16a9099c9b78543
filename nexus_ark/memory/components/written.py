"""The components the persona writes as text: core memory and the notepad (single texts, always in the
prompt), episodes (one summary a day), entities and the dream diary's insights; all but the notepad are
archive items too, so recall finds them."""

# SQL reads best as one statement a line.
# ruff: noqa: E501

from __future__ import annotations

import json
from typing import Any

from nexus_ark.errors import NexusArkError
from nexus_ark.memory.activity import clip
from nexus_ark.memory.archive import NewItem
from nexus_ark.memory.components.base import ComponentPart, inserted_id, json_list
from nexus_ark.memory.components.records import Entity, Episode, Insight
from nexus_ark.notices import notice
from nexus_ark.prompts.archive import ENTITY_ITEM, EPISODE_ITEM, EPISODE_KEY_EVENTS, INSIGHT_ITEM


def _said(text: str) -> str:
    """What a rewritten text says now, for the timeline (an emptied one says so)."""
    return clip(text) if text.strip() else notice("(emptied)")


_ENTITY_COLUMNS = "name, text, source_ids, created_at, updated_at, reading"
# reflection_meta's key for the name of the entity that is the person (one person a persona talks with).
PERSON_KEY = "person_entity"


def _entity(row: tuple[Any, ...]) -> Entity:
    return Entity(
        name=row[0],
        text=row[1],
        source_ids=json_list(row[2]),
        created_at=row[3],
        updated_at=row[4],
        reading=row[5],
    )


class WrittenMemory(ComponentPart):
    """Core memory, the notepad, episodes, entities and insights: reads, and edits that update their
    archive item and enter the timeline."""

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
        text = EPISODE_ITEM.format(date=episode.date, summary=episode.summary)
        if episode.key_events:
            text += EPISODE_KEY_EVENTS.format(events="; ".join(episode.key_events))
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
            Episode(date=d, summary=s, key_events=json_list(k), emotional_tone=t, source_ids=json_list(src))
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
            sources = sorted({*(json_list(row[1]) if row else []), *(source_ids or [])})
            item_text = ENTITY_ITEM.format(name=name, text=text)
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

    def person_entity(self) -> str:
        """The name of the entity that holds what the persona knows about the person it talks with (issue
        32: marked, so Memory and People show it as the person and a dream never files the person as an
        outside entity); '' before any."""
        row = self.db.execute(f"select value from reflection_meta where key = '{PERSON_KEY}'").fetchone()
        return str(row[0]) if row else ""

    def write_person(self, name: str, text: str, source_ids: list[str] | None = None) -> Entity:
        """Write the person's entity and mark it as the person's, in one transaction."""
        with self.db.atomic():
            entity = self.write_entity(name, text, source_ids)
            self.db.execute(
                "insert or replace into reflection_meta (key, value) values (?, ?)", [PERSON_KEY, entity.name]
            )
        return entity

    def entities(self) -> list[Entity]:
        rows = self.db.execute(f"select {_ENTITY_COLUMNS} from entities order by name collate nocase")
        return [_entity(row) for row in rows]

    def entity_names(self) -> list[str]:
        """Every entity's name, in the order entities() gives them (a lorebook brings thousands)."""
        return [r[0] for r in self.db.execute("select name from entities order by name collate nocase")]

    def set_reading(self, name: str, reading: str) -> Entity:
        """How an entity's name is read aloud ("" forgets it). The entity must exist: a reading belongs
        to a name the persona knows."""
        reading = " ".join(reading.split())
        with self.db.atomic():
            updated = self.db.execute(
                "update entities set reading = ?, updated_at = ? where name = ?",
                [reading, self._now(), name.strip()],
            ).rowcount
        if not updated:
            raise NexusArkError(notice("The persona knows no one and nothing called {name!r}.", name=name))
        entity = self.entity(name)
        assert entity is not None
        return entity

    def readings(self) -> dict[str, str]:
        """Each name that has a reading, with it (what speech reads aloud instead of the name)."""
        rows = self.db.execute("select name, reading from entities where reading != ''")
        return {name: reading for name, reading in rows}

    # -- dream diary ------------------------------------------------------------------------------
    def add_insight(self, insight: Insight) -> int:
        now = insight.created_at or self._now()
        with self.db.atomic():
            item_id = self.archive.add(
                NewItem(
                    kind="insight",
                    text=INSIGHT_ITEM.format(
                        trigger_topic=insight.trigger_topic,
                        insight=insight.insight,
                        strategy=insight.strategy,
                    ),
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
        return inserted_id(cur)

    def insights(self, limit: int = 50) -> list[Insight]:
        rows = self.db.execute(
            "select trigger_topic, insight, strategy, log_entry, source_ids, created_at from insights "
            "order by id desc limit ?",
            [limit],
        ).fetchall()
        return [
            Insight(
                trigger_topic=a, insight=b, strategy=c, log_entry=d, source_ids=json_list(e), created_at=f
            )
            for a, b, c, d, e, f in rows
        ]

    def latest_strategy(self) -> str:
        row = self.db.execute("select strategy from insights order by id desc limit 1").fetchone()
        return row[0] if row else ""

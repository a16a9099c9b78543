"""Schema steps m001-m005: messages, the archive and the nine memory components, the vector index's
state and log, one message per imported line. Append-only: never edit a step that has shipped."""

# Schema DDL reads best as one statement a line.
# ruff: noqa: E501

from __future__ import annotations

import sqlite_utils

from nexus_ark.memory.migrations.runner import migrations


@migrations()
def m001_messages(db: sqlite_utils.Database) -> None:
    # room + speaker from the start: rooms with several personas need no new schema later.
    db["messages"].create(
        {
            "id": int,
            "room": str,
            "speaker": str,
            "role": str,
            "content": str,
            "status": str,
            "created_at": str,
            "updated_at": str,
            "source_id": str,
            "meta": str,
        },
        pk="id",
        not_null={"room", "speaker", "role", "content", "status", "created_at"},
        defaults={"room": "main", "status": "complete", "content": ""},
    )
    db["messages"].create_index(["room", "id"])
    db["messages"].create_index(["status"])


@migrations()
def m002_memory_components(db: sqlite_utils.Database) -> None:
    """The archive that recall searches, and the nine memory components."""
    # items: everything recall can find. `context` holds the neighbouring turns of a message, indexed
    # with a lower weight: answers often sit in the turn before or after the one that names the topic.
    db.execute(
        """create table items (
            id integer primary key,
            kind text not null,
            text text not null,
            context text not null default '',
            source_id text,
            source_ids text,
            room text,
            speaker text,
            created_at text not null,
            updated_at text not null,
            importance real not null default 0.5,
            archived integer not null default 0,
            archived_at text,
            archive_reason text,
            embed_text text,
            embed_hash text,
            meta text
        )"""
    )
    db.execute("create index items_kind_time on items(kind, created_at)")
    db.execute("create index items_source on items(source_id)")
    db.execute("create index items_room on items(room, id)")
    for name, tokenizer in (("items_fts", "porter unicode61 remove_diacritics 2"), ("items_tri", "trigram")):
        db.execute(
            f"create virtual table {name} using fts5(text, context, content='items', content_rowid='id', "
            f"tokenize='{tokenizer}')"
        )
        db.execute(
            f"create trigger {name}_ai after insert on items begin "
            f"insert into {name}(rowid, text, context) values (new.id, new.text, new.context); end"
        )
        db.execute(
            f"create trigger {name}_ad after delete on items begin "
            f"insert into {name}({name}, rowid, text, context) values ('delete', old.id, old.text, old.context); end"
        )
        db.execute(
            f"create trigger {name}_au after update of text, context on items begin "
            f"insert into {name}({name}, rowid, text, context) values ('delete', old.id, old.text, old.context); "
            f"insert into {name}(rowid, text, context) values (new.id, new.text, new.context); end"
        )
    # Vectors by content hash and model: the same text is never embedded twice by the same model.
    db.execute(
        "create table embeddings (hash text not null, model text not null, vector blob not null, "
        "primary key (hash, model)) without rowid"
    )
    db.execute(
        "create table embedding_models (model text primary key, dim integer not null, vec_table text not null)"
    )

    db.execute(
        "create table core_memory (id integer primary key check (id = 1), text text not null, updated_at text)"
    )
    db.execute(
        "create table notepad (id integer primary key check (id = 1), text text not null, updated_at text)"
    )
    db.execute(
        """create table episodes (
            date text primary key, summary text not null, key_events text not null default '[]',
            emotional_tone text not null default 'neutral', source_ids text not null default '[]',
            item_id integer, created_at text not null, updated_at text not null)"""
    )
    db.execute(
        """create table entities (
            id integer primary key, name text not null unique collate nocase, text text not null,
            source_ids text not null default '[]', item_id integer,
            created_at text not null, updated_at text not null)"""
    )
    db.execute(
        """create table insights (
            id integer primary key, trigger_topic text not null, insight text not null, strategy text not null,
            log_entry text not null, source_ids text not null default '[]', item_id integer,
            created_at text not null)"""
    )
    db.execute(
        """create table goals (
            id text primary key, term text not null check (term in ('short', 'long')), goal text not null,
            status text not null default 'active', priority integer not null default 1,
            progress_notes text not null default '[]', related_values text not null default '[]',
            source_ids text not null default '[]', item_id integer,
            created_at text not null, updated_at text not null)"""
    )
    db.execute("create table reflection_meta (key text primary key, value text not null)")
    db.execute(
        """create table drives (
            name text primary key, level real not null, threshold real not null default 0.6,
            info text not null default '{}', updated_at text not null)"""
    )
    db.execute(
        """create table open_questions (
            id integer primary key, question text not null, topic text not null default '',
            priority real not null default 0.5, source_ids text not null default '[]',
            created_at text not null, resolved_at text)"""
    )
    db.execute(
        """create table emotion_log (
            id integer primary key, timestamp text not null, emotion text not null, value real not null,
            snippet text not null default '', message_id integer)"""
    )
    db.execute(
        """create table kb_documents (
            id integer primary key, path text not null, title text not null, sha256 text not null unique,
            status text not null default 'pending', chunks_total integer not null default 0,
            chunks_done integer not null default 0, error text, added_at text not null, updated_at text not null)"""
    )
    db.execute(
        """create table kb_chunks (
            id integer primary key, doc_id integer not null references kb_documents(id) on delete cascade,
            ord integer not null, text text not null, item_id integer, unique (doc_id, ord))"""
    )


@migrations()
def m003_vector_index_state(db: sqlite_utils.Database) -> None:
    # Bumped whenever a model's vectors change, so in-memory mirrors of the index know to reload.
    db.execute("alter table embedding_models add column generation integer not null default 0")
    # The model's mean vector: bits are taken of (vector - center), see archive.py.
    db.execute("alter table embedding_models add column center blob")


@migrations()
def m004_vector_log(db: sqlite_utils.Database) -> None:
    # Every change to a model's bit index in commit order (bits null: the vector was removed), so the
    # in-memory mirrors of the index (archive.py) apply what is new instead of reloading every vector
    # after each turn. Pruned; pruning bumps embedding_models.generation, and a mirror reloads then.
    db.execute(
        "create table vector_log (seq integer primary key autoincrement, vec_table text not null, "
        "item_id integer not null, bits blob)"
    )
    db.execute("create index vector_log_table on vector_log(vec_table, seq)")


@migrations()
def m005_messages_source_unique(db: sqlite_utils.Database) -> None:
    """An imported line is one message: source_id is unique (a persona is one database, so this is
    (persona, source_id)). An import killed part-way before this could have left a line twice: the first
    copy stays, and what pointed at a later copy points at the first."""
    first = "select min(id) from messages where source_id is not null group by source_id"
    db.execute(
        "update emotion_log set message_id = (select min(k.id) from messages k join messages d "
        "on d.source_id = k.source_id where d.id = emotion_log.message_id) "
        f"where message_id in (select id from messages where source_id is not null and id not in ({first}))"
    )
    db.execute(f"delete from messages where source_id is not null and id not in ({first})")
    db.execute("create unique index messages_source on messages(source_id) where source_id is not null")

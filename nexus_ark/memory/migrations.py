"""The append-only schema history of memory.db. Never edit a migration that has shipped: add one."""

from __future__ import annotations

import sqlite_utils
from sqlite_utils.migrations import Migrations

from nexus_ark.errors import DatabaseError
from nexus_ark.notices import Notice, notice

MIGRATION_SET = "nexus_ark"
migrations = Migrations(MIGRATION_SET)


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


@migrations()
def m006_activity(db: sqlite_utils.Database) -> None:
    """The activity timeline (memory/activity.py): append-only, one row per thing that happened. `kind` is
    free text so later kinds (dreams, drives, autonomous messages) need no new step; `data` is JSON."""
    db.execute(
        """create table activity (
            id integer primary key, time text not null, kind text not null,
            summary text not null default '', message_id integer,
            data text check (data is null or json_valid(data)))"""
    )
    db.execute("create index activity_time on activity(time)")
    db.execute("create index activity_kind on activity(kind, time)")
    db.execute("create index activity_message on activity(message_id) where message_id is not null")
    db.execute("create index activity_item on activity(json_extract(data, '$.item_id'))")
    # Privacy: a person who forgets a memory expects its words gone, from the timeline too. Deleting a
    # message or an archive item blanks the entries that point at it; their time and kind stay.
    redact = "update activity set summary = '(forgotten)', data = '{\"redacted\": true}'"
    db.execute(
        f"create trigger activity_forget_message after delete on messages begin "
        f"{redact} where message_id = old.id; end"
    )
    db.execute(
        f"create trigger activity_forget_item after delete on items begin "
        f"{redact} where json_extract(data, '$.item_id') = old.id; end"
    )


@migrations()
def m007_message_versions(db: sqlite_utils.Database) -> None:
    """Regenerated replies and edited messages keep every version. `version_of`: the first version's id
    (null on the first). `hidden`: 1 when not on the conversation's current line (an earlier version, or
    what followed it). `branch_of`: for what was hidden with a version, that version's id, so choosing it
    again brings back its branch."""
    db.execute("alter table messages add column version_of integer")
    db.execute("alter table messages add column hidden integer not null default 0")
    db.execute("alter table messages add column branch_of integer")
    db.execute("create index messages_line on messages(room, hidden, id)")
    db.execute("create index messages_versions on messages(version_of) where version_of is not null")
    db.execute("create index messages_branch on messages(branch_of) where branch_of is not null")


@migrations()
def m008_conversation_summaries(db: sqlite_utils.Database) -> None:
    """Rolling compression (agent/compression.py): each row is the running summary after one step. It
    extends the previous one (previous_id) with the messages of this step (`covered`, a JSON list of
    message ids), so the ids a summary covers are its own plus its predecessors'. last_id is the newest
    message covered: the prompt carries the summary and the turns after it. item_id: its archive item
    (kind "summary"), so recall finds it."""
    db.execute(
        """create table conversation_summaries (
            id integer primary key, room text not null, text text not null,
            previous_id integer references conversation_summaries(id),
            first_id integer not null, last_id integer not null,
            covered text not null check (json_valid(covered)),
            item_id integer, model text not null default '', tokens integer not null default 0,
            created_at text not null)"""
    )
    db.execute("create index conversation_summaries_room on conversation_summaries(room, id)")


@migrations()
def m009_mind(db: sqlite_utils.Database) -> None:
    """The mind (nexus_ark/mind/). drive_history: every recomputation of the four drives with the inputs
    that produced it (the dashboard plots it, autonomous messages cite it). Open questions gain the context
    they were asked in and who resolved them. dream_jobs: one row per (level, date); `stages` holds each
    completed stage's output, so a dream cut off by a crash resumes after its last completed stage and a
    finished day is never dreamt twice."""
    db.execute(
        """create table drive_history (
            id integer primary key, time text not null, trigger text not null,
            boredom real not null, curiosity real not null, goal_achievement real not null,
            devotion real not null, dominant text, narrative text not null default '',
            inputs text not null check (json_valid(inputs)))"""
    )
    db.execute("create index drive_history_time on drive_history(time)")
    db.execute("alter table open_questions add column context text not null default ''")
    db.execute("alter table open_questions add column resolved_by text")
    db.execute(
        """create table dream_jobs (
            id integer primary key, level integer not null check (level in (1, 2, 3)),
            date text not null, state text not null check (state in ('running', 'done', 'skipped', 'failed')),
            stages text not null default '{}' check (json_valid(stages)),
            result text check (result is null or json_valid(result)),
            error text, started_at text not null, updated_at text not null, finished_at text,
            unique (level, date))"""
    )


@migrations()
def m010_summary_forgetting(db: sqlite_utils.Database) -> None:
    """Forgetting a message takes it out of the running summaries (agent/compression.py). `sources`: the
    archive source ids of the messages a step covered ("msg:<id>", or an import's id), so that deleting
    a message's archive item (MemoryStore.forget, from the chat or the memory window; a plain delete of
    the message keeps its item, hence the summary) finds every summary whose text holds it: that one and
    every later one of its room. `stale`: 0 in use; 1 it held a forgotten message: its text is blanked,
    its archive item deleted (so recall cannot find it) and its "compression" timeline entries redacted,
    the prompt uses the newest summary still in use, and the next after-turn work rebuilds the rest from
    the remaining messages; 2 rebuilt."""
    db.execute("alter table conversation_summaries add column sources text not null default '[]'")
    db.execute("alter table conversation_summaries add column stale integer not null default 0")
    db.execute(
        "update conversation_summaries set sources = (select json_group_array(coalesce(m.source_id, "
        "'msg:' || m.id)) from json_each(conversation_summaries.covered) j join messages m on m.id = j.value)"
    )
    db.execute(
        """create trigger summaries_forget_message after delete on items
        when old.kind = 'message' and old.source_id is not null and exists (
            select 1 from conversation_summaries s, json_each(s.sources) j where j.value = old.source_id)
        begin
            update conversation_summaries set stale = 1, text = '' where stale = 0 and exists (
                select 1 from conversation_summaries f, json_each(f.sources) j
                where j.value = old.source_id and f.room = conversation_summaries.room
                and f.id <= conversation_summaries.id);
            update activity set summary = '(forgotten)', data = '{"redacted": true}'
            where kind = 'compression' and data is not null and exists (
                select 1 from conversation_summaries s where s.stale = 1
                and s.first_id = json_extract(activity.data, '$.first_id')
                and s.last_id = json_extract(activity.data, '$.last_id'));
            delete from items where kind = 'summary' and id in (
                select item_id from conversation_summaries where stale = 1 and item_id is not null);
        end"""
    )


@migrations()
def m011_runtime(db: sqlite_utils.Database) -> None:
    """The runtime (nexus_ark/runtime/). events: the persona's queue: a kind, a JSON payload, an identity key
    (a newer pending event with the same key replaces the older), a due time (delayed events), a state
    pending → processing → done | failed (retried) | dead (after too many failures). job_runs: when each
    scheduled job last ran, so runs missed while the app was closed coalesce into one at start. inbox:
    messages the persona wrote on its own, until the person reads them."""
    db.execute(
        """create table events (
            id integer primary key, kind text not null, key text,
            payload text not null default '{}' check (json_valid(payload)),
            due_at text not null, state text not null default 'pending'
                check (state in ('pending', 'processing', 'done', 'failed', 'dead', 'cancelled')),
            attempts integer not null default 0, last_error text, source text not null default 'persona',
            created_at text not null, updated_at text not null)"""
    )
    db.execute("create index events_due on events(state, due_at)")
    db.execute(
        "create unique index events_pending_key on events(key) where state = 'pending' and key is not null"
    )
    db.execute("create table job_runs (job text primary key, last_run text not null)")
    db.execute(
        """create table inbox (
            message_id integer primary key references messages(id) on delete cascade,
            room text not null, created_at text not null, read_at text)"""
    )


@migrations()
def m012_document_error_notice(db: sqlite_utils.Database) -> None:
    """kb_documents.error_notice: why a document cannot be read, as its sentence's template and values
    (nexus_ark.notices.stored), so a window in another language shows it translated; `error` keeps the
    English text (the CLI, and older rows)."""
    db.execute("alter table kb_documents add column error_notice text")


@migrations()
def m013_dream_passes(db: sqlite_utils.Database) -> None:
    """A day is dreamt in passes: a conversation that goes on after a dream is dreamt again, from where the
    last pass stopped (issue 21). dream_jobs loses unique (level, date) and gains the messages a pass
    covers: after_id (exclusive; null: from the day's start) and through_id (inclusive; null on rows from
    before: the whole day as it was then, so nothing already dreamt looks new)."""
    db.execute(
        """create table dream_jobs_new (
            id integer primary key, level integer not null check (level in (1, 2, 3)),
            date text not null, state text not null check (state in ('running', 'done', 'skipped', 'failed')),
            stages text not null default '{}' check (json_valid(stages)),
            result text check (result is null or json_valid(result)),
            error text, started_at text not null, updated_at text not null, finished_at text,
            after_id integer, through_id integer)"""
    )
    db.execute(
        "insert into dream_jobs_new (id, level, date, state, stages, result, error, started_at, updated_at, "
        "finished_at) select id, level, date, state, stages, result, error, started_at, updated_at, "
        "finished_at from dream_jobs"
    )
    db.execute("drop table dream_jobs")
    db.execute("alter table dream_jobs_new rename to dream_jobs")
    db.execute("create index dream_jobs_date on dream_jobs(date, level)")


@migrations()
def m014_retention(db: sqlite_utils.Database) -> None:
    """Bounded growth (memory/retention.py, issue 23): routine timeline entries and drive_history keep their
    detail for a window of days; older days are rolled up here. activity_daily: one row per (day, kind)
    with how many entries it stood for (`time`: the newest one's, where the line sits in the timeline).
    drive_daily: one row per day with each drive's mean, min and max (`time`: where the day's point is
    plotted). `day` is the persona's local date."""
    db.execute(
        """create table activity_daily (
            id integer primary key, day text not null, kind text not null, time text not null,
            count integer not null, summary text not null default '',
            data text check (data is null or json_valid(data)), unique (day, kind))"""
    )
    db.execute(
        """create table drive_daily (
            day text primary key, time text not null, points integer not null,
            boredom_mean real not null, boredom_min real not null, boredom_max real not null,
            curiosity_mean real not null, curiosity_min real not null, curiosity_max real not null,
            goal_achievement_mean real not null, goal_achievement_min real not null,
            goal_achievement_max real not null,
            devotion_mean real not null, devotion_min real not null, devotion_max real not null,
            dominant text, narrative text not null default '')"""
    )
    db.execute("create index drive_daily_time on drive_daily(time)")


@migrations()
def m015_embeddings_in_leaf_pages(db: sqlite_utils.Database) -> None:
    """A float32 vector (1,536 bytes at 384 dimensions) in the WITHOUT ROWID embeddings table overflowed
    (such a row keeps at most ~1,000 bytes in its 4 KB page), so each took a 4 KB overflow page of its own:
    4.6 KB on disk per embedded text, 64 % of it unused (issue 23, defect 13). A rowid table keeps a row
    of up to ~4,000 bytes in the leaf: two vectors a page. (hash, model) stays unique, by an index that
    holds only the key. Every row is copied."""
    db.execute(
        "create table embeddings_new (id integer primary key, hash text not null, model text not null, "
        "vector blob not null)"
    )
    db.execute(
        "insert into embeddings_new (hash, model, vector) select hash, model, vector from embeddings "
        "order by model, hash"
    )
    db.execute("drop table embeddings")
    db.execute("alter table embeddings_new rename to embeddings")
    db.execute("create unique index embeddings_key on embeddings(hash, model)")


def migrate(db: sqlite_utils.Database, where: str) -> None:
    """Bring the database up to date; refuse one written by a newer Nexus Ark."""
    known = {m.name for m in migrations._migrations}
    applied = {m.name for m in migrations.applied(db)}
    unknown = sorted(applied - known)
    if unknown:
        raise DatabaseError(_newer(where, unknown), hint=UPDATE_TO_OPEN)
    migrations.apply(db)


UPDATE_TO_OPEN = notice("Update Nexus Ark to open it. It was not changed.")


def _newer(where: str, unknown: list[str]) -> Notice:
    return notice(
        "The memory database {path} was written by a newer version of Nexus Ark (it has schema steps this "
        "version does not know: {steps}).",
        path=where,
        steps=", ".join(unknown),
    )


def check_current(db: sqlite_utils.Database, where: str) -> None:
    """For connections that are not the owner: the schema must already be this version's, unchanged."""
    known = [m.name for m in migrations._migrations]
    applied = {m.name for m in migrations.applied(db)}  # read-only
    unknown = sorted(applied - set(known))
    if unknown:
        raise DatabaseError(_newer(where, unknown), hint=UPDATE_TO_OPEN)
    missing = [name for name in known if name not in applied]
    if missing:
        raise DatabaseError(
            notice(
                "The memory database {path} has not been brought up to date yet (missing: {steps}).",
                path=where,
                steps=", ".join(missing),
            ),
            hint=notice("Open the persona in Nexus Ark once (its owner updates the schema), then try again."),
        )

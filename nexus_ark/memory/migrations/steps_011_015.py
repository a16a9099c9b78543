"""Schema steps m011-m015: the runtime's tables, document error notices, dream passes, retention's daily
roll-ups, embeddings in leaf pages. Append-only: never edit a step that has shipped."""

from __future__ import annotations

import sqlite_utils

from nexus_ark.memory.migrations.runner import migrations


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

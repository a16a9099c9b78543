"""Schema steps of the persona's life: the activity timeline (m006), the mind (m009), the runtime's tables
(m011), dream passes (m013), retention (m014), the soul's history (m016), two indexes made over the rows
they are read for (m018). Never edit a step that has shipped: add one, and its line in __init__.py."""

from __future__ import annotations

import sqlite_utils


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


def m016_soul_history(db: sqlite_utils.Database) -> None:
    """soul_versions: every version of persona.md, whole (`text`), with who made it (`author`: first (the
    file as it was when history began), editor, proposal, outside (changed in another program, noticed at
    open), restore, import), why, and the proposal it came from. `applied` is 0 while the app's own write of
    the file is still to be done: a version is recorded before persona.md is replaced, so a crash between
    the two is finished at the next open instead of being taken for an outside edit.

    soul_proposals: a change the persona would like to make to one section (`section`: its heading; "" is the
    text before the first heading), with the section's text when it was proposed, the new text, the reason
    and the sources behind it (a JSON list: "msg:ID", "item:ID"). state open → accepted | declined |
    withdrawn (the section changed under it). At most one open proposal per section. `fingerprint` is the
    section and the normalised proposed text: a declined one is not proposed again."""
    db.execute(
        """create table soul_versions (
            id integer primary key, created_at text not null,
            author text not null
                check (author in ('first', 'editor', 'proposal', 'outside', 'restore', 'import')),
            reason text not null default '', proposal_id integer, sha256 text not null, text text not null,
            applied integer not null default 1 check (applied in (0, 1)))"""
    )
    db.execute(
        """create table soul_proposals (
            id integer primary key, created_at text not null, section text not null,
            current_text text not null, proposed_text text not null, reason text not null,
            sources text not null default '[]' check (json_valid(sources)),
            origin text not null check (origin in ('dream', 'tool')),
            state text not null default 'open' check (state in ('open', 'accepted', 'declined', 'withdrawn')),
            fingerprint text not null, decided_at text, accepted_text text, version_id integer)"""
    )
    db.execute("create unique index soul_proposals_open on soul_proposals(section) where state = 'open'")
    db.execute("create index soul_proposals_fingerprint on soul_proposals(fingerprint, state)")


def m018_indexes_of_the_rows_looked_up(db: sqlite_utils.Database) -> None:
    """Two indexes held a key for every row and are read for a few (issue 23, defect 13: bounded growth).
    activity_item: every timeline entry, though only memory writes name an item (14 % of the entries in 90
    simulated days); it serves the trigger that blanks an entry when its item is forgotten (`= old.id`,
    which implies a key that is not null). idx_messages_status: every message, read only for replies still
    'streaming' when a persona opens (messages.recover_interrupted). Each is made again over the rows it is
    read for; no row changes."""
    db.execute("drop index if exists activity_item")
    db.execute(
        "create index activity_item on activity(json_extract(data, '$.item_id')) "
        "where json_extract(data, '$.item_id') is not null"
    )
    db.execute("drop index if exists idx_messages_status")
    db.execute("create index messages_streaming on messages(status) where status = 'streaming'")

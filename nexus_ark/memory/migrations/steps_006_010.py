"""Schema steps m006-m010: the activity timeline, message versions, conversation summaries, the mind
(drive history, dream jobs), forgetting in summaries. Append-only: never edit a step that has shipped."""

from __future__ import annotations

import sqlite_utils

from nexus_ark.memory.migrations.runner import migrations


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

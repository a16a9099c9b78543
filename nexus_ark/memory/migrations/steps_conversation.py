"""Schema steps of the conversation: messages (m001), one message per imported line (m005), versions of a
reply (m007), the running summaries (m008) and forgetting in them (m010), ChatGPT's answers moved out of
the persona's mouth (m017). Never edit a step that has shipped: add one, and its line in __init__.py."""

from __future__ import annotations

from typing import cast

import sqlite_utils
import sqlite_utils.db


def m001_messages(db: sqlite_utils.Database) -> None:
    # room + speaker from the start: rooms with several personas need no new schema later.
    # db["messages"] as shipped (it looks up views first); it is a table, which the casts tell mypy.
    messages = cast(sqlite_utils.db.Table, db["messages"])
    messages.create(
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
    cast(sqlite_utils.db.Table, db["messages"]).create_index(["room", "id"])
    cast(sqlite_utils.db.Table, db["messages"]).create_index(["status"])


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


def m017_chatgpt_answers_are_chatgpts(db: sqlite_utils.Database) -> None:
    """ChatGPT exports imported before issue 23's fix stored ChatGPT's answers under the persona's own name
    ("aria: Happy birthday to Luna!"), so recall showed the persona things it never said as its own. Their
    messages (source_id chatgpt:…, role assistant) become ChatGPT's, and so do their archive items in the
    chatgpt:… rooms: the speaker, the "name: " that opens the text, the neighbours' lines in the context
    and in the embedded text (and its hash; the item's vector stays, its meaning is the same)."""
    import hashlib

    wrong = db.execute(
        "select distinct speaker from messages where source_id like 'chatgpt:%' and role = 'assistant' "
        "and speaker != 'ChatGPT'"
    ).fetchall()
    for (old,) in wrong:
        db.execute(
            "update messages set speaker = 'ChatGPT' where source_id like 'chatgpt:%' and role = 'assistant' "
            "and speaker = ?",
            [old],
        )
        was, now = f"{old}: ", "ChatGPT: "
        rows = db.execute(
            "select id, text, context, embed_text, speaker from items where kind = 'message' "
            "and room like 'chatgpt:%' and (speaker = ? or context like ? or embed_text like ?)",
            [old, f"%{was}%", f"%{was}%"],
        ).fetchall()
        for item_id, text, context, embed_text, speaker in rows:
            own = speaker == old
            new_text = now + text[len(was) :] if own and text.startswith(was) else text
            new_context = (context or "").replace(was, now) if context else context
            new_embed = embed_text.replace(was, now) if embed_text else embed_text
            hashed = new_embed if new_embed is not None else new_text
            db.execute(
                "update items set speaker = ?, text = ?, context = ?, embed_text = ?, embed_hash = ? "
                "where id = ?",
                [
                    "ChatGPT" if own else speaker,
                    new_text,
                    new_context,
                    new_embed,
                    hashlib.sha256(hashed.encode("utf-8")).hexdigest(),
                    item_id,
                ],
            )

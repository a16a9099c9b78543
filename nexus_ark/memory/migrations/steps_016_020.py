"""Schema steps m016-: the soul's history and the persona's proposals to change it (issue 25); ChatGPT's
answers moved out of the persona's mouth in imports made before that fix (issue 23); two indexes that held a
key for every row but are looked up for a few (issue 23); the trigram index without the neighbours' turns of
Japanese text (issue 23). Append-only: never edit a step that has shipped."""

from __future__ import annotations

import sqlite_utils

from nexus_ark.memory.migrations.runner import migrations


@migrations()
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


@migrations()
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


@migrations()
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


@migrations()
def m019_vectors_in_float16(db: sqlite_utils.Database) -> None:
    """The float vectors the search re-scores with, kept as float16 instead of float32 (issue 23, defect 13):
    768 bytes at 384 dimensions instead of 1,536, recall the same (docs/benchmarks.md, growth). Every row
    of `embeddings` is kept, with its id, hash and model; a float32 vector (4 bytes a dimension of its
    model; of a model with no index, any vector, since nothing before wrote another) becomes the float16 it
    rounds to, read in batches. The table is written anew rather than updated in place: an update leaves
    each page half empty (two vectors of 768 bytes where two of 1,536 were) and frees none, a new table
    packs five a page and the old one's pages go to the free list. With auto_vacuum=incremental (every
    memory.db that retention has run on) they are given back to the file system here; otherwise later
    writes reuse them, and retention's first run converts the file with a VACUUM."""
    import numpy as np

    f16_max = float(np.finfo(np.float16).max)
    dims = dict(db.execute("select model, dim from embedding_models").fetchall())
    db.execute(
        "create table embeddings_new (id integer primary key, hash text not null, model text not null, "
        "vector blob not null)"
    )
    last, batch = -1, 1000
    while rows := db.execute(
        "select id, hash, model, vector from embeddings where id > ? order by id limit ?", [last, batch]
    ).fetchall():
        converted = []
        for row_id, hash_, model, vector in rows:
            dim = dims.get(model)
            if (len(vector) == 4 * dim) if dim else (len(vector) % 4 == 0):
                floats = np.clip(np.frombuffer(vector, dtype="<f4"), -f16_max, f16_max)
                vector = floats.astype("<f2").tobytes()
            converted.append((row_id, hash_, model, vector))
        db.conn.executemany(
            "insert into embeddings_new (id, hash, model, vector) values (?, ?, ?, ?)", converted
        )
        last = rows[-1][0]
    db.execute("drop table embeddings")
    db.execute("alter table embeddings_new rename to embeddings")
    db.execute("create unique index embeddings_key on embeddings(hash, model)")
    if db.execute("pragma auto_vacuum").fetchone()[0] == 2:  # incremental
        db.execute("pragma incremental_vacuum").fetchall()  # one row a page freed: read them all


# A text holding a character of Chinese, Japanese or Korean writing, as the search's keywords._CJK reads them
# (kana, CJK ideographs: extension A, unified, compatibility; half-width katakana; Hangul syllables), as a
# GLOB pattern: every SQLite has it, so the sqlite3 shell and a read-only connection read the trigram index's
# content view as the app does.
CJK_GLOB = "*[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\uac00-\ud7af]*"


@migrations()
def m020_trigram_index_without_neighbours_of_cjk_text(db: sqlite_utils.Database) -> None:
    """The trigram index (items_tri) leaves out the neighbours' turns (`context`) of an item whose text holds
    a CJK character, and keeps them for every other item (issue 23): in Japanese the neighbours' trigrams
    ranked the turns beside the one a question asks about above it (docs/benchmarks.md, growth, seventh
    round). The porter index (items_fts) is unchanged, and so is the trigram index of an item written
    without CJK, English recall with it. Its external content is now the view items_tri_source: each item's
    text, and its context unless the text holds CJK (a GLOB on the column, no function of the app's). The
    triggers index and remove what the view shows, so the index stays what a rebuild from the view gives;
    the old index is dropped and rebuilt from the view."""
    own = f"glob '{CJK_GLOB}'"
    for suffix in ("ai", "ad", "au"):
        db.execute(f"drop trigger if exists items_tri_{suffix}")
    db.execute("drop table if exists items_tri")
    db.execute(
        "create view items_tri_source (id, text, context) as select id, text, "
        f"case when text {own} then '' else context end from items"
    )
    db.execute(
        "create virtual table items_tri using fts5(text, context, content='items_tri_source', "
        "content_rowid='id', tokenize='trigram')"
    )

    def shown(row: str) -> str:
        return f"{row}.id, {row}.text, case when {row}.text {own} then '' else {row}.context end"

    remove = f"insert into items_tri(items_tri, rowid, text, context) values ('delete', {shown('old')});"
    add = f"insert into items_tri(rowid, text, context) values ({shown('new')});"
    db.execute(f"create trigger items_tri_ai after insert on items begin {add} end")
    db.execute(f"create trigger items_tri_ad after delete on items begin {remove} end")
    db.execute(f"create trigger items_tri_au after update of text, context on items begin {remove} {add} end")
    db.execute("insert into items_tri(items_tri) values ('rebuild')")
    if db.execute("pragma auto_vacuum").fetchone()[0] == 2:  # incremental
        db.execute("pragma incremental_vacuum").fetchall()

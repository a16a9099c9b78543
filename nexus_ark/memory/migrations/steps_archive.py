"""Schema steps of what recall searches: the archive and the nine memory components (m002), the vector
index's state and log (m003, m004), documents' error notices (m012), embeddings in leaf pages (m015) and
in float16 (m019), the trigram index without the neighbours of CJK text (m020), entities' readings aloud
(m021). Never edit a step that has shipped: add one, and its line in __init__.py."""

# Schema DDL reads best as one statement a line.
# ruff: noqa: E501

from __future__ import annotations

import sqlite_utils


def m002_memory_components(db: sqlite_utils.Database) -> None:
    """The archive that recall searches, and the nine memory components."""
    _m002_items(db)
    _m002_vectors(db)
    _m002_written_components(db)
    _m002_inner_state(db)
    _m002_knowledge_base(db)


def _m002_items(db: sqlite_utils.Database) -> None:
    """m002's items table, its indexes and its two full-text indexes (porter, trigram)."""
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


def _m002_vectors(db: sqlite_utils.Database) -> None:
    """m002's vector store: embeddings by content hash and model, and the models' index tables."""
    # Vectors by content hash and model: the same text is never embedded twice by the same model.
    db.execute(
        "create table embeddings (hash text not null, model text not null, vector blob not null, "
        "primary key (hash, model)) without rowid"
    )
    db.execute(
        "create table embedding_models (model text primary key, dim integer not null, vec_table text not null)"
    )


def _m002_written_components(db: sqlite_utils.Database) -> None:
    """m002's written components: core memory, notepad, episodes, entities, insights, goals."""
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


def _m002_inner_state(db: sqlite_utils.Database) -> None:
    """m002's inner state: drives, open questions, the emotion log."""
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


def _m002_knowledge_base(db: sqlite_utils.Database) -> None:
    """m002's knowledge base: documents and their chunks."""
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


def m003_vector_index_state(db: sqlite_utils.Database) -> None:
    # Bumped whenever a model's vectors change, so in-memory mirrors of the index know to reload.
    db.execute("alter table embedding_models add column generation integer not null default 0")
    # The model's mean vector: bits are taken of (vector - center), see archive/mirror.py (pack_bits).
    db.execute("alter table embedding_models add column center blob")


def m004_vector_log(db: sqlite_utils.Database) -> None:
    # Every change to a model's bit index in commit order (bits null: the vector was removed), so the
    # in-memory mirrors of the index (archive/mirror.py, kept by archive/vectors.py) apply what is new
    # instead of reloading every vector after each turn. Pruned; pruning bumps embedding_models.generation,
    # and a mirror reloads then.
    db.execute(
        "create table vector_log (seq integer primary key autoincrement, vec_table text not null, "
        "item_id integer not null, bits blob)"
    )
    db.execute("create index vector_log_table on vector_log(vec_table, seq)")


def m012_document_error_notice(db: sqlite_utils.Database) -> None:
    """kb_documents.error_notice: why a document cannot be read, as its sentence's template and values
    (nexus_ark.notices.stored), so a window in another language shows it translated; `error` keeps the
    English text (the CLI, and older rows)."""
    db.execute("alter table kb_documents add column error_notice text")


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


def m021_entity_readings(db: sqlite_utils.Database) -> None:
    """entities.reading: how a name is read aloud (issue 36: 「灯」 as あかり), given by the person; '' reads the
    name as the speech engine guesses. Speech replaces each name a persona knows with its reading."""
    db.execute("alter table entities add column reading text not null default ''")

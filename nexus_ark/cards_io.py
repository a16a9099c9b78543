"""Character cards in and out of personas: `nexus-ark persona import CARD` and `persona export`, and the
window's File menu (ui/card_actions.py), both through these two functions.

Import: the card is read and checked whole first (nexus_ark.personas.cards); only then is the persona
created: persona.md (the soul in Markdown sections), persona.toml, card.json (the card as it came, so
nothing of it is lost), avatar.png (a PNG card's own picture) and card-import.json (what became what).
Into its memory, on the persona's own work queue in one transaction: the first message as the persona's
opening message, the alternate greetings as that message's other versions (SillyTavern's swipes), and each
lorebook entry as an entity whose text ends with its keys, so that the prompt's entity section brings it
in when a message names it or says one of its keys, as SillyTavern's lorebook does (see
agent/prompt_inputs.py). Anything that fails removes what was begun: no persona is left half-imported.

Export: a V3 card (JSON, or a PNG of the persona's avatar, or of the app icon, carrying `ccv3` and a V2 copy
in `chara`), made of the card as imported with what changed since (see cards.build_v3).

It sits above app (it takes a NexusApp), below the command line (nexus_ark/cli/).
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from nexus_ark.clock import iso
from nexus_ark.config import replace_file
from nexus_ark.memory.conversation_index import Turn, index_turns
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import Notice, notice
from nexus_ark.paths import assets_dir
from nexus_ark.personas.cards import (
    AVATAR_FILE,
    CARD_FILE,
    CARD_META_FILE,
    LORE_SOURCE,
    CardError,
    EntityState,
    PersonaPlan,
    build_v3,
    embed_card,
    import_meta,
    parse_card,
    plan_persona,
    read_card_file,
    v2_copy,
)
from nexus_ark.personas.model import SOUL_FILE

if TYPE_CHECKING:
    from nexus_ark.app import NexusApp

CardFormat = Literal["png", "json"]


@dataclass
class CardImport:
    slug: str
    name: str
    folder: Path
    spec: str
    lore_in_memory: int  # entries that became entities
    lore_always: int  # constant entries, written into the soul
    greetings: int  # the first message and its alternates
    avatar: bool
    warnings: list[Notice] = field(default_factory=list)


@dataclass
class CardExport:
    path: Path
    format: CardFormat
    warnings: list[Notice] = field(default_factory=list)


def import_card(app: NexusApp, path: Path) -> CardImport:
    """Make a new persona of a SillyTavern card (.png or .json). Raises CardError (naming the file and
    the field) before anything is written when the card cannot be read. Blocks on the disk: off the UI
    thread."""
    card = read_card_file(path)
    plan = plan_persona(card)
    persona = app.personas.store.create(plan.name, plan.language, plan.description)
    slug, folder = persona.slug, persona.folder
    backups = app.layout.backups_dir / slug
    had_backups = backups.exists()
    opened = False
    try:
        _write(folder / SOUL_FILE, plan.soul.encode("utf-8"))
        _write(folder / CARD_FILE, _json_bytes(card.raw))
        if card.avatar is not None:
            _write(folder / AVATAR_FILE, card.avatar)
        meta = import_meta(card, plan, iso(app.clock.now()))
        runtime = app.personas.runtime(slug)
        opened = True
        # On the persona's own queue: its memory has one writer, whoever else is running.
        greeting_id = runtime.queue.call(
            "import character card", lambda: _remember(runtime.memory, slug, plan, card.source)
        )
        meta["greeting_message_id"] = greeting_id
        _write(folder / CARD_META_FILE, _json_bytes(meta))
    except BaseException:
        if opened:
            app.personas.release(slug)
        shutil.rmtree(folder, ignore_errors=True)
        if not had_backups:
            shutil.rmtree(backups, ignore_errors=True)
        raise
    return CardImport(
        slug=slug,
        name=plan.name,
        folder=folder,
        spec=card.spec,
        lore_in_memory=len(plan.lore),
        lore_always=len(plan.always),
        greetings=(1 + len(plan.alternates)) if plan.greeting else 0,
        avatar=card.avatar is not None,
        warnings=card.warnings,
    )


def _remember(store: MemoryStore, slug: str, plan: PersonaPlan, source: str) -> int | None:
    """The greeting, its alternates and the lore into memory, all or nothing. Returns the greeting's id."""
    greeting_id = None
    with store.db.atomic():
        if plan.greeting:
            greeting_id = store.messages.add(
                speaker=slug, role="assistant", content=plan.greeting, meta={"greeting": 1}
            )
            for n, text in enumerate(plan.alternates, start=2):
                other = store.messages.add(
                    speaker=slug,
                    role="assistant",
                    content=text,
                    version_of=greeting_id,
                    meta={"greeting": n},
                )
                store.messages.hide_from(other)  # a version to choose, not a second message
            store.activity.message(greeting_id, plan.name, plan.greeting, role="assistant")
            created = store.messages.get(greeting_id).created_at
            turn = Turn(
                speaker=plan.name, text=plan.greeting, created_at=created, source_id=f"msg:{greeting_id}"
            )
            index_turns(store.archive, [turn])
        for lore in plan.lore:
            store.components.write_entity(lore.name, lore.text, [f"{LORE_SOURCE}{lore.index}"])
        store.activity.imported(
            notice(
                "character card {file}: {lore} lore entries, {greetings} greetings",
                file=source,
                lore=len(plan.lore),
                greetings=(1 + len(plan.alternates)) if plan.greeting else 0,
            ),
            source="card",
            file=source,
            lore=len(plan.lore),
        )
    return greeting_id


def export_card(app: NexusApp, slug: str, out: Path | str, fmt: CardFormat | None = None) -> CardExport:
    """Write a persona as a V3 card: `out` is a file (or a folder: <slug>.png/.json in it; a name ending
    in a slash means a folder, and one that does not exist is refused, never written as a file named so);
    the format is `fmt`, else .json for a .json name, else PNG. Blocks on the disk: off the UI thread."""
    persona = app.personas.load(slug)
    folder_meant = isinstance(out, str) and out.endswith(("/", os.sep))
    out = Path(out)
    chosen: CardFormat = fmt or ("json" if out.suffix.lower() == ".json" else "png")
    if out.is_dir() or folder_meant:
        out = out / f"{slug}.{chosen}"
    if not out.parent.is_dir():
        raise CardError(
            notice(
                "Cannot write {path}: the folder {folder} does not exist.",
                path=str(out),
                folder=str(out.parent),
            )
        )
    raw, meta = _stored_card(persona.folder)
    entities: dict[str, EntityState | None] = {}
    names = list(meta.get("lore_entities", {}).values()) if raw is not None else []
    if names:
        store = app.personas.open_memory(slug, read_only=True)
        try:
            for name in names:
                entity = store.components.entity(name)
                entities[name] = EntityState(entity.text, entity.source_ids) if entity else None
        finally:
            store.close()
    settings = persona.settings
    card, warnings = build_v3(
        raw=raw,
        meta=meta,
        name=settings.name,
        description=settings.description,
        soul=persona.soul,
        language=settings.language,
        entities=entities,
        now=int(app.clock.now().timestamp()),
    )
    parse_card(card, out.name)  # never write a card that our own reader would refuse
    if chosen == "json":
        blob = _json_bytes(card)
    else:
        avatar = persona.folder / AVATAR_FILE
        if not avatar.is_file():
            avatar = assets_dir() / "icons" / "app.png"
        try:
            picture = avatar.read_bytes()
        except OSError as exc:
            raise CardError(
                notice(
                    "Cannot read the picture {path} for the card: {problem}.",
                    path=str(avatar),
                    problem=exc.strerror or str(exc),
                )
            ) from exc
        blob = embed_card(picture, card, v2_copy(card), str(avatar))
    _write(out, blob)
    return CardExport(path=out, format=chosen, warnings=warnings)


def _stored_card(folder: Path) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """card.json and card-import.json of an imported persona; (None, {}) for one made here."""
    card_file = folder / CARD_FILE
    if not card_file.is_file():
        return None, {}
    card = read_card_file(card_file)  # checked again: it may have been edited by hand
    meta_file = folder / CARD_META_FILE
    meta: dict[str, Any] = {}
    if meta_file.is_file():
        try:
            loaded = json.loads(meta_file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CardError(
                notice("{path} cannot be read ({problem}).", path=str(meta_file), problem=str(exc)),
                hint=notice("Delete {path} and retry.", path=str(meta_file)),
            ) from exc
        meta = loaded if isinstance(loaded, dict) else {}
    return card.raw, meta


def _json_bytes(value: Any) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _write(path: Path, blob: bytes) -> None:
    """Whole or not at all: a full disk or a crash never leaves half a file."""
    try:
        replace_file(path, blob)
    except OSError as exc:
        raise CardError(
            notice("Cannot write {path}: {problem}.", path=str(path), problem=exc.strerror or str(exc))
        ) from exc

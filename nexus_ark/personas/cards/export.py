"""Writing a card: a persona's V3 card (the card as imported with what changed since, or one made of a
persona made here), its V2 copy for older apps, and a PNG carrying both."""

from __future__ import annotations

import base64
import copy
import json
from dataclasses import dataclass
from typing import Any

from nexus_ark.notices import Notice, notice
from nexus_ark.personas.cards.plan import parse_soul, soul_hash
from nexus_ark.personas.cards.png import read_png_chunks, strip_card_chunks, text_chunk, write_png
from nexus_ark.personas.cards.schema import (
    LORE_SOURCE,
    V1_FIELDS,
    V2,
    V2_BACKFILL_NOTE,
    V3,
    V3_ONLY,
    LoreEntry,
    lore_text,
    split_lore_text,
)


@dataclass
class EntityState:
    """An entity as memory holds it now (for export)."""

    text: str
    source_ids: list[str]


def build_v3(
    *,
    raw: dict[str, Any] | None,
    meta: dict[str, Any],
    name: str,
    description: str,
    soul: str,
    language: str,
    entities: dict[str, EntityState | None],
    now: int,
) -> tuple[dict[str, Any], list[Notice]]:
    """The V3 card of a persona, and what the person should know about it.

    From an imported card: the card as imported (every field, extensions and unknown ones included) with
    what changed since: the name in persona.toml, the soul's sections if persona.md was edited, the lore
    entries whose entity the person edited (or forgot). Lore that a conversation or a dream rewrote is
    exported as the card had it: those words may be about the person, and a card is for sharing.
    A persona made here: its name, persona.md as the description and persona.toml's line as the creator
    notes; no lorebook (what it learned about people is not for a card)."""
    warnings: list[Notice] = []
    if raw is None:
        body = soul
        lines = body.splitlines()
        if lines and lines[0].startswith("# "):
            body = "\n".join(lines[1:])
        data: dict[str, Any] = {
            "name": name,
            "description": body.strip("\n"),
            "personality": "",
            "scenario": "",
            "first_mes": "",
            "mes_example": "",
            "creator_notes": description,
            "system_prompt": "",
            "post_history_instructions": "",
            "alternate_greetings": [],
            "group_only_greetings": [],
            "tags": [],
            "creator": "",
            "character_version": "",
            "extensions": {"nexus_ark": {"language": language}},
        }
        card: dict[str, Any] = {"spec": V3, "spec_version": "3.0", "data": data}
    else:
        card = copy.deepcopy(raw)
        card["spec"], card["spec_version"] = V3, "3.0"
        data = card["data"]
        data["name"] = name
        if soul_hash(soul) != meta.get("soul_sha256"):
            if meta.get("soul_parseable", False):
                data.update(parse_soul(soul))
            else:
                warnings.append(
                    notice(
                        "persona.md was edited, but its sections cannot be told apart (a field holds one of "
                        "its headings): the card's own description and sections were exported"
                    )
                )
        _overlay_lore(data, meta, entities, warnings)
    for key in ("description", "personality", "scenario", "first_mes", "mes_example", "creator_notes"):
        data.setdefault(key, "")
    for key in ("system_prompt", "post_history_instructions", "creator", "character_version"):
        data.setdefault(key, "")
    for key in ("alternate_greetings", "group_only_greetings", "tags"):
        data.setdefault(key, [])
    data.setdefault("extensions", {})
    book = data.get("character_book")
    if isinstance(book, dict):
        book.setdefault("extensions", {})
        for entry in book.get("entries", []):
            entry.setdefault("extensions", {})
            entry.setdefault("use_regex", False)
    for legacy in V1_FIELDS:  # top-level V1 copies that some apps keep: never stale
        if legacy in card:
            card[legacy] = data.get(legacy, "")
    data["modification_date"] = now
    return card, warnings


def _overlay_lore(
    data: dict[str, Any],
    meta: dict[str, Any],
    entities: dict[str, EntityState | None],
    warnings: list[Notice],
) -> None:
    book = data.get("character_book")
    mapped: dict[str, str] = meta.get("lore_entities", {})
    if not isinstance(book, dict) or not mapped:
        return
    entries = book.get("entries", [])
    forgotten: set[int] = set()
    for index_text, entity_name in mapped.items():
        index = int(index_text)
        if index >= len(entries):
            continue
        entry = entries[index]
        state = entities.get(entity_name)
        if state is None:
            forgotten.add(index)
            continue
        own = f"{LORE_SOURCE}{index}"
        if any(s != own for s in state.source_ids):
            warnings.append(
                notice(
                    "what '{name}' says was rewritten in conversation: the card's own entry was exported",
                    name=entity_name,
                )
            )
            continue
        original = lore_text(LoreEntry.model_validate(entry))
        if state.text == original:
            continue
        content, keys = split_lore_text(state.text)
        entry["content"] = content
        if keys is not None and not entry.get("use_regex"):
            entry["keys"] = keys
    if forgotten:
        book["entries"] = [e for i, e in enumerate(entries) if i not in forgotten]
        left_out = notice("{count} lore entries forgotten in memory were left out", count=len(forgotten))
        warnings.append(left_out)


def v2_copy(card_v3: dict[str, Any]) -> dict[str, Any]:
    """The V2 card written beside a V3 one in a PNG, for apps that read only `chara` (V3 spec: backfill,
    with the note in creator_notes)."""
    data = {k: v for k, v in copy.deepcopy(card_v3["data"]).items() if k not in V3_ONLY}
    notes = data.get("creator_notes", "")
    data["creator_notes"] = f"{V2_BACKFILL_NOTE}\n\n{notes}" if notes else V2_BACKFILL_NOTE
    card: dict[str, Any] = {"spec": V2, "spec_version": "2.0", "data": data}
    for legacy in V1_FIELDS:  # V1 readers find the basics at the top level
        card[legacy] = data.get(legacy, "")
    return card


def embed_card(png: bytes, card_v3: dict[str, Any], card_v2: dict[str, Any] | None, source: str) -> bytes:
    """The PNG with its old card chunks replaced by `ccv3` (and `chara`, the V2 copy) before IEND."""
    chunks = strip_card_chunks(read_png_chunks(png, source))
    new = []
    if card_v2 is not None:
        new.append(text_chunk("chara", _b64_json(card_v2)))
    new.append(text_chunk("ccv3", _b64_json(card_v3)))
    return write_png([*chunks[:-1], *new, chunks[-1]])


def _b64_json(card: dict[str, Any]) -> str:
    return base64.b64encode(json.dumps(card, ensure_ascii=False).encode("utf-8")).decode("ascii")

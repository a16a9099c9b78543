"""Reading a SillyTavern character card, V2 ("chara_card_v2") or V3 ("chara_card_v3"), from PNG or JSON, and
checking it whole: a Card, or CardError naming the file and the field. Reads nothing else, writes nothing.

The specs: github.com/malfoyslastname/character-card-spec-v2 (spec_v2.md) and
github.com/kwaroran/character-card-spec-v3 (SPEC_V3.md). In a PNG the card is a tEXt chunk: `chara` holds
a V2 card, `ccv3` a V3 card, each UTF-8 JSON in base64; when both are there the V3 one is read. zTXt and
iTXt chunks of those names are read too (a few tools write them).

What is checked, so that a hostile card is refused with its file and field named before anything is
written: the file's size, the PNG's structure and checksums, base64, UTF-8, JSON (and its nesting), the
spec, and the type and size of every field this app interprets (fields it only keeps are kept as they are).
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import math
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from nexus_ark.config import unreadable_json
from nexus_ark.notices import Notice, joined, notice, validation_message
from nexus_ark.personas.cards.png import (
    PNG_SIGNATURE,
    not_png,
    png_texts,
    read_png_chunks,
    strip_card_chunks,
    write_png,
)
from nexus_ark.personas.cards.schema import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_JSON_BYTES,
    MAX_LORE_CHARS,
    NOTHING_IMPORTED,
    V1,
    V1_FIELDS,
    V2,
    V2_BACKFILL_NOTE,
    V3,
    Card,
    CardData,
    CardError,
    lore_text,
    to_memory,
)
from nexus_ark.personas.model import NAME_MAX


def read_card_file(path: Path) -> Card:
    """Read and check a card file (.png with a card chunk, or .json). Raises CardError naming the file
    and the field at fault; reads nothing else and writes nothing."""
    source = path.name
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise CardError(_unreadable(path, exc)) from exc
    if not path.is_file():
        raise CardError(notice("{path} is not a file.", path=str(path)))
    if size > MAX_FILE_BYTES:
        raise CardError(
            notice(
                "{source} is {size:.1f} MB: a character card may be at most {limit} MB.",
                source=source,
                size=size / 1e6,
                limit=MAX_FILE_BYTES // 2**20,
            ),
            hint=NOTHING_IMPORTED,
        )
    try:
        blob = path.read_bytes()
    except OSError as exc:
        raise CardError(_unreadable(path, exc)) from exc
    return read_card_bytes(blob, source)


def _unreadable(path: Path, exc: OSError) -> Notice:
    return notice("Cannot read the card {path}: {problem}.", path=str(path), problem=exc.strerror or str(exc))


def read_card_bytes(blob: bytes, source: str) -> Card:
    if blob.startswith(PNG_SIGNATURE):
        return _card_from_png(blob, source)
    if source.lower().endswith(".png"):
        raise CardError(not_png(source))
    what = notice("the file")
    text = _utf8(blob, source, what)
    card = parse_card(_json(text, source, what), source)
    card.avatar = _icon_asset(card)
    return card


def _icon_asset(card: Card) -> bytes | None:
    """A JSON card's picture: its main icon asset when that is a PNG data URL (V3 spec: assets)."""
    assets = card.raw["data"].get("assets")
    if not isinstance(assets, list):
        return None
    icons = [a for a in assets if isinstance(a, dict) and a.get("type") == "icon"]
    main = next((a for a in icons if a.get("name") == "main"), icons[0] if icons else None)
    uri = main.get("uri") if main else None
    prefix = "data:image/png;base64,"
    if not isinstance(uri, str) or not uri.startswith(prefix):
        return None
    try:
        png = base64.b64decode(uri[len(prefix) :], validate=True)
        return write_png(strip_card_chunks(read_png_chunks(png, "icon")))
    except (binascii.Error, ValueError, CardError):
        card.warnings.append(notice("the main icon asset is not a readable PNG: the persona has no avatar"))
        return None


def _utf8(blob: bytes, source: str, what: Notice) -> str:
    try:
        return blob.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CardError(
            notice(
                "{source}: {what} is not UTF-8 text (byte {byte} cannot be read).",
                source=source,
                what=what,
                byte=exc.start,
            )
        ) from exc


def _json(text: str, source: str, what: Notice) -> Any:
    if len(text) > MAX_JSON_BYTES:
        raise CardError(
            notice(
                "{source}: {what} holds more than {limit} MB of JSON: refused.",
                source=source,
                what=what,
                limit=MAX_JSON_BYTES // 2**20,
            )
        )
    try:
        return json.loads(text, parse_int=_int)
    except json.JSONDecodeError as exc:
        raise CardError(
            notice(
                "{source}: {what} is not valid JSON ({problem} at line {line}, column {column}).",
                source=source,
                what=what,
                problem=exc.msg,
                line=exc.lineno,
                column=exc.colno,
            )
        ) from exc
    except RecursionError:
        raise CardError(
            notice(
                "{source}: {what} is JSON nested too deeply to be a character card.", source=source, what=what
            )
        ) from None
    except ValueError as exc:  # what else Python cannot make values of (numbers are read by _int)
        raise CardError(
            notice(
                "{source}: {what} cannot be read: {problem}.",
                source=source,
                what=what,
                problem=unreadable_json(exc),
            )
        ) from None


class _LongNumber:
    """A JSON integer of more than 4,300 digits, which int() refuses: parse_card names its field."""


_LONG_NUMBER = _LongNumber()


def _int(text: str) -> int | _LongNumber:
    try:
        return int(text)
    except ValueError:
        return _LONG_NUMBER


def _card_from_png(blob: bytes, source: str) -> Card:
    chunks = read_png_chunks(blob, source)
    texts = png_texts(chunks, source, ("ccv3", "chara"))
    if not texts:
        raise CardError(
            notice(
                "{source} is a PNG image without a character card in it (no 'chara' or 'ccv3' text chunk).",
                source=source,
            ),
            hint=notice("Export the card again from the app it came from, as a PNG card or a JSON file."),
        )
    keyword = "ccv3" if "ccv3" in texts else "chara"
    compact = "".join(texts[keyword].split())
    compact += "=" * (-len(compact) % 4)
    try:
        decoded = base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise CardError(
            notice(
                "{source}: the {keyword!r} chunk is not valid base64 ({problem}).",
                source=source,
                keyword=keyword,
                problem=str(exc),
            )
        ) from exc
    what = notice("the {keyword!r} chunk", keyword=keyword)
    card = parse_card(_json(_utf8(decoded, source, what), source, what), source)
    if keyword == "ccv3" and card.spec != V3:
        card.warnings.append(notice("the 'ccv3' chunk holds a {spec} card; read as such", spec=card.spec))
    card.avatar = write_png(strip_card_chunks(chunks))
    return card


def parse_card(raw: Any, source: str) -> Card:
    """Check a card's JSON (already parsed) and read it."""
    if not isinstance(raw, dict):
        raise CardError(
            notice(
                "{source}: a character card is a JSON object, not {kind}.",
                source=source,
                kind=type(raw).__name__,
            )
        )
    spec = raw.get("spec")
    warnings: list[Notice] = []
    if spec in (V2, V3):
        data = raw.get("data")
        if not isinstance(data, dict):
            raise CardError(
                notice("{source}: field 'data' must be an object holding the card's fields.", source=source)
            )
    elif spec is None and isinstance(raw.get("name"), str) and "first_mes" in raw:
        # A V1 card (fields at the top level): read in V2's shape, which holds all of it.
        data = {k: raw[k] for k in V1_FIELDS if k in raw}
        raw = {"spec": V2, "spec_version": "2.0", "data": data}
        warnings.append(notice("a V1 card (no spec field): read as a V2 card"))
        spec = V1
    else:
        shown = repr(spec) if spec is not None else notice("missing")
        raise CardError(
            notice(
                "{source}: field 'spec' is {shown}: Nexus Ark reads cards whose spec is {v2!r} or {v3!r} "
                "(SillyTavern character cards V2 and V3).",
                source=source,
                shown=shown,
                v2=V2,
                v3=V3,
            ),
            hint=NOTHING_IMPORTED,
        )
    if spec == V3:
        version = raw.get("spec_version")
        try:
            newer = float(version) > 3.0  # the V3 spec: compare as a float, newer ones still import
        except OverflowError:  # an integer too large for a float is newer all the same
            newer = True
        except (TypeError, ValueError):
            newer = False
        if newer:
            warnings.append(
                notice(
                    "spec_version {version} is newer than 3.0: fields Nexus Ark does not know are kept",
                    version=_clip(str(version)),
                )
            )
    _check_structure(raw, source)
    try:
        parsed = CardData.model_validate(data)
    except ValidationError as exc:
        raise CardError(
            notice("{source}: {problems}.", source=source, problems=joined(_problems(exc), "; ")),
            hint=NOTHING_IMPORTED,
        ) from exc
    _check_name(parsed.name, source)
    _check_lore_size(parsed, source)
    bad = _unwritable(raw.get("data"), "data")
    if bad:  # in a field only kept (extensions, unknown ones): card.json could not be written
        raise CardError(
            notice(
                "{source}: field '{field}' contains an invalid character (a lone UTF-16 surrogate).",
                source=source,
                field=bad,
            )
        )
    if spec == V2 and parsed.creator_notes.startswith(V2_BACKFILL_NOTE):
        # The V2 copy another app wrote beside a V3 card: its note is not the creator's.
        parsed.creator_notes = parsed.creator_notes[len(V2_BACKFILL_NOTE) :].lstrip("\n")
        raw = copy.deepcopy(raw)
        raw["data"]["creator_notes"] = parsed.creator_notes
    if _has_script(parsed):
        warnings.append(notice("the card's text contains <script> tags: kept as text, never run"))
    return Card(raw=raw, data=parsed, spec=spec, source=source, warnings=warnings)


def _problems(exc: ValidationError) -> list[Notice]:
    """At most five problems, each with its field path as the card writes it (data.tags[2])."""
    problems = []
    for err in exc.errors()[:5]:
        where = "data"
        for part in err["loc"]:
            where += f"[{part}]" if isinstance(part, int) else f".{part}"
        if err["type"] == "missing":
            problems.append(notice("field '{field}' is missing", field=where))
            continue
        value = err.get("input")
        got: str = ""
        if err["type"] == "value_error":
            pass  # our own messages say what they found
        elif isinstance(value, str | int | float | bool) or value is None:
            got = notice(" (got {value})", value=_clip(repr(value)))
        elif isinstance(value, list):
            got = notice(" (got a list)")
        elif isinstance(value, dict):
            got = notice(" (got a JSON object)")
        problems.append(
            notice("field '{field}': {problem}{got}", field=where, problem=validation_message(err), got=got)
        )
    if len(exc.errors()) > 5:
        problems.append(notice("and {count} more problems", count=len(exc.errors()) - 5))
    return problems


def _walk(value: Any, where: str) -> Iterator[tuple[str, Any, int]]:
    """Every value below `value` (object keys too), each with its field path and nesting depth, in
    document order. Iterative: a card nested a thousand deep must not end the import with RecursionError."""
    stack: list[tuple[str, Any, int]] = [(where, value, 0)]
    while stack:
        at, item, depth = stack.pop()
        yield at, item, depth
        if isinstance(item, dict):
            children = []
            for key, child in item.items():
                yield at, key, depth
                children.append((f"{at}.{key}" if at else str(key), child, depth + 1))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            stack.extend((f"{at}[{i}]", item[i], depth + 1) for i in reversed(range(len(item))))


def _check_structure(raw: dict[str, Any], source: str) -> None:
    """What the JSON parser read but this app cannot keep: a number of more than 4,300 digits (int()
    refuses it; json.loads raised ValueError) and nesting deeper than MAX_DEPTH (writing card.json,
    copying the card and exporting it recurse once a level)."""
    for at, item, depth in _walk(raw, ""):
        if isinstance(item, dict | list) and depth + 1 > MAX_DEPTH:  # the card itself is level 1
            raise CardError(
                notice(
                    "{source}: field '{field}' is nested more than {limit} levels deep: refused.",
                    source=source,
                    field=_clip(at, 120),
                    limit=MAX_DEPTH,
                ),
                hint=NOTHING_IMPORTED,
            )
        if isinstance(item, float) and not math.isfinite(item):
            # Python's JSON reads NaN, Infinity and 1e999, which JSON does not allow: an export written
            # from them would be refused by every other app.
            raise CardError(
                notice(
                    "{source}: field '{field}' holds {value}, which JSON does not allow: refused.",
                    source=source,
                    field=_clip(at, 120),
                    value=str(item).replace("inf", "Infinity").replace("nan", "NaN"),
                ),
                hint=NOTHING_IMPORTED,
            )
        if item is _LONG_NUMBER:
            raise CardError(
                notice(
                    "{source}: field '{field}' holds a number of more than 4,300 digits, too long to read.",
                    source=source,
                    field=_clip(at, 120),
                ),
                hint=NOTHING_IMPORTED,
            )


def _check_lore_size(data: CardData, source: str) -> None:
    book = data.character_book.entries if data.character_book else []
    chars = sum(len(lore_text(e)) for e in book if to_memory(e))
    if chars > MAX_LORE_CHARS:
        raise CardError(
            notice(
                "{source}: field 'data.character_book.entries': its entries hold {count:,} characters for "
                "memory: at most {limit:,} are read (importing more would take minutes).",
                source=source,
                count=chars,
                limit=MAX_LORE_CHARS,
            ),
            hint=NOTHING_IMPORTED,
        )


def _unwritable(value: Any, where: str) -> str:
    """The path of the first text (or key) below `value` that UTF-8 cannot encode; "" when none."""
    for at, item, _ in _walk(value, where):
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return at
    return ""


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _check_name(name: str, source: str) -> None:
    if not name.strip():
        raise CardError(
            notice("{source}: field 'data.name' is empty: a character needs a name.", source=source)
        )
    if len(name.strip()) > NAME_MAX:
        raise CardError(
            notice(
                "{source}: field 'data.name' is {length} characters long: a persona's name is at most "
                "{limit}.",
                source=source,
                length=len(name.strip()),
                limit=NAME_MAX,
            )
        )
    if any(unicodedata.category(ch) in ("Cc", "Zl", "Zp") for ch in name):
        raise CardError(
            notice(
                "{source}: field 'data.name' is not one line (it holds a newline or control character).",
                source=source,
            )
        )


_SCRIPT = re.compile(r"<\s*script\b", re.IGNORECASE)


def _has_script(data: CardData) -> bool:
    texts = [data.description, data.personality, data.scenario, data.first_mes, data.creator_notes]
    texts += data.alternate_greetings
    if data.character_book is not None:
        texts += [e.content for e in data.character_book.entries]
    return any(_SCRIPT.search(t) for t in texts)

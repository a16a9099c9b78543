"""SillyTavern character cards: V2 ("chara_card_v2") and V3 ("chara_card_v3") read from PNG or JSON, and V3
cards (with a V2 copy for older apps) written from a persona.

Pure: bytes and dicts in, data out. Writing a persona folder and its memory is nexus_ark.cards_io's work.

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
import hashlib
import json
import re
import struct
import unicodedata
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from nexus_ark.config import unreadable_json
from nexus_ark.errors import PersonaError
from nexus_ark.notices import Notice, joined, notice, validation_message
from nexus_ark.personas.model import NAME_MAX

V1, V2, V3 = "chara_card_v1", "chara_card_v2", "chara_card_v3"
CARD_FILE = "card.json"  # the card as imported, whole: nothing of it is lost
CARD_META_FILE = "card-import.json"  # what the import made of it (for export and the window)
AVATAR_FILE = "avatar.png"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# Limits. Real cards with a picture are a few MB; the largest lorebooks a few thousand entries.
MAX_FILE_BYTES = 32 * 1024 * 1024
MAX_JSON_BYTES = 16 * 1024 * 1024
MAX_TEXT_CHARS = 200_000  # one text field (a description, a greeting, a lore entry)
MAX_SHORT_CHARS = 1_000  # a tag, a key, a lore entry's name
MAX_LIST_ITEMS = 1_000  # greetings, tags, keys of one entry
MAX_LORE_ENTRIES = 10_000
# The lore's text that becomes memory, keys included: indexing it costs about a second a MB (two full-text
# indexes, one of trigrams), so a card of 16 MB of lore took a minute. Two million characters is a
# lorebook of 2,000 entries of 1,000 characters, imported in a few seconds.
MAX_LORE_CHARS = 2_000_000
MAX_DEPTH = 100  # arrays and objects in a card: json.dumps(indent=...) and deepcopy recurse per level
MAX_PNG_CHUNKS = 100_000

# The V3 spec asks an app that writes a V3 card's V2 copy to say so in the copy's creator notes; we take
# the note back out when such a copy is all there is to read.
V2_BACKFILL_NOTE = (
    "This character card is Character Card V3, but it is loaded as a Character Card V2. Please use a "
    "Character Card V3 compatible application to use this character card properly."
)
# A lore entry's keys are kept in its entity's text, on its last line, so keyword recall finds it by them.
KEYS_LINE = "\nKeys: "
LORE_SOURCE = "card:lore#"  # an entity's source id: the lore entry (by its index) it came from
V3_ONLY = (
    "assets",
    "nickname",
    "creator_notes_multilingual",
    "source",
    "group_only_greetings",
    "creation_date",
    "modification_date",
)
V1_FIELDS = ("name", "description", "personality", "scenario", "first_mes", "mes_example")


class CardError(PersonaError):
    """A character card that cannot be read: the message names the file and the field."""


NOTHING_IMPORTED = notice("Nothing was imported.")


# -- field types: checked where this app reads them ------------------------------------------------------
def _none_to_empty(value: Any) -> Any:
    return "" if value is None else value


def _none_to_list(value: Any) -> Any:
    return [] if value is None else value


def _keys_list(value: Any) -> Any:
    # The V3 spec's prose calls secondary keys "values separated by a comma": accept that form too.
    if value is None:
        return []
    if isinstance(value, str):
        return [k.strip() for k in value.split(",") if k.strip()]
    return value


def _writable(value: str) -> str:
    """Text that can be written to a UTF-8 file and a database: no lone surrogates, no NUL."""
    if "\x00" in value:
        raise ValueError(notice("contains a NUL character"))
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(notice("contains an invalid character (a lone UTF-16 surrogate)")) from None
    return value


def _at_most(limit: int, unit: Notice) -> Any:
    """A size limit checked before the items are: a 100,000-entry lorebook is refused at once."""

    def check(value: Any) -> Any:
        if isinstance(value, str | list) and len(value) > limit:
            raise ValueError(
                notice(
                    "has {count} {unit}: at most {limit} are read", count=len(value), unit=unit, limit=limit
                )
            )
        return value

    return BeforeValidator(check)


Text = Annotated[
    str,
    BeforeValidator(_none_to_empty),
    Field(strict=True),
    _at_most(MAX_TEXT_CHARS, notice("characters")),
    AfterValidator(_writable),
]
Short = Annotated[
    str, Field(strict=True), _at_most(MAX_SHORT_CHARS, notice("characters")), AfterValidator(_writable)
]
TextList = Annotated[list[Text], BeforeValidator(_none_to_list), _at_most(MAX_LIST_ITEMS, notice("items"))]
ShortList = Annotated[list[Short], BeforeValidator(_none_to_list), _at_most(MAX_LIST_ITEMS, notice("items"))]
KeyList = Annotated[list[Short], BeforeValidator(_keys_list), _at_most(MAX_LIST_ITEMS, notice("items"))]
Extensions = Annotated[dict[str, Any], BeforeValidator(lambda v: {} if v is None else v)]


class LoreEntry(BaseModel):
    """One lorebook entry. Fields not named here (insertion_order, priority, position, ...) are kept."""

    model_config = ConfigDict(extra="allow")

    keys: KeyList = Field(default_factory=list)
    content: Text = ""
    extensions: Extensions = Field(default_factory=dict)
    enabled: bool = Field(default=True, strict=True)
    constant: bool | None = Field(default=None, strict=True)
    use_regex: bool = Field(default=False, strict=True)
    name: Text | None = None
    comment: Text | None = None
    secondary_keys: KeyList | None = None


class CharacterBook(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: Text | None = None
    description: Text | None = None
    extensions: Extensions = Field(default_factory=dict)
    entries: Annotated[
        list[LoreEntry], BeforeValidator(_none_to_list), _at_most(MAX_LORE_ENTRIES, notice("entries"))
    ] = Field(default_factory=list)


class CardData(BaseModel):
    """A card's `data`: V2's fields and V3's additions. Unknown fields are kept (the specs ask it)."""

    model_config = ConfigDict(extra="allow")

    name: Annotated[str, Field(strict=True), AfterValidator(_writable)]
    description: Text = ""
    personality: Text = ""
    scenario: Text = ""
    first_mes: Text = ""
    mes_example: Text = ""
    creator_notes: Text = ""
    system_prompt: Text = ""
    post_history_instructions: Text = ""
    alternate_greetings: TextList = Field(default_factory=list)
    group_only_greetings: TextList = Field(default_factory=list)
    tags: ShortList = Field(default_factory=list)
    creator: Text = ""
    character_version: Text = ""
    extensions: Extensions = Field(default_factory=dict)
    character_book: CharacterBook | None = None
    nickname: Text | None = None


@dataclass
class Card:
    """A card read and checked. `raw` is the JSON as read (a V1 card is put in V2's shape)."""

    raw: dict[str, Any]
    data: CardData
    spec: str
    source: str  # the file's name, for messages
    avatar: bytes | None = None  # the PNG the card came in, its card chunks taken out
    warnings: list[Notice] = field(default_factory=list)


# -- PNG ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PngChunk:
    kind: bytes  # b"IHDR", b"tEXt", ...
    data: bytes


def read_png_chunks(blob: bytes, source: str) -> list[PngChunk]:
    """The chunks of a PNG, checked: the signature, each chunk's length and checksum, IHDR first, IEND."""
    if not blob.startswith(PNG_SIGNATURE):
        raise CardError(_not_png(source))
    chunks: list[PngChunk] = []
    at = len(PNG_SIGNATURE)
    while True:
        if at + 8 > len(blob):
            raise CardError(
                notice(
                    "{source} is a broken PNG: it ends at byte {at} without an IEND chunk.",
                    source=source,
                    at=at,
                )
            )
        length, kind = struct.unpack(">I4s", blob[at : at + 8])
        end = at + 8 + length + 4
        if end > len(blob):
            raise CardError(
                notice(
                    "{source} is a broken PNG: the {chunk!r} chunk at byte {at} says it is {length} bytes "
                    "long, past the end of the file.",
                    source=source,
                    chunk=kind.decode("latin-1"),
                    at=at,
                    length=length,
                )
            )
        data = blob[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", blob[end - 4 : end])
        if zlib.crc32(kind + data) != crc:
            raise CardError(
                notice(
                    "{source} is a broken PNG: the {chunk!r} chunk at byte {at} has a wrong checksum (the "
                    "file is damaged or was cut).",
                    source=source,
                    chunk=kind.decode("latin-1"),
                    at=at,
                )
            )
        if not chunks and kind != b"IHDR":
            raise CardError(notice("{source} is a broken PNG: its first chunk is not IHDR.", source=source))
        chunks.append(PngChunk(kind, data))
        if len(chunks) > MAX_PNG_CHUNKS:
            raise CardError(
                notice(
                    "{source} has more than {limit} PNG chunks: refused.", source=source, limit=MAX_PNG_CHUNKS
                )
            )
        at = end
        if kind == b"IEND":
            return chunks


def _not_png(source: str) -> Notice:
    return notice("{source} is not a PNG image (it does not start with the PNG signature).", source=source)


def write_png(chunks: list[PngChunk]) -> bytes:
    out = [PNG_SIGNATURE]
    for chunk in chunks:
        out.append(struct.pack(">I", len(chunk.data)) + chunk.kind + chunk.data)
        out.append(struct.pack(">I", zlib.crc32(chunk.kind + chunk.data)))
    return b"".join(out)


def text_chunk(keyword: str, text: str) -> PngChunk:
    """A tEXt chunk (Latin-1 by the PNG spec: base64 is plain ASCII)."""
    return PngChunk(b"tEXt", keyword.encode("latin-1") + b"\x00" + text.encode("latin-1"))


def _inflate(data: bytes, source: str, keyword: str) -> bytes:
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, MAX_JSON_BYTES * 2)
    except zlib.error as exc:
        raise CardError(
            notice(
                "{source}: the compressed {keyword!r} chunk cannot be read ({problem}).",
                source=source,
                keyword=keyword,
                problem=str(exc),
            )
        ) from exc
    if inflater.unconsumed_tail:
        raise CardError(
            notice(
                "{source}: the {keyword!r} chunk unpacks to more than {limit} bytes.",
                source=source,
                keyword=keyword,
                limit=MAX_JSON_BYTES * 2,
            )
        )
    return out


def png_texts(chunks: list[PngChunk], source: str, wanted: tuple[str, ...]) -> dict[str, str]:
    """The text of the tEXt/zTXt/iTXt chunks whose keyword is one of `wanted` (lowercase), by keyword."""
    found: dict[str, str] = {}
    for chunk in chunks:
        if chunk.kind not in (b"tEXt", b"zTXt", b"iTXt"):
            continue
        keyword, sep, rest = chunk.data.partition(b"\x00")
        key = keyword.decode("latin-1").lower()
        if not sep or key not in wanted or key in found:
            continue
        if chunk.kind == b"tEXt":
            found[key] = rest.decode("latin-1")
        elif chunk.kind == b"zTXt":
            found[key] = _inflate(rest[1:], source, key).decode("latin-1")
        else:  # iTXt: flag, method, language\0, translated keyword\0, text (UTF-8)
            compressed = rest[:1] == b"\x01"
            _lang, _, tail = rest[2:].partition(b"\x00")
            _translated, _, text = tail.partition(b"\x00")
            raw = _inflate(text, source, key) if compressed else text
            found[key] = raw.decode("utf-8", errors="replace")
    return found


def _is_card_chunk(chunk: PngChunk) -> bool:
    if chunk.kind not in (b"tEXt", b"zTXt", b"iTXt"):
        return False
    key = chunk.data.partition(b"\x00")[0].decode("latin-1").lower()
    return key in ("chara", "ccv3") or key.startswith("chara-ext-asset_")


def strip_card_chunks(chunks: list[PngChunk]) -> list[PngChunk]:
    return [c for c in chunks if not _is_card_chunk(c)]


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


# -- reading a card -----------------------------------------------------------------------------------
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
        raise CardError(_not_png(source))
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
    chars = sum(len(lore_text(e)) for e in book if _to_memory(e))
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


# -- what a card becomes ------------------------------------------------------------------------------
# The soul's sections: (card field, English heading, Japanese heading). The description comes first,
# under the name; creator notes are for people, never for the prompt (the V2 spec), so they stay out.
SOUL_SECTIONS = (
    ("personality", "Personality", "性格"),
    ("scenario", "Scenario", "シナリオ"),
    ("system_prompt", "Instructions", "指示"),
    ("post_history_instructions", "Reminders", "念押し"),
    ("mes_example", "Example messages", "会話の例"),
)
ALWAYS_SECTION = ("Always true", "いつも心に")  # constant lorebook entries
NAMES_SECTION = ("Names", "呼び名")
_NAMES_NOTE = {
    "en": "In this text {{{{char}}}} means you, {name}, and {{{{user}}}} the person you talk with.",
    "ja": "この文章の {{{{char}}}} はあなた（{name}）、{{{{user}}}} は話し相手のことです。",
}
_YOU = {"en": "you", "ja": "あなた"}
_MACRO = re.compile(r"\{\{\s*(char|user)\s*\}\}|<(bot|user|char)>", re.IGNORECASE)


@dataclass
class LoreMemory:
    """A lore entry as an entity: recalled when its name or one of its keys is in a message."""

    index: int  # in character_book.entries
    name: str
    text: str


@dataclass
class PersonaPlan:
    name: str
    language: str
    description: str  # persona.toml's one line
    soul: str
    soul_parseable: bool  # no field holds one of the soul's own headings: edits can be read back
    greeting: str  # first_mes with the names filled in ("" when the card has none)
    alternates: list[str]
    lore: list[LoreMemory]
    always: list[int]  # constant entries (indexes), written into the soul


def guess_language(*texts: str) -> str:
    """ "ja" when Japanese script is a good share of the letters, else "en"."""
    letters = japanese = 0
    for text in texts:
        for ch in text[:20_000]:
            if ch.isalpha():
                letters += 1
                if "\u3040" <= ch <= "\u30ff" or "\u4e00" <= ch <= "\u9fff" or "\uff66" <= ch <= "\uff9f":
                    japanese += 1
    return "ja" if letters and japanese / letters >= 0.2 else "en"


# Japanese cards write "{{user}}さん": with "あなた" in its place the honorific goes ("あなたさん" is wrong).
_USER_HONORIFIC = re.compile(r"(\{\{\s*user\s*\}\}|<user>)(さん|様|さま|くん|君|ちゃん|殿)", re.IGNORECASE)


def fill_names(text: str, char: str, user: str) -> str:
    """{{char}}/<bot> and {{user}}/<user> as a conversation shows them."""
    if user == _YOU["ja"]:
        text = _USER_HONORIFIC.sub(r"\1", text)
    return _MACRO.sub(lambda m: user if (m.group(1) or m.group(2)).lower() == "user" else char, text)


def one_line(text: str, limit: int = 160) -> str:
    line = " ".join(next((ln for ln in text.splitlines() if ln.strip()), "").split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _to_memory(entry: LoreEntry) -> bool:
    """An entry that becomes an entity: enabled (a disabled one must never be used, V3 spec; it stays in
    card.json), not constant (those are written into the soul), with something to say."""
    return entry.enabled and not entry.constant and bool(entry.content.strip())


def lore_text(entry: LoreEntry) -> str:
    """An entity's text: the entry's content, then its keys (not regular expressions: they are no words)."""
    keys = [] if entry.use_regex else [k.strip() for k in entry.keys if k.strip()]
    return f"{entry.content}{KEYS_LINE}{', '.join(keys)}" if keys else entry.content


def split_lore_text(text: str) -> tuple[str, list[str] | None]:
    """Content and keys from an entity's text (None: no keys line, the keys are unchanged)."""
    head, sep, last = text.rpartition(KEYS_LINE)
    if sep and "\n" not in last:
        return head, [k.strip() for k in last.split(",") if k.strip()]
    return text, None


@dataclass
class _Names:
    """Entity names given so far (casefolded), and per name the next number to try for its copies."""

    taken: set[str] = field(default_factory=set)
    next_copy: dict[str, int] = field(default_factory=dict)


def _lore_name(entry: LoreEntry, index: int, names: _Names) -> str:
    """The entry's name, or "name (2)", "name (3)"... for the next entries of the same name. Each name
    goes on from its last number (every lower one is taken for good), so 10,000 entries of one name
    take 10,000 steps, not 50 million (109 s)."""
    base = next(
        (" ".join(c.split()) for c in (entry.name, entry.comment, *entry.keys) if c and c.strip()),
        f"Lore entry {index + 1}",
    )[:120]
    name, n = base, names.next_copy.get(base.casefold(), 2)
    while name.casefold() in names.taken:
        name, n = f"{base} ({n})", n + 1
    names.next_copy[base.casefold()] = n
    names.taken.add(name.casefold())
    return name


def plan_persona(card: Card) -> PersonaPlan:
    data = card.data
    name = data.name.strip()
    ours = data.extensions.get("nexus_ark")
    language = ours.get("language") if isinstance(ours, dict) else None
    if language not in ("en", "ja"):
        language = guess_language(name, data.description, data.personality, data.first_mes)
    char = (data.nickname or "").strip() or name
    book = data.character_book.entries if data.character_book else []
    lore: list[LoreMemory] = []
    always: list[int] = []
    names = _Names()
    for i, entry in enumerate(book):
        if not entry.enabled or not entry.content.strip():
            continue  # a disabled entry must never be used (V3 spec); it stays in card.json
        if entry.constant:
            always.append(i)
        elif _to_memory(entry):
            lore.append(LoreMemory(i, _lore_name(entry, i, names), lore_text(entry)))
    fields = {f: getattr(data, f) for f in ("description", *(s[0] for s in SOUL_SECTIONS))}
    soul = render_soul(name, fields, [book[i].content for i in always], language)
    headings = {
        f"## {h}" for s in (*SOUL_SECTIONS, (None, *ALWAYS_SECTION), (None, *NAMES_SECTION)) for h in s[1:]
    }
    parseable = not any(ln.strip() in headings for v in fields.values() for ln in v.splitlines())
    user = _YOU[language]
    # The first message opens the conversation; the alternate greetings are its other versions (what
    # SillyTavern shows as swipes). With no first message, the first alternate takes its place.
    greetings = [fill_names(g, char, user) for g in (data.first_mes, *data.alternate_greetings) if g.strip()]
    return PersonaPlan(
        name=name,
        language=language,
        description=one_line(fill_names(data.description or data.personality, char, user)),
        soul=soul,
        soul_parseable=parseable,
        greeting=greetings[0] if greetings else "",
        alternates=greetings[1:],
        lore=lore,
        always=always,
    )


def render_soul(name: str, fields: dict[str, str], always: list[str], language: str) -> str:
    """persona.md: the name, the description, then one section per card field that says something."""
    ja = language == "ja"
    parts = [f"# {name}"]
    if fields.get("description", "").strip():
        parts.append(fields["description"].strip("\n"))
    for key, en, jp in SOUL_SECTIONS:
        value = fields.get(key, "")
        if value.strip():
            parts.append(f"## {jp if ja else en}\n\n{value.strip(chr(10))}")
    if always:
        parts.append(f"## {ALWAYS_SECTION[ja]}\n\n" + "\n\n".join(a.strip("\n") for a in always))
    body = "\n\n".join(parts)
    if _MACRO.search(body):
        parts.append(f"## {NAMES_SECTION[ja]}\n\n" + _NAMES_NOTE[language].format(name=name))
    return "\n\n".join(parts) + "\n"


# The example messages as the model reads them. Under a Markdown heading, with SillyTavern's <START>
# markers, a small model took them for a document to go on with and began replies with "## Example
# messages" (issue 23, defect 20): in the prompt they are a note that says what they are instead.
EXAMPLES_NOTE = {
    "en": "(How {name} talks, shown by example. These lines are not part of this conversation: never "
    "repeat them or this note.)",
    "ja": "（{name}の話し方の例です。この会話の一部ではありません。この例やこの注記を繰り返さないこと。）",
}
_EXAMPLE_HEADINGS = {f"## {h}" for key, *names in SOUL_SECTIONS if key == "mes_example" for h in names}
_START = re.compile(r"^\s*<start>\s*$", re.IGNORECASE)
_HEADING = re.compile(r"#{1,6} ")


def soul_for_prompt(soul: str, name: str, language: str) -> str:
    """persona.md as the system prompt carries it: the example messages' section (its heading in either
    language) becomes EXAMPLES_NOTE with the examples under it, their <START> lines taken out; the rest,
    and a soul without examples, exactly as written. persona.md itself keeps its heading (it is what a
    person edits and what export reads back)."""
    lines = soul.splitlines()
    if not any(line.strip() in _EXAMPLE_HEADINGS for line in lines):
        return soul
    note = EXAMPLES_NOTE.get(language, EXAMPLES_NOTE["en"]).format(name=name)
    out: list[str] = []
    in_examples = False
    for line in lines:
        heading = line.strip()
        if heading in _EXAMPLE_HEADINGS:
            in_examples = True
            out.append(note)
            continue
        if _HEADING.match(heading):  # the next section ("#hashtag" in an example is no heading)
            in_examples = False
        if in_examples:
            line = "" if _START.match(line) else line  # a <START> marker separates examples: a blank line
            if not line.strip() and out[-1] in ("", note):
                continue  # no blank line right after the note, none twice
        out.append(line)
    return "\n".join(out)


def parse_soul(text: str) -> dict[str, str]:
    """The card fields back from a soul render_soul wrote (and a person may have edited since)."""
    by_heading = {f"## {h}": key for key, en, jp in SOUL_SECTIONS for h in (en, jp)}
    ignored = {f"## {h}" for h in (*ALWAYS_SECTION, *NAMES_SECTION)}
    lines = text.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    fields: dict[str, list[str]] = {"description": []}
    current: str | None = "description"
    for line in lines:
        heading = line.strip()
        if heading in by_heading:
            current = by_heading[heading]
            fields[current] = []
        elif heading in ignored:
            current = None
        elif current is not None:
            fields[current].append(line)
    result = {key: "\n".join(value).strip("\n") for key, value in fields.items()}
    for key, *_ in SOUL_SECTIONS:
        result.setdefault(key, "")
    return result


def soul_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- writing a card -----------------------------------------------------------------------------------
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
) -> tuple[dict[str, Any], list[str]]:
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


def import_meta(card: Card, plan: PersonaPlan, imported_at: str) -> dict[str, Any]:
    return {
        "source": card.source,
        "spec": card.spec,
        "imported_at": imported_at,
        "soul_sha256": soul_hash(plan.soul),
        "soul_parseable": plan.soul_parseable,
        "lore_entities": {str(m.index): m.name for m in plan.lore},
        "lore_always": plan.always,
        "avatar": card.avatar is not None,
    }

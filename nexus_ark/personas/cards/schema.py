"""A character card's fields as this app reads them (pydantic models of V2's `data` and V3's additions; a V1
card is read in V2's shape), the limits each field is checked against, and a lore entry's text as memory holds
it. Every field type here is what a hostile card is refused by, with the field named (see read.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from nexus_ark.errors import PersonaError
from nexus_ark.notices import Notice, notice

V1, V2, V3 = "chara_card_v1", "chara_card_v2", "chara_card_v3"
CARD_FILE = "card.json"  # the card as imported, whole: nothing of it is lost
CARD_META_FILE = "card-import.json"  # what the import made of it (for export and the window)
AVATAR_FILE = "avatar.png"

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


# -- a lore entry as memory holds it ----------------------------------------------------------------------
def to_memory(entry: LoreEntry) -> bool:
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

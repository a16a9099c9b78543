"""What a card becomes: the persona's name, language and soul (persona.md, in sections), its greeting and
the greeting's other versions, and which lore entries become memory (entities) and which the soul holds;
the soul read back (for export) and as the system prompt carries it."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from nexus_ark.personas.cards.schema import Card, LoreEntry, lore_text, to_memory
from nexus_ark.prompts.cards import EXAMPLES_NOTE

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
        elif to_memory(entry):
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

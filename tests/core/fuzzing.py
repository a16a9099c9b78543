"""A seeded mutator for the files that cross a boundary into Nexus Ark: character cards (JSON and PNG),
persona.toml and config.toml, JSON Lines imports and ChatGPT exports (issue 23, the fuzz bar).

Each input is made from a real seed (tests/data/cards, tests/data/chatgpt, the settings files the app
writes, valid JSONL) by 1 to 3 mutations drawn from what hostile or broken files hold: flipped, cut,
inserted and duplicated bytes, integers too long for int(), floats too large for a float, nesting deeper
than the parsers' stacks, strings of megabytes, duplicated keys, values of the wrong type, keys removed,
lists blown up, lone surrogates, NUL and other Unicode oddities. Case `i` of a kind is drawn from
random.Random(f"{seed}:{kind}:{i}") alone, so a failing case is made again by its number.
"""

from __future__ import annotations

import base64
import io
import json
import random
import re
import zipfile
from typing import Any

from tests.cards_maker import picture, with_text_chunks

# Raw text that a serializer cannot write but a file can hold: put in place of a marker string.
_RAW_JSON = (
    "1" * 5000,
    "-" + "9" * 4400,
    "4" * 4300,
    "1e999",
    "-1e400",
    "NaN",
    "Infinity",
    "123456789012345678901234567890",
)
_RAW_TOML = ("1" * 5000, "-" + "9" * 4400, "inf", "nan", "1979-05-27T07:32:00Z", "0x" + "f" * 5000)
_DEPTHS = (50, 100, 101, 500, 900, 1000, 1100, 5000)
_ODD_TEXT = (
    "\ud800",  # a lone surrogate: cannot be written as UTF-8
    "a\udfffb",
    "\x00",
    "nul\x00inside",
    "\u202eright-to-left",
    "line\u2028separator",
    "e\u0301" * 1000,
    "\ufeff",
    "\uffff\ufffe",
    "\x1b[31mred\x1b[0m",
    "😀" * 500,
    "ｆｕｌｌｗｉｄｔｈ",
    "改行\r\n混じり\rの\n文",
    "{{char}} {{user}} <bot> <user> <START>",
    "## Example messages",
    "<script>alert(1)</script>",
    "",
    "   ",
    "\t\n",
    "con",
    "../../etc/passwd",
)
_WRONG_TYPES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    2**63,
    1.5,
    -0.0,
    [],
    {},
    [1, "a", None],
    {"k": "v"},
)


class Mutator:
    """Mutations of one seed value (parsed JSON or TOML) and of its bytes, recorded by name."""

    def __init__(self, rnd: random.Random, syntax: str) -> None:
        self.rnd = rnd
        self.syntax = syntax  # "json" or "toml"
        self.raw: dict[str, str] = {}  # marker -> raw text put in its place when serialized
        self.done: list[str] = []

    # -- values -------------------------------------------------------------------------------------
    def _marker(self, text: str) -> str:
        marker = f"@@RAW{len(self.raw)}@@"
        self.raw[marker] = text
        return marker

    def _deep(self) -> str:
        depth = self.rnd.choice(_DEPTHS)
        if self.syntax == "toml" or self.rnd.random() < 0.5:
            return "[" * depth + "]" * depth
        return '{"a":' * depth + "1" + "}" * depth

    def replacement(self) -> tuple[str, Any]:
        r = self.rnd
        choice = r.randrange(7)
        if choice == 0:
            return "huge number", self._marker(r.choice(_RAW_TOML if self.syntax == "toml" else _RAW_JSON))
        if choice == 1:
            return "deep nesting", self._marker(self._deep())
        if choice == 2:
            size = r.choice((10_000, 250_000, 1_000_000))
            return f"string of {size}", r.choice("xあ ") * size
        if choice == 3:
            value = r.choice(_WRONG_TYPES)
            return f"wrong type {type(value).__name__}", value
        if choice == 4:
            return "odd text", r.choice(_ODD_TEXT)
        if choice == 5:
            return "long list", ["x"] * r.choice((1_000, 20_000))
        return "negative/zero", r.choice((-(2**31), 0, -1, 10**18))

    def _slots(self, value: Any) -> list[tuple[Any, Any]]:
        """Every (container, key or index) below `value`, iteratively."""
        slots: list[tuple[Any, Any]] = []
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                for key, child in item.items():
                    slots.append((item, key))
                    stack.append(child)
            elif isinstance(item, list):
                for i, child in enumerate(item[:50]):
                    slots.append((item, i))
                    stack.append(child)
        return slots

    def mutate_value(self, value: Any) -> Any:
        slots = self._slots(value)
        if not slots:
            return value
        container, key = self.rnd.choice(slots)
        action = self.rnd.randrange(10)
        if action == 0 and isinstance(container, dict):
            del container[key]
            self.done.append(f"removed {key!r}")
        elif action == 1 and isinstance(container[key], list) and container[key]:
            times = self.rnd.choice((2, 100, 1_000, 12_000))
            container[key] = container[key] * times
            self.done.append(f"list {key!r} x{times}")
        else:
            what, new = self.replacement()
            if self.syntax == "toml" and new is None:
                new = ""
            container[key] = new
            self.done.append(f"{what} at {key!r}")
        return value

    # -- text and bytes -----------------------------------------------------------------------------
    def serialize(self, value: Any) -> str:
        if self.syntax == "json":
            text = json.dumps(value, ensure_ascii=self.rnd.random() < 0.5)
            for marker, raw in self.raw.items():
                text = text.replace(json.dumps(marker), raw)
        else:
            import tomli_w

            text = tomli_w.dumps(_tomlable(value))
            for marker, raw in self.raw.items():
                text = text.replace(json.dumps(marker), raw)
        return text

    def mutate_text(self, text: str) -> str:
        r = self.rnd
        if self.syntax == "json":
            keys = list(re.finditer(r'"[A-Za-z_]+": ', text))
            if keys:
                at = r.choice(keys)
                extra = f"{at.group()}{json.dumps(r.choice(_WRONG_TYPES))}, "
                self.done.append(f"duplicated key {at.group()!r}")
                return text[: at.start()] + extra + text[at.start() :]
        else:
            lines = text.splitlines(keepends=True)
            if lines:
                i = r.randrange(len(lines))
                self.done.append(f"duplicated line {lines[i].strip()[:30]!r}")
                lines.insert(i, lines[i])
                return "".join(lines)
        return text

    def mutate_bytes(self, blob: bytes) -> bytes:
        r = self.rnd
        data = bytearray(blob)
        if not data:
            return bytes(data)
        action = r.randrange(8)
        if action == 0:
            for _ in range(r.randint(1, 10)):
                data[r.randrange(len(data))] ^= 1 << r.randrange(8)
            self.done.append("flipped bits")
        elif action == 1:
            data = data[: r.randrange(len(data))]
            self.done.append("truncated")
        elif action == 2:
            at = r.randrange(len(data) + 1)
            data[at:at] = r.choice(
                (b"\xff", b"\xc3", b"\x00", b"\xed\xa0\x80", bytes(r.randrange(256) for _ in range(8)))
            )
            self.done.append("inserted bytes")
        elif action == 3:
            a = r.randrange(len(data))
            b = min(len(data), a + r.randint(1, 200))
            del data[a:b]
            self.done.append("deleted bytes")
        elif action == 4:
            a = r.randrange(len(data))
            b = min(len(data), a + r.randint(1, 500))
            data[b:b] = data[a:b] * r.randint(1, 20)
            self.done.append("duplicated bytes")
        elif action == 5:
            data = bytearray(b"\xef\xbb\xbf") + data
            self.done.append("BOM")
        elif action == 6:
            data = data.replace(b"\n", b"\r\n")
            self.done.append("CRLF")
        else:
            data += data[: r.randint(1, 100)]
            self.done.append("trailing garbage")
        return bytes(data)

    def mutate(self, seed: Any) -> bytes:
        """The seed (a fresh copy) mutated 1 to 3 times, as bytes."""
        value = json.loads(json.dumps(seed))
        for _ in range(self.rnd.randint(1, 3)):
            value = self.mutate_value(value)
        text = self.serialize(value)
        if self.rnd.random() < 0.2:
            text = self.mutate_text(text)
        blob = text.encode("utf-8", errors="surrogatepass")
        if self.rnd.random() < 0.3:
            blob = self.mutate_bytes(blob)
        return blob


def _tomlable(value: Any) -> Any:
    """TOML has no null: None becomes an empty string (the other wrong types stay wrong)."""
    if value is None:
        return ""
    if isinstance(value, dict):
        return {k: _tomlable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_tomlable(v) for v in value]
    return value


def case_random(seed: int, kind: str, index: int) -> random.Random:
    return random.Random(f"{seed}:{kind}:{index}")


def png_card(rnd: random.Random, card_json: bytes, done: list[str]) -> bytes:
    """A PNG carrying the (mutated) card JSON, in the chunk kinds and keywords cards use."""
    keyword = rnd.choice(("chara", "ccv3", "CHARA"))
    kind = rnd.choice((b"tEXt", b"tEXt", b"zTXt", b"iTXt"))
    text = base64.b64encode(card_json).decode("ascii")
    done.append(f"png {keyword}/{kind.decode()}")
    return with_text_chunks(picture(8, 8), [(keyword, text)], kind)


def zipped(name: str, blob: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, blob)
    return out.getvalue()

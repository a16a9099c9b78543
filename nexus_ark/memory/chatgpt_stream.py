"""The ChatGPT export's conversations.json read as a stream (for chatgpt_import.py): the file itself or the
one inside the export's .zip, its top-level list one element at a time.

Memory use: stdlib json.raw_decode over a growing text buffer (no dependency), so a hundreds-of-MB export
needs memory for its largest conversation plus the source ids already in the database, not for the whole
file. Only a file that breaks mid-way is read on to its end before the break is reported.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from nexus_ark.config import unreadable_json
from nexus_ark.errors import NexusArkError
from nexus_ark.notices import Notice, notice

CHUNK = 1 << 20  # characters read at a time
_DECODE = json.JSONDecoder().raw_decode
# What matters for finding where a JSON value ends without parsing it: a string (group 1: its closing
# quote, absent when the text read so far ends inside it), a bracket; and a number, true, false or null.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(")?|[\[\]{}]')
_SCALAR = re.compile(r"[^,\]\s]*")
_SPACE = re.compile(r"[ \t\r\n]*")
EXPORT_HINT = notice(
    "Use conversations.json from a ChatGPT data export (Settings → Data controls → Export data), "
    "or the export's .zip."
)


class ExportUnreadable(NexusArkError):
    """The file as a whole cannot be read as a ChatGPT export: nothing was imported from it."""


class Broken(Exception):
    """The JSON text breaks at some point (position in characters from the start)."""


class Unreadable:
    """An element of the list that is JSON but cannot be read into values (see config.unreadable_json):
    it was stepped over, and is named as a broken conversation."""

    def __init__(self, problem: Notice) -> None:
        self.problem = problem


def open_export(path: Path) -> tuple[IO[bytes], int]:
    """The export's conversations.json as bytes, from the file itself or from inside the export's .zip,
    and its size in bytes."""
    try:
        fh = path.open("rb")
        size = os.fstat(fh.fileno()).st_size
    except OSError as exc:
        raise ExportUnreadable(
            notice("Cannot read {path}: {problem}.", path=str(path), problem=exc.strerror or str(exc))
        ) from None
    if fh.read(4) != b"PK\x03\x04":
        fh.seek(0)
        return fh, size
    fh.close()
    try:
        archive = zipfile.ZipFile(path)
        names = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == "conversations.json"]
        if not names:
            archive.close()
            raise ExportUnreadable(
                notice("The zip {path} has no conversations.json inside.", path=str(path)), hint=EXPORT_HINT
            )
        name = min(names, key=len)  # the top-level one if there are several
        return archive.open(name), archive.getinfo(name).file_size
    except (zipfile.BadZipFile, OSError) as exc:
        raise ExportUnreadable(
            notice("Cannot read the zip {path}: {problem}.", path=str(path), problem=str(exc)),
            hint=EXPORT_HINT,
        ) from None


class ExportText:
    """A UTF-8 byte stream read as text a chunk at a time, with a read position."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.buf = ""
        self.pos = 0
        self.dropped = 0  # characters before buf, for positions in messages
        self.bytes_read = 0
        self.eof = False

    def fill(self, at_least: int = 0) -> bool:
        """Read at least CHUNK characters more (CHUNK as it is now); False at the end of the file."""
        if self.eof:
            return False
        self.buf, self.dropped = self.buf[self.pos :], self.dropped + self.pos
        self.pos = 0
        data = self.stream.read(max(CHUNK, at_least))
        try:
            self.buf += self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            at = self.bytes_read + exc.start
            raise Broken(f"not UTF-8 text (byte 0x{data[exc.start]:02x} at byte {at})") from None
        self.bytes_read += len(data)
        self.eof = not data
        return bool(data)

    def peek(self) -> str | None:
        """The next character that is not whitespace, or None at the end of the file."""
        while True:
            # A regular expression, not a loop over characters: 300 MB of whitespace zipped into 300 KB
            # took 27 s of a core one character at a time.
            self.pos = _SPACE.match(self.buf, self.pos).end()  # type: ignore[union-attr]  # always matches
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.fill():
                return None

    def value(self) -> Any:
        """The next JSON value. A value cut by the buffer's end fails to parse: read as much again and
        retry, so a conversation of n characters is parsed O(log n) times, not once per chunk."""
        self.peek()  # raw_decode does not skip whitespace itself
        while True:
            try:
                obj, self.pos = _DECODE(self.buf, self.pos)
                return obj
            except json.JSONDecodeError as exc:
                where = self.dropped + exc.pos + 1  # counted from 1, as editors count; before fill() moves it
                if not self.fill(len(self.buf) - self.pos):
                    raise Broken(f"not JSON at character {where} ({exc.msg})") from None
            except (RecursionError, ValueError) as exc:  # valid JSON that Python cannot make values of
                problem = unreadable_json(exc)
                break
        # Step over that value to the next, so one broken conversation is one, not the end of the import.
        while (end := _value_end(self.buf, self.pos)) is None:
            if not self.fill(len(self.buf) - self.pos):
                raise Broken(f"the text ends inside the value at character {self.at()}")
        self.pos = end
        return Unreadable(problem)

    def at(self) -> int:
        """The read position as a character number counted from 1."""
        return self.dropped + self.pos + 1


def _value_end(buf: str, pos: int) -> int | None:
    """Where the JSON value starting at `pos` ends (the position after it), found by matching brackets
    outside strings, without parsing (and so without recursion) it; None when `buf` ends first."""
    if buf[pos] not in "[{":
        end = _SCALAR.match(buf, pos).end()  # type: ignore[union-attr]  # matches always (maybe empty)
        return end if end < len(buf) else None
    depth = 0
    for token in _TOKENS.finditer(buf, pos):
        text = token.group()
        if text[0] == '"':
            if token.group(1) is None:
                return None
        elif text in "[{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return token.end()
    return None


def elements(text: ExportText) -> Iterator[Any]:
    """The elements of the top-level JSON array, one at a time."""
    text.fill()
    if text.buf.startswith("\ufeff"):  # a byte-order mark some tools write
        text.pos = 1
    first = text.peek()
    if first is None:
        raise Broken("the file is empty")
    if first != "[":
        if first == "{":
            raise Broken("it holds a JSON object, not the list of conversations")
        raise Broken(f"it does not start as JSON text does (it starts with {first!r})")
    text.pos += 1
    if text.peek() == "]":
        text.pos += 1
    else:
        while True:
            yield text.value()
            after = text.peek()
            if after == ",":
                text.pos += 1
                continue
            if after == "]":
                text.pos += 1
                break
            if after is None:
                raise Broken("the list of conversations is not closed")
            raise Broken(f"expected ',' or ']' at character {text.at()}, found {after!r}")
    if text.peek() is not None:
        raise Broken(f"more text follows the list of conversations at character {text.at()}")

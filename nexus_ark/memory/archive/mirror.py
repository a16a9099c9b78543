"""The archive's vectors as bits in memory (archive.vectors keeps them current, archive.search scans them):
the signs of each centred vector, scanned by Hamming distance for the nearest candidates."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


class BitMirror:
    """The packed bits of one model's vectors, in memory, for a fast Hamming scan.

    It follows the database's vector_log: vectors written or removed since it last looked are applied
    one by one (a turn adds two), so a search after a write costs what a search without one does. It
    reads the whole index again only when the generation changed (the log was pruned), which no
    incremental update can follow."""

    def __init__(self) -> None:
        self.generation = -1
        self.seq = 0  # the last vector_log entry applied
        self.size = 0
        self.ids = np.zeros(0, dtype=np.int64)
        self.words = np.zeros((0, 0), dtype=np.uint64)
        self.pos: dict[int, int] = {}

    def load(self, rows: list[tuple[int, bytes]], generation: int, seq: int) -> None:
        self.ids = np.array([r[0] for r in rows], dtype=np.int64)
        width = len(rows[0][1]) if rows else 8
        packed = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.uint8).reshape(len(rows), width)
        self.words = _as_words(packed)
        self.size = len(rows)
        self.pos = {item_id: n for n, item_id in enumerate(self.ids.tolist())}
        self.generation, self.seq = generation, seq

    def apply(self, changes: Iterable[tuple[int, int, bytes | None]]) -> None:
        """Log entries (seq, item_id, bits or None for a removal), in order."""
        for seq, item_id, bits in changes:
            at = self.pos.get(item_id)
            if bits is None:
                if at is not None:
                    self._remove(at)
            else:
                word = _as_words(np.frombuffer(bits, dtype=np.uint8).reshape(1, -1))[0]
                if at is None:
                    self._append(item_id, word)
                else:
                    self.words[at] = word
            self.seq = seq

    def _append(self, item_id: int, word: np.ndarray) -> None:
        if self.size == len(self.ids) or self.words.shape[1] != len(word):
            # Room to grow by doubling: appending a turn's two vectors copies nothing.
            capacity = max(64, 2 * self.size)
            ids = np.zeros(capacity, dtype=np.int64)
            words = np.zeros((capacity, len(word)), dtype=np.uint64)
            ids[: self.size] = self.ids[: self.size]
            if self.size:
                words[: self.size] = self.words[: self.size]
            self.ids, self.words = ids, words
        self.ids[self.size] = item_id
        self.words[self.size] = word
        self.pos[item_id] = self.size
        self.size += 1

    def _remove(self, at: int) -> None:
        """Move the last row into the hole."""
        last = self.size - 1
        removed, moved = int(self.ids[at]), int(self.ids[last])
        self.ids[at] = self.ids[last]
        self.words[at] = self.words[last]
        self.pos[moved] = at
        del self.pos[removed]
        self.size = last

    def nearest(self, query_bits: bytes, k: int) -> np.ndarray:
        if self.size == 0:
            return np.zeros(0, dtype=np.int64)
        ids, words = self.ids[: self.size], self.words[: self.size]
        q = _as_words(np.frombuffer(query_bits, dtype=np.uint8).reshape(1, -1))[0]
        distance = np.bitwise_count(np.bitwise_xor(words, q)).sum(axis=1)
        k = min(k, self.size)
        top = np.argpartition(distance, k - 1)[:k]
        return ids[top]


def _as_words(packed: np.ndarray) -> np.ndarray:
    """Bytes of bits as 64-bit words (zero-padded: any dimension works, not only multiples of 64)."""
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


def pack_bits(vector: np.ndarray, center: np.ndarray) -> bytes:
    """Signs of the centred vector, packed like sqlite-vec's bit vectors (bit i = value i > 0, LSB first)."""
    return np.packbits((np.asarray(vector) - center) > 0, bitorder="little").tobytes()

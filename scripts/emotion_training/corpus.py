"""What a head is trained on: GoEmotions train and the written seed sentences, their targets, their
(cached) query embeddings and Ekman gold labels, as one Corpus."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nexus_ark.mind.features import is_japanese
from nexus_ark.mind.labels import LABELS

from .head import Settings
from .labels import (
    ekman_gold,
    fine_labels,
    fine_targets,
    grouping,
    load_ekman_groups,
    seed_fine_targets,
    soft_targets,
)

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "scripts" / "data" / "emotion_seed.jsonl"


def embed_cached(texts: list[str], cache_dir: Path, batch: int = 256) -> np.ndarray:
    """Query embeddings (the detector embeds with embed_query too), cached by content."""
    from nexus_ark.providers.embedders import default_embedder

    embedder = default_embedder()
    key = hashlib.sha1("\n".join([embedder.model_id, "query", *texts]).encode()).hexdigest()[:16]
    path = cache_dir / f"emb-{key}.npy"
    if path.exists():
        return np.load(path)
    out = np.zeros((len(texts), embedder.dim), np.float32)
    model = embedder._get()  # the batch call: same vectors as embed_query, several times faster
    for start in range(0, len(texts), batch):
        chunk = texts[start : start + batch]
        out[start : start + len(chunk)] = np.asarray(model.query(chunk)).reshape(len(chunk), embedder.dim)
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    cache_dir.mkdir(parents=True, exist_ok=True)
    np.save(path, out)
    return out


def read_goemotions(path: Path, names: list[str]) -> tuple[list[str], list[list[str]]]:
    texts, labels = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        text, ids, _ = line.split("\t")
        texts.append(text)
        labels.append([names[int(i)] for i in ids.split(",")])
    return texts, labels


def read_seed(path: Path) -> tuple[list[str], np.ndarray, list[str]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    y = np.zeros((len(rows), len(LABELS)), np.float32)
    for i, row in enumerate(rows):
        y[i, LABELS.index(row["label"])] = 1.0
    return [r["text"] for r in rows], y, [r["lang"] for r in rows]


@dataclass
class Corpus:
    texts: list[str]  # GoEmotions train, then the seed
    x: np.ndarray
    y: np.ndarray
    is_seed: np.ndarray
    gold: np.ndarray  # Ekman index of each GoEmotions comment (-1: several groups), -1 for the seed
    g: np.ndarray | None  # (outputs, LABELS) where the head is trained on FINE labels
    ja: np.ndarray  # the seed's Japanese sentences
    japanese: np.ndarray  # 0/1: texts the Japanese-only term applies to (kana or kanji, as the detector sees)
    embedded: np.ndarray  # rows whose x is their embedding (all, unless GoEmotions was sampled: zeros else)


def load_corpus(
    data: Path, cache: Path, s: Settings, *, english_only: bool = False, seed: Path = SEED, sample: int = 0
) -> Corpus:
    """sample > 0: embed only that many GoEmotions comments (chosen with a fixed seed; the others' x are
    zeros and `embedded` says which), enough for statistics of the embeddings, not for training on them."""
    names = (data / "labels.txt").read_text(encoding="utf-8").split()
    texts, lists = read_goemotions(data / "train.tsv", names)
    s_texts, y_seed, langs = read_seed(seed)
    if english_only:
        keep = [i for i, lang in enumerate(langs) if lang == "en"]
        s_texts, y_seed, langs = [s_texts[i] for i in keep], y_seed[keep], [langs[i] for i in keep]
    if s.fine:
        fine = fine_labels(names)
        g = grouping(fine)
        y_go = fine_targets(lists, fine)
        y_s = seed_fine_targets(y_seed, g, y_go)
    else:
        g, y_go, y_s = None, soft_targets(lists), y_seed
    n_go, n_seed = len(texts), len(s_texts)
    all_texts = texts + s_texts
    embedded = np.ones(n_go, bool)
    if sample:
        embedded[:] = False
        embedded[np.random.default_rng(0).choice(n_go, size=min(sample, n_go), replace=False)] = True
        x_go = np.zeros((n_go, embed_cached(s_texts[:1], cache).shape[1]), np.float32)
        x_go[embedded] = embed_cached([t for t, e in zip(texts, embedded, strict=True) if e], cache)
    else:
        x_go = embed_cached(texts, cache)
    return Corpus(
        texts=all_texts,
        x=np.vstack([x_go, embed_cached(s_texts, cache)]),
        y=np.vstack([y_go, y_s]),
        is_seed=np.r_[np.zeros(n_go, bool), np.ones(n_seed, bool)],
        gold=np.r_[ekman_gold(lists, load_ekman_groups(data)), -np.ones(n_seed, int)],
        g=g,
        ja=np.r_[np.zeros(n_go, bool), np.array([lang == "ja" for lang in langs], bool)],
        japanese=np.array([is_japanese(t) for t in all_texts], np.float32),
        embedded=np.r_[embedded, np.ones(n_seed, bool)],
    )

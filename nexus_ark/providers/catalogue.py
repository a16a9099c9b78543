"""The model catalogue (models/catalogue.toml): what the app suggests, how big it is, whether it fits."""

from __future__ import annotations

import ctypes
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from nexus_ark.errors import ConfigError
from nexus_ark.model_config import ModelSpec
from nexus_ark.notices import notice
from nexus_ark.paths import catalogue_dir


class CatalogueEntry(BaseModel):
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

    @property
    def kind(self) -> str:
        return ModelSpec.parse(self.spec).kind

    def fits(self, total_ram_gb: float | None) -> bool | None:
        """Whether this machine has the RAM we suggest; None where we cannot tell."""
        if total_ram_gb is None or not self.ram_gb:
            return None
        return self.ram_gb <= total_ram_gb * 0.75  # leave room for the OS and the app itself


def load_catalogue(path: Path | None = None) -> list[CatalogueEntry]:
    path = path or catalogue_dir() / "catalogue.toml"
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
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


def language_advice(
    spec: str, language: str, entries: list[CatalogueEntry], ram_gb: float | None
) -> LanguageAdvice | None:
    """None when the model speaks the language, or is not in the catalogue (then we cannot tell)."""
    model = next((e for e in entries if e.spec == spec), None)
    if model is None or not model.languages or language in model.languages:
        return None
    speakers = [e for e in entries if language in e.languages and e.spec != spec]
    # The smallest that fits this machine first: the step up a person on a modest laptop can take.
    fitting = [e for e in speakers if model_fits(e, ram_gb)]
    suggestion = min(fitting or speakers, key=lambda e: (e.ram_gb or 1e9, e.size_gb), default=None)
    return LanguageAdvice(language=language, model=model.name, spec=spec, suggestion=suggestion)


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

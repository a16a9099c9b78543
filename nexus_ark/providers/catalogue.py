"""The model catalogue (models/catalogue.toml): what the app suggests, how big it is, whether it fits."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from nexus_ark.errors import ConfigError
from nexus_ark.model_config import ModelSpec
from nexus_ark.paths import catalogue_dir


class CatalogueEntry(BaseModel):
    spec: str
    name: str
    size_gb: float = 0.0
    ram_gb: float = 0.0
    license: str = ""
    languages: list[str] = Field(default_factory=list)
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
        raise ConfigError(f"The model catalogue {path} cannot be read: {exc}") from exc


def total_ram_gb() -> float | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (AttributeError, ValueError, OSError):  # Windows has no sysconf
        return None

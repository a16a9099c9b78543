"""Finding, creating and seeding persona folders in the user's data directory."""

from __future__ import annotations

import re
import shutil
import tomllib
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from nexus_ark.config import edit_toml_file, load_toml_model, save_toml_model, validation_problems
from nexus_ark.errors import ConfigError, NexusArkError, PersonaError
from nexus_ark.model_config import ModelConfig
from nexus_ark.personas.model import (
    MEMORY_FILE,
    NAME_MAX,
    SETTINGS_FILE,
    SOUL_FILE,
    ModelSettings,
    PersonaInfo,
    PersonaSettings,
)

_SOUL_TEMPLATES = {
    "en": (
        "# {name}\n\n"
        "You are {name}, a companion who lives on this person's own computer.\n\n"
        "## Who you are\n- Warm, curious and honest.\n"
        "- You remember what matters to the person you talk with.\n\n"
        "## How you speak\n- Short, natural replies in English.\n"
    ),
    "ja": (
        "# {name}\n\n"
        "あなたは{name}。この人のパソコンの中で暮らす話し相手です。\n\n"
        "## あなたについて\n- 温かく、好奇心があり、正直です。\n- 相手にとって大切なことを覚えています。\n\n"
        "## 話し方\n- 自然で短い日本語で答えます。\n"
    ),
}


@dataclass
class Persona:
    slug: str
    folder: Path
    settings: PersonaSettings
    soul: str

    @property
    def memory_path(self) -> Path:
        return self.folder / MEMORY_FILE


# Names Windows refuses as a file or folder name, with or without an extension ("con.txt" too).
WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"{dev}{n}" for dev in ("com", "lpt") for n in [*"0123456789", "¹", "²", "³"]}
)
SLUG_MAX = 64  # deep data dirs on Windows still stay within MAX_PATH


def slugify(name: str, taken: set[str]) -> str:
    """A folder name that every OS can create: lowercase ASCII letters, digits and single dashes."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    base = re.sub(r"[^a-z0-9]+", "-", ascii_name.lower())[:SLUG_MAX].strip("-") or "persona"
    if base in WINDOWS_RESERVED:
        base = f"{base}-persona"
    taken_folded = {t.casefold() for t in taken}  # Windows and macOS folders ignore case
    slug, n = base, 2
    while slug in taken_folded:
        slug, n = f"{base}-{n}", n + 1
    return slug


def soul_problem(folder: Path) -> str:
    """What is wrong with a persona's soul file, in words; "" when it is there and says something."""
    soul_file = folder / SOUL_FILE
    if not soul_file.is_file():
        return f"{SOUL_FILE} is missing: the persona runs without its identity. Restore {soul_file}."
    try:
        if not soul_file.read_text(encoding="utf-8").strip():
            return f"{SOUL_FILE} is empty: the persona runs without its identity. Describe it in {soul_file}."
    except (OSError, UnicodeDecodeError):
        return ""  # load() reports an unreadable soul as an error
    return ""


class PersonaStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def slugs(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and not p.name.startswith("."))

    def list(self) -> list[PersonaInfo]:
        infos = []
        for slug in self.slugs():
            folder = self.root / slug
            try:
                persona = self.load(slug)
            except NexusArkError as exc:
                infos.append(PersonaInfo(slug=slug, folder=folder, name=slug, error=exc.message))
                continue
            s = persona.settings
            infos.append(
                PersonaInfo(
                    slug=slug,
                    folder=folder,
                    name=s.name,
                    language=s.language,
                    description=s.description,
                    warning=soul_problem(folder),
                )
            )
        return infos

    def load(self, slug: str) -> Persona:
        folder = self.root / slug
        if not folder.is_dir():
            known = ", ".join(self.slugs()) or "none"
            raise PersonaError(
                f"There is no persona {slug!r} in {self.root}.",
                hint=f"Known personas: {known}. `nexus-ark persona list` shows them.",
            )
        settings_file = folder / SETTINGS_FILE
        if not settings_file.exists():
            raise PersonaError(f"The persona folder {folder} has no {SETTINGS_FILE}.")
        settings = load_toml_model(settings_file, PersonaSettings)
        soul_file = folder / SOUL_FILE
        try:
            soul = soul_file.read_text(encoding="utf-8") if soul_file.exists() else ""
        except (OSError, UnicodeDecodeError) as exc:
            raise PersonaError(
                f"Cannot read the soul file {soul_file}: {exc}.", hint="Save it as UTF-8 text."
            ) from exc
        return Persona(slug=slug, folder=folder, settings=settings, soul=soul)

    def create(self, name: str, language: str = "en", description: str = "") -> Persona:
        name = name.strip()
        if not name:
            raise PersonaError("A persona needs a name.")
        try:
            settings = PersonaSettings(name=name, language=language, description=description)  # type: ignore[arg-type]
        except ValidationError as exc:
            raise ConfigError(
                "Cannot create the persona: " + "; ".join(validation_problems(exc)) + ".",
                hint=f"A name is one line of 1 to {NAME_MAX} characters. Nothing was created.",
            ) from exc
        slug = slugify(name, set(self.slugs()))
        folder = self.root / slug
        folder.mkdir(parents=True)
        (folder / SOUL_FILE).write_text(
            _SOUL_TEMPLATES[settings.language].format(name=name), encoding="utf-8"
        )
        save_toml_model(folder / SETTINGS_FILE, settings)
        return self.load(slug)

    def save_models(self, slug: str, chat: Mapping[str, object], internal: ModelConfig | None) -> Persona:
        """Set a persona's chat model (the keys given) and internal model (None: same as chat) in its
        persona.toml, editing the file in place so the person's comments and order survive."""
        persona = self.load(slug)  # refuses a file that is already broken, before we touch it
        path = persona.folder / SETTINGS_FILE
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
        # exclude_unset: what the file already says plus what changed, not every default spelled out.
        chat_table = ModelSettings.model_validate({**raw.get("model", {}), **chat})
        changes: dict[str, object] = {"model": chat_table.model_dump(mode="json", exclude_unset=True)}
        if internal is None:
            changes["internal_model"] = None
        else:
            merged = {**raw.get("internal_model", {}), **internal.model_dump(mode="json", exclude_unset=True)}
            changes["internal_model"] = ModelConfig.model_validate(merged).model_dump(
                mode="json", exclude_unset=True
            )
        edit_toml_file(path, changes, PersonaSettings)
        return self.load(slug)

    def seed_from(self, shipped: Path, already_seeded: list[str]) -> list[str]:
        """Copy shipped personas that this data dir has never had. Returns the slugs now seeded.

        A persona is copied once: an existing folder is never overwritten, and one the user deleted
        (its slug is in already_seeded) does not come back.
        """
        copied: list[str] = []
        if not shipped.is_dir():
            return copied
        self.root.mkdir(parents=True, exist_ok=True)
        for src in sorted(shipped.iterdir()):
            if not (src / SETTINGS_FILE).is_file() or src.name in already_seeded:
                continue
            dest = self.root / src.name
            if not dest.exists():
                shutil.copytree(src, dest, ignore=shutil.ignore_patterns(MEMORY_FILE + "*", "__pycache__"))
            copied.append(src.name)
        return copied

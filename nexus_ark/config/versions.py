"""config.toml's schema versions: a file from an older Nexus Ark is moved forward on disk (a copy of it kept
first, beside it), and a file from a newer one is refused in words, never rewritten. Migrations are
append-only: one function per version step, registered in MIGRATIONS in order."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions
from pydantic import ValidationError
from tomlkit.toml_document import TOMLDocument

from nexus_ark.config.app_settings import SETTINGS_VERSION, STATE_KEYS, AppSettings, AppState
from nexus_ark.config.toml_files import (
    FIX_IN_EDITOR,
    describe_validation_error,
    load_toml_model,
    model_from_toml,
    read_toml,
    replace_file,
    save_toml_model,
    write_text_atomically,
)
from nexus_ark.errors import ConfigError
from nexus_ark.notices import notice

log = logging.getLogger(__name__)


@dataclass
class Moving:
    """One migration's work: config.toml's document (edited in place, comments kept) and the state the
    step moves out of it."""

    doc: TOMLDocument
    state: dict[str, Any]


def v1_state_apart(moving: Moving) -> None:
    """Version 1 kept the app's own memory (last persona, closed notices, seeded personas, the first start
    done) among the preferences: it moves to state.toml."""
    for key in STATE_KEYS:
        if key in moving.doc:
            moving.state[key] = moving.doc.unwrap()[key]
            del moving.doc[key]


# MIGRATIONS[n - 1] moves a file of version n to version n + 1. Append only.
MIGRATIONS: list[Callable[[Moving], None]] = [v1_state_apart]
assert len(MIGRATIONS) == SETTINGS_VERSION - 1, "one migration per version step"


def file_version(path: Path, raw: dict[str, Any]) -> int:
    """The schema version a config.toml says it has (1 where it says none: files before versions)."""
    version = raw.get("schema_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ConfigError(
            notice(
                "{path} has invalid settings:\n  schema_version: must be a whole number from 1 (got {value})",
                path=str(path),
                value=repr(version)[:40],
            ),
            hint=FIX_IN_EDITOR,
        )
    return version


def refuse_newer(path: Path, raw: dict[str, Any] | None = None) -> int:
    """The file's version; a file written by a newer Nexus Ark is refused, and left as it is."""
    if raw is None:
        raw = read_toml(path) if path.exists() else {}
    version = file_version(path, raw)
    if version > SETTINGS_VERSION:
        raise ConfigError(
            notice(
                "{path} was written by a newer version of Nexus Ark (settings version {found}; this "
                "version reads up to {known}).",
                path=str(path),
                found=version,
                known=SETTINGS_VERSION,
            ),
            hint=notice("Update Nexus Ark to open it; nothing was changed or overwritten."),
        )
    return version


def load_app_settings(path: Path) -> AppSettings:
    """config.toml's preferences; a file written by a newer Nexus Ark is refused in words. An older file
    reads as it is (its state keys are not preferences); `open_app_files` moves it forward on disk."""
    if not path.exists():
        return AppSettings()
    raw = read_toml(path)
    refuse_newer(path, raw)
    return model_from_toml(path, raw, AppSettings)


def load_app_state(path: Path) -> AppState:
    return load_toml_model(path, AppState)


def open_app_files(config: Path, state: Path) -> tuple[AppSettings, AppState]:
    """Both files as the app reads them at start: an older config.toml is moved forward first (a copy of
    the old file kept as config.v<N>.toml beside it), a missing one is written with its version only.
    Nothing is written when either file is unreadable, invalid or newer than this version."""
    if not config.exists():  # a first start: the file to edit is there, saying its version
        write_text_atomically(config, f"schema_version = {SETTINGS_VERSION}\n")
    raw = read_toml(config)
    version = refuse_newer(config, raw)
    if version < SETTINGS_VERSION:
        migrate(config, state, version)
    return load_app_settings(config), load_app_state(state)


def migrate(config: Path, state: Path, version: int) -> None:
    """Move config.toml from `version` to this one. Validated whole before anything is written; then the
    old file is copied aside, state.toml is written, and config.toml is replaced last. If a write fails,
    state.toml is put back as it was and config.toml is untouched: the next start tries again."""
    text = config.read_text(encoding="utf-8")
    try:
        doc = tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as exc:  # tomllib read it: tomlkit's stricter corner cases
        raise ConfigError(
            notice("{path} is not valid TOML: {problem}.", path=str(config), problem=str(exc)),
            hint=FIX_IN_EDITOR,
        ) from exc
    moving = Moving(doc, load_app_state(state).model_dump())
    for step in MIGRATIONS[version - 1 :]:
        step(moving)
    doc["schema_version"] = SETTINGS_VERSION
    try:
        AppSettings.model_validate(doc.unwrap())
        new_state = AppState.model_validate(moving.state)
    except ValidationError as exc:
        raise ConfigError(
            describe_validation_error(config, exc),
            hint=notice("Fix the fields named above; nothing was changed or overwritten."),
        ) from exc
    backup = config.with_name(f"{config.stem}.v{version}{config.suffix}")
    previous_state = state.read_bytes() if state.exists() else None
    try:
        replace_file(backup, text.encode("utf-8"))
        save_toml_model(state, new_state)
        replace_file(config, tomlkit.dumps(doc).encode("utf-8"))
    except (OSError, ConfigError) as exc:
        _put_back(state, previous_state)
        problem = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise ConfigError(
            notice(
                "Cannot move {path} to this version's settings: {problem}.", path=str(config), problem=problem
            ),
            hint=notice("Nothing was changed; the next start tries again."),
        ) from exc
    log.info(
        "moved %s from settings version %d to %d (the old file: %s)",
        config,
        version,
        SETTINGS_VERSION,
        backup,
    )


def _put_back(state: Path, previous: bytes | None) -> None:
    try:
        if previous is None:
            state.unlink(missing_ok=True)
        else:
            replace_file(state, previous)
    except OSError as exc:  # the state file is the app's own: at worst it is written again next start
        log.warning("could not put %s back: %s", state, exc.strerror)

"""App settings (config.toml) and the one way we read and write TOML settings files."""

from __future__ import annotations

import os
import tempfile
import tomllib
from pathlib import Path
from typing import Literal, TypeVar

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from nexus_ark.errors import ConfigError
from nexus_ark.model_config import ModelConfig

M = TypeVar("M", bound=BaseModel)


class AppSettings(BaseModel):
    """What the app remembers between runs. Never secrets: keys live in the OS keyring or ${ENV}."""

    model_config = ConfigDict(extra="ignore")

    language: Literal["auto", "en", "ja"] = "auto"
    last_persona: str = ""
    # Shipped personas already copied into this data dir; a persona the user deleted stays deleted.
    seeded_personas: list[str] = Field(default_factory=list)
    stream_coalesce_ms: int = Field(default=40, ge=10, le=500)
    # Defaults for personas whose persona.toml leaves the model spec empty.
    chat_model: ModelConfig = Field(default_factory=lambda: ModelConfig(spec="bundled"))
    # What turns memories into vectors: "bundled" (multilingual-e5-small) or a spec like the models'.
    # Changing it re-embeds every memory in the background, into the new model's own index.
    embedder: ModelConfig = Field(default_factory=lambda: ModelConfig(spec="bundled"))
    internal_model: ModelConfig | None = None


def describe_validation_error(path: Path, exc: ValidationError) -> str:
    problems = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or "(top level)"
        value = err.get("input")
        shown = f" (got {value!r})" if value is not None and not isinstance(value, dict) else ""
        problems.append(f"  {field}: {err['msg']}{shown}")
    return f"{path} has invalid settings:\n" + "\n".join(problems)


def load_toml_model(path: Path, model: type[M]) -> M:
    """Read a TOML file into a pydantic model; a missing file gives the defaults."""
    if not path.exists():
        return model()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text: {exc.reason}.", hint="Save it as UTF-8.") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid TOML: {exc}.",
            hint="Fix the line named above in a text editor; nothing was changed or overwritten.",
        ) from exc
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror}.") from exc
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(
            describe_validation_error(path, exc),
            hint="Fix the fields named above; nothing was changed or overwritten.",
        ) from exc


def save_toml_model(path: Path, data: BaseModel) -> None:
    """Write atomically: a full disk or a crash leaves the previous file whole."""
    text = tomli_w.dumps(data.model_dump(mode="json", exclude_none=True))
    tmp: Path | None = None
    try:
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
        tmp = Path(name)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise ConfigError(
            f"Cannot save {path}: {exc.strerror}.", hint="The previous file is unchanged."
        ) from exc


def load_app_settings(path: Path) -> AppSettings:
    return load_toml_model(path, AppSettings)

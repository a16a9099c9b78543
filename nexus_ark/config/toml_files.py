"""The one way we read and write TOML settings files (config.toml, state.toml, persona.toml): refusals that
name the file, the line and the field; atomic writes; edits that keep the person's comments."""

from __future__ import annotations

import os
import re
import tempfile
import tomllib
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import tomli_w
import tomlkit
import tomlkit.exceptions
from pydantic import BaseModel, ValidationError
from tomlkit.container import Container
from tomlkit.items import AoT, InlineTable, Table

from nexus_ark.errors import ConfigError
from nexus_ark.notices import Joined, Notice, joined, notice, validation_message

M = TypeVar("M", bound=BaseModel)


def one_line_name(value: str) -> str:
    """A name shown on one line (a persona's, the person's): no control characters; returned stripped.
    Callers decide whether empty ("not set") is allowed."""
    if any(unicodedata.category(ch) in ("Cc", "Zl", "Zp") for ch in value):
        raise ValueError(notice("must be one line, without tabs, newlines or other control characters"))
    return value.strip()


# Fields whose value is a secret: a refusal shows at most its first 4 characters (issue 23: a key typed into
# persona.toml was quoted whole on stderr and twice in the log people attach to bug reports).
SECRET_FIELDS = frozenset({"api_key", "key", "token", "password", "secret"})


SHOWN_MAX = 80  # characters of a wrong value quoted in a refusal: a 20,000-item list is not quoted whole


def _shown(value: object, *, secret: bool = False) -> str:
    if value is None or isinstance(value, dict):
        return ""
    try:
        text = str(value) if secret else repr(value)
    except ValueError:  # a TOML hexadecimal integer of 5,000 digits reads: int() limits only decimal text
        return notice(" (got an integer of more than 4,300 digits)")
    if secret:
        return notice(" (got {start}…, {count} characters)", start=repr(text[:4]), count=len(text))
    if isinstance(value, str) and len(value) > 40:
        return notice(" (got {count} characters: {start}…)", count=len(value), start=repr(value[:30]))
    return notice(" (got {value})", value=text if len(text) <= SHOWN_MAX else text[: SHOWN_MAX - 1] + "…")


def validation_problems(exc: ValidationError) -> list[Notice]:
    """One line per problem: the field, what is wrong in words (limits included) and the value given.
    Pydantic's own words stay English; our validators' words are notices the window translates."""
    problems = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or notice("(top level)")
        problems.append(
            notice(
                "{field}: {problem}{got}",
                field=field,
                problem=validation_message(err),
                got=_shown(
                    err.get("input"), secret=str(err["loc"][-1] if err["loc"] else "") in SECRET_FIELDS
                ),
            )
        )
    return problems


def problem_list(exc: ValidationError, sep: str = "; ") -> Joined:
    """The problems on one line (or, with sep="\n  ", one indented line each)."""
    return joined(validation_problems(exc), sep)


def describe_validation_error(path: Path, exc: ValidationError) -> Notice:
    return notice(
        "{path} has invalid settings:\n  {problems}", path=str(path), problems=problem_list(exc, "\n  ")
    )


FIX_IN_EDITOR = notice("Fix the line named above in a text editor; nothing was changed or overwritten.")


def toml_loads(text: str) -> dict[str, Any]:
    """tomllib.loads, failing only with TOMLDecodeError: tomllib itself gives up with RecursionError on
    arrays or tables nested about a thousand deep and with ValueError on an integer of more than 4,300
    digits, and either would otherwise end every command that reads the file with a traceback."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raise
    except RecursionError:
        raise tomllib.TOMLDecodeError(
            notice(
                "values nested too deeply to read (at line {line})",
                line=_line_of_depth(text, _DEEP),
            )
        ) from None
    except ValueError:
        long_number = _LONG_NUMBER.search(text)
        raise tomllib.TOMLDecodeError(
            notice(
                "a number too long to read, more than 4,300 digits (at line {line})",
                line=text.count("\n", 0, long_number.start()) + 1 if long_number else "?",
            )
        ) from None


def unreadable_json(exc: RecursionError | ValueError) -> Notice:
    """Why JSON text that is valid JSON still cannot be read into values: Python's parser gives up on
    arrays or objects nested about a thousand deep (RecursionError) and on an integer of more than 4,300
    digits (ValueError), as tomllib does (see toml_loads). Said the same way by every JSON import."""
    if isinstance(exc, RecursionError):
        return notice("its values are nested too deeply to read (about a thousand levels or more)")
    return notice("it holds a number too long to read (more than 4,300 digits)")


_LONG_NUMBER = re.compile(r"[0-9][0-9_]{4300,}")
_DEEP = 200  # arrays or inline tables this deep are named (tomllib gives up a few hundred levels later)


def _line_of_depth(text: str, depth: int) -> int | str:
    """The line where brackets outside strings first open `depth` deep ("?" if they never do)."""
    level, quote, line, comment = 0, "", 1, False
    for char in text:
        if char == "\n":
            line, comment = line + 1, False
        if comment:
            continue
        if quote:
            quote = "" if char == quote else quote
        elif char == "#":
            comment = True
        elif char in "\"'":
            quote = char
        elif char in "[{":
            level += 1
            if level >= depth:
                return line
        elif char in "]}":
            level -= 1
    return "?"


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's values; unreadable bytes, invalid TOML or a failed read are refused naming the file
    (and the line, where TOML says which)."""
    try:
        return toml_loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(
            notice("{path} is not UTF-8 text: {problem}.", path=str(path), problem=exc.reason),
            hint=notice("Save it as UTF-8."),
        ) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            notice("{path} is not valid TOML: {problem}.", path=str(path), problem=str(exc)),
            hint=FIX_IN_EDITOR,
        ) from exc
    except OSError as exc:
        raise ConfigError(cannot_read(path, exc.strerror)) from exc


def load_toml_model(path: Path, model: type[M]) -> M:
    """Read a TOML file into a pydantic model; a missing file gives the defaults."""
    if not path.exists():
        return model()
    return model_from_toml(path, read_toml(path), model)


def model_from_toml(path: Path, raw: dict[str, Any], model: type[M]) -> M:
    """A file's values validated into `model`; a refusal names the file and each field."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        newer = any(e["type"] == "extra_forbidden" for e in exc.errors())
        raise ConfigError(
            describe_validation_error(path, exc),
            hint=notice(
                "A setting this version does not know may have been written by a newer version of Nexus "
                "Ark: update Nexus Ark, or remove that setting. Fix the fields named above; nothing was "
                "changed or overwritten."
            )
            if newer
            else notice("Fix the fields named above; nothing was changed or overwritten."),
        ) from exc


def cannot_read(path: Path, problem: object) -> Notice:
    return notice("Cannot read {path}: {problem}.", path=str(path), problem=str(problem))


def save_toml_model(path: Path, data: BaseModel) -> None:
    """Write atomically: a full disk or a crash leaves the previous file whole. Top-level settings this
    version does not know (written by a newer Nexus Ark) are kept as they were, not dropped."""
    values = data.model_dump(mode="json", exclude_none=True)
    try:
        existing = toml_loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, tomllib.TOMLDecodeError):
        existing = {}
    known = set(type(data).model_fields)
    values.update({k: v for k, v in existing.items() if k not in known})
    _write_atomically(path, tomli_w.dumps(values))


def edit_toml_file(path: Path, changes: Mapping[str, Any], model: type[M]) -> M:
    """Change some settings in a TOML file the person may have edited by hand, keeping the rest as written.

    Comments, key order and formatting of untouched keys survive. A mapping in `changes` becomes the whole
    content of that table (its keys not named are removed), None removes a key, anything else sets it.
    The result is validated with `model` before anything is written; the validated settings are returned.
    """
    try:
        doc = tomlkit.parse(path.read_text(encoding="utf-8")) if path.exists() else tomlkit.document()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(cannot_read(path, exc)) from exc
    except tomlkit.exceptions.ParseError as exc:
        raise ConfigError(
            notice("{path} is not valid TOML: {problem}.", path=str(path), problem=str(exc)),
            hint=FIX_IN_EDITOR,
        ) from exc
    for key, value in changes.items():
        _sync(doc, key, value, top=True)
    try:
        validated = model.model_validate(doc.unwrap())
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(path, exc), hint=notice("Nothing was written.")) from exc
    _write_atomically(path, tomlkit.dumps(doc))
    return validated


def _sync(container: Container | Table | InlineTable, key: str, value: Any, *, top: bool = False) -> None:
    if value is None:
        if key in container:
            del container[key]
        return
    if isinstance(value, Mapping):
        current = container.get(key)
        if not isinstance(current, Table | InlineTable):
            # A new table: [name] at the top level, name = { ... } inside another table.
            container[key] = tomlkit.table() if top else tomlkit.inline_table()
            current = container[key]
        for old in [k for k in current if k not in value]:
            del current[old]
        for sub_key, sub_value in value.items():
            _sync(current, sub_key, sub_value)
        return
    # Only a changed value is written, so an unchanged one keeps its spelling (1_000, 'single quotes').
    if key not in container or container[key] != value:
        container[key] = _inline_tables(value) if not isinstance(container.get(key), AoT) else value


def _inline_tables(value: Any) -> Any:
    """A list of tables is written as `key = [{...}, ...]`, one per line, inside the table it belongs
    to ([[table.key]] sections would be moved to the file's end); a file already using [[...]] keeps it."""
    if not (isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value)):
        return value
    array = tomlkit.array()
    for entry in value:
        table = tomlkit.inline_table()
        table.update(entry)
        array.append(table)
    return array.multiline(True)


def write_text_atomically(path: Path, text: str) -> None:
    """Replace a text file whole or not at all (a full disk or a crash leaves the previous one)."""
    _write_atomically(path, text)


def replace_file(path: Path, data: bytes) -> None:
    """Write `path` whole or not at all, byte for byte (no newline translation): a temporary file beside it,
    fsync, rename. A full disk or a crash leaves the previous file; an OSError is raised as it came, with
    the temporary file removed (callers say what failed in their own words)."""
    tmp: Path | None = None
    try:
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
        tmp = Path(name)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise


def _write_atomically(path: Path, text: str) -> None:
    try:
        replace_file(path, text.encode("utf-8"))
    except OSError as exc:
        raise ConfigError(
            notice("Cannot save {path}: {problem}.", path=str(path), problem=exc.strerror),
            hint=notice("The previous file is unchanged."),
        ) from exc

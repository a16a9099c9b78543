"""Which MCP servers a persona may use: the `mcpServers` JSON that Claude Desktop, LM Studio and Cursor
write, kept app-wide (<data>/mcp.json) and per persona (personas/<name>/mcp.json; a persona's server of the
same name wins). Secrets in an imported server's environment or headers go to the OS keyring and the file
keeps a reference ("keyring:nexus-ark/mcp/<server>/<name>"), as API keys do."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from nexus_ark.config import one_line_name, problem_list, unreadable_json, write_text_atomically
from nexus_ark.errors import ConfigError
from nexus_ark.model_config import env_reference
from nexus_ark.notices import Notice, notice

MCP_FILE = "mcp.json"
# Names whose value is a secret: a token in a header or a variable; kept in the keyring, never in the file.
_SECRET_NAME = re.compile(r"key|token|secret|passw|auth|bearer|credential|cookie|session", re.IGNORECASE)
_SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
Transport = Literal["stdio", "http", "sse"]


class ServerConfig(BaseModel):
    """One server, as the mcpServers JSON writes it: a command to start (stdio) or a URL (streamable HTTP,
    or SSE where a server speaks only that). `useWhen` is ours: when the persona should reach for it."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    command: str = ""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str = ""
    url: str = ""
    headers: dict[str, str] = Field(default_factory=dict)
    type: str = ""  # "stdio", "http", "streamable-http", "streamableHttp", "sse" as the apps write it
    use_when: str = Field(default="", alias="useWhen", max_length=300)
    disabled: bool = False
    timeout_s: float = Field(default=30.0, gt=0, le=600, alias="timeoutSeconds")

    @field_validator("use_when")
    @classmethod
    def one_line_hint(cls, value: str) -> str:
        return one_line_name(value)

    @model_validator(mode="after")
    def command_or_url(self) -> ServerConfig:
        if bool(self.command) == bool(self.url):
            raise ValueError(
                notice('give either "command" (a program to start) or "url" (a server to reach)')
            )
        if self.url and not re.match(r"^https?://[^\s/]+", self.url):
            raise ValueError(notice('"url" must start with http:// or https://'))
        if self.transport() == "stdio" and self.url:
            raise ValueError(notice('type "stdio" needs "command", not "url"'))
        return self

    def transport(self) -> Transport:
        kind = self.type.lower().replace("-", "").replace("_", "")
        if kind == "sse":
            return "sse"
        if kind == "stdio" or (not kind and self.command):
            return "stdio"
        return "http"

    def for_file(self) -> dict[str, Any]:
        """As the mcpServers JSON writes it (camelCase keys, defaults left out)."""
        return self.model_dump(by_alias=True, exclude_defaults=True)


class ServersFile(BaseModel):
    model_config = ConfigDict(extra="ignore")

    servers: dict[str, ServerConfig] = Field(default_factory=dict, alias="mcpServers")

    @field_validator("servers")
    @classmethod
    def named_well(cls, value: dict[str, ServerConfig]) -> dict[str, ServerConfig]:
        for name in value:
            if not _SERVER_NAME.match(name):
                raise ValueError(
                    notice(
                        "server name {name} must be letters, digits, '.', '_' or '-' (64 at most)",
                        name=repr(name[:40]),
                    )
                )
        return value


def parse_servers(text: str, source: str) -> dict[str, ServerConfig]:
    """The servers of an mcpServers JSON document (a Claude Desktop config holds other keys: they are
    left alone). Refused naming `source` and the field: not JSON, too deep, or a server that does not fit."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            notice(
                "{path} is not valid JSON: {problem} (line {line}).",
                path=source,
                problem=exc.msg,
                line=exc.lineno,
            ),
            hint=notice("Nothing was changed."),
        ) from exc
    except (RecursionError, ValueError) as exc:
        raise ConfigError(
            notice("{path} cannot be read: {problem}.", path=source, problem=unreadable_json(exc))
        ) from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("mcpServers"), dict):
        raise ConfigError(
            notice('{path} has no "mcpServers" object: it is not an MCP servers configuration.', path=source),
            hint=notice('It should read {{"mcpServers": {{"name": {{"command": "...", "args": [...]}}}}}}.'),
        )
    try:
        return ServersFile.model_validate(raw).servers
    except ValidationError as exc:
        raise ConfigError(
            notice("{path} has invalid MCP servers: {problems}.", path=source, problems=problem_list(exc)),
            hint=notice("Fix the fields named above; nothing was changed."),
        ) from exc


def read_servers(path: Path) -> dict[str, ServerConfig]:
    """A stored mcp.json's servers ({} where there is none)."""
    if not path.is_file():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(notice("Cannot read {path}: {problem}.", path=str(path), problem=str(exc))) from exc
    return parse_servers(text, str(path))


def write_servers(path: Path, servers: Mapping[str, ServerConfig]) -> None:
    body = {"mcpServers": {name: server.for_file() for name, server in sorted(servers.items())}}
    write_text_atomically(path, json.dumps(body, ensure_ascii=False, indent=2) + "\n")


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def is_reference(value: str) -> bool:
    return bool(env_reference(value)) or value.startswith("keyring:")


def secrets_to_keyring(
    name: str, server: ServerConfig, store: Callable[[str, str], str]
) -> tuple[ServerConfig, list[str]]:
    """The server with every secret-looking value of its env and headers replaced by a keyring reference
    (`store(entry, value)` saves one and returns the reference), and the names moved. Values that already
    are references (${ENV}, keyring:…) stay."""
    moved: list[str] = []

    def keep(kind: str, values: dict[str, str]) -> dict[str, str]:
        kept = {}
        for key, value in values.items():
            header_secret = kind == "headers" and key.lower() == "authorization"
            if (header_secret or is_secret_name(key)) and value and not is_reference(value):
                kept[key] = store(f"mcp/{name}/{kind}/{key}", value)
                moved.append(f"{kind}.{key}")
            else:
                kept[key] = value
        return kept

    updated = server.model_copy(
        update={"env": keep("env", server.env), "headers": keep("headers", server.headers)}
    )
    return updated, moved


def describe(name: str, server: ServerConfig) -> Notice:
    """One line for a list: where it runs, never a secret (values of env and headers are not shown)."""
    where = " ".join([server.command, *shown_args(server.args)]) if server.command else server.url
    return notice("{name} ({transport}): {where}", name=name, transport=server.transport(), where=where)


Scope = Literal["app", "persona"]


def servers_for(app_file: Path, persona_folder: Path | None) -> dict[str, tuple[ServerConfig, Scope]]:
    """The servers a persona may use: the app's, then its own (a server of the same name replaces the
    app's; one marked "disabled" in either place is left out)."""
    merged: dict[str, tuple[ServerConfig, Scope]] = {n: (s, "app") for n, s in read_servers(app_file).items()}
    if persona_folder is not None:
        merged.update({n: (s, "persona") for n, s in read_servers(persona_folder / MCP_FILE).items()})
    return {name: entry for name, entry in sorted(merged.items()) if not entry[0].disabled}


def add_servers(
    path: Path, new: Mapping[str, ServerConfig], store: Callable[[str, str], str]
) -> tuple[list[str], list[str]]:
    """Add (or replace) servers in a stored mcp.json, their secrets moved to the keyring first. Returns
    the names added and the secret fields moved ("name: env.API_KEY"). Nothing is written if a secret
    cannot be stored."""
    servers = read_servers(path)
    moved: list[str] = []
    for name, server in new.items():
        kept, fields = secrets_to_keyring(name, server, store)
        servers[name] = kept
        moved.extend(f"{name}: {f}" for f in fields)
    write_servers(path, servers)
    return sorted(new), moved


def remove_server(path: Path, name: str) -> bool:
    servers = read_servers(path)
    if servers.pop(name, None) is None:
        return False
    write_servers(path, servers)
    return True


def shown_args(args: list[str]) -> list[str]:
    """Arguments as a list may show them: the value after a secret-looking flag, or of a secret-looking
    NAME=VALUE, is left out."""
    shown: list[str] = []
    for i, arg in enumerate(args):
        flag, eq, _ = arg.partition("=")
        if eq and is_secret_name(flag) and not is_reference(arg):
            shown.append(f"{flag}=…")
        elif i and args[i - 1].startswith("-") and is_secret_name(args[i - 1]) and not is_reference(arg):
            shown.append("…")
        else:
            shown.append(arg)
    return shown

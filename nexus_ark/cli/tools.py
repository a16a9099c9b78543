"""`nexus-ark tools`: the MCP servers a persona may use, their tools, the person's decisions, and a call
to test a server without a model. stdout is the answer; notes and refusals go to stderr."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nexus_ark.cli.line_input import read_answer
from nexus_ark.errors import ConfigError
from nexus_ark.mcp_tools.approvals import decide, load_decisions, split_key
from nexus_ark.mcp_tools.faults import ToolFaultError, ToolInfo
from nexus_ark.mcp_tools.hub import McpHub
from nexus_ark.mcp_tools.offer import Approval, ApprovalRequest
from nexus_ark.mcp_tools.servers import (
    MCP_FILE,
    ServerConfig,
    add_servers,
    describe,
    parse_servers,
    remove_server,
    servers_for,
)
from nexus_ark.notices import notice
from nexus_ark.paths import DataLayout
from nexus_ark.personas.store import PersonaStore
from nexus_ark.providers.secrets import resolve_key, store_key


def add_tools_parser(sub: Any) -> None:
    tools = sub.add_parser("tools", help="MCP servers and their tools: list, add, import, allow, deny, call")
    tsub = tools.add_subparsers(dest="tools_command", metavar="ACTION", required=True)
    listing = tsub.add_parser("list", help="each server and its tools, with the persona's decision for each")
    listing.add_argument("--persona", help="whose servers and decisions (default: the app's servers only)")
    listing.add_argument("--json", action="store_true", help="one JSON object")
    add = tsub.add_parser("add", help="add a server, app-wide or for one persona")
    add.add_argument("name", help="the server's name (letters, digits, '.', '_', '-')")
    where = add.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--command",
        dest="program",
        metavar="COMMAND",
        help='the program and its arguments, e.g. "npx -y @scope/server /path"',
    )
    where.add_argument("--url", help="a streamable HTTP (or SSE) server's address")
    add.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="for a command")
    add.add_argument("--header", action="append", default=[], metavar="NAME=VALUE", help="for a URL")
    add.add_argument("--sse", action="store_true", help="the URL speaks only SSE (older servers)")
    add.add_argument("--use-when", default="", help="when the persona should reach for it, in a sentence")
    add.add_argument("--persona", help="add it to this persona only")
    remove = tsub.add_parser("remove", help="remove a server (app-wide, or a persona's own)")
    remove.add_argument("name")
    remove.add_argument("--persona", help="remove this persona's own server of that name")
    imp = tsub.add_parser("import", help="add the servers of an mcpServers JSON (Claude Desktop, LM Studio…)")
    imp.add_argument("file", type=Path)
    imp.add_argument("--persona", help="add them to this persona only")
    for verb, text in (("allow", "always run it"), ("deny", "never run it"), ("ask", "ask every time")):
        decision = tsub.add_parser(verb, help=f"{text} for a persona")
        decision.add_argument("tool", metavar="SERVER:TOOL")
        decision.add_argument("--persona", required=True)
    call = tsub.add_parser("call", help="call a tool with JSON arguments and print its result (no model)")
    call.add_argument("tool", metavar="SERVER:TOOL")
    call.add_argument("--args", default="{}", help="the arguments as a JSON object")
    call.add_argument("--persona", help="use this persona's servers too")
    call.add_argument(
        "--json", action="store_true", help="one JSON object with the text and whether it failed"
    )


def run_tools_command(layout: DataLayout, args: argparse.Namespace) -> int:
    folder = None
    if getattr(args, "persona", None):
        store = PersonaStore(layout.personas_dir)
        folder = store.load(store.slug_for(args.persona)).folder  # an unknown persona is refused in words
    command = args.tools_command
    if command in ("allow", "deny", "ask"):
        assert folder is not None
        try:
            split_key(args.tool)
        except ValueError as exc:
            return _refuse(str(exc))
        decision = {"allow": "always", "deny": "never", "ask": "ask"}[command]
        decide(folder, args.tool, decision)  # type: ignore[arg-type]
        print(f"{args.tool}\t{decision}")
        return 0
    target = (folder / MCP_FILE) if folder is not None else layout.root / MCP_FILE
    if command == "add":
        return _add(target, args)
    if command == "import":
        return _import(target, args.file)
    if command == "remove":
        if not remove_server(target, args.name):
            return _refuse(notice("No MCP server named {name} in {path}.", name=args.name, path=str(target)))
        print(args.name)
        return 0
    hub = McpHub(_resolve)
    try:
        if command == "list":
            return _list(hub, layout, folder, as_json=args.json)
        return _call(hub, layout, folder, args)
    finally:
        hub.close()


def _resolve(reference: str) -> str:
    return resolve_key(reference) or ""


def _store(entry: str, value: str) -> str:
    return store_key(entry, value)


def _refuse(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def _pairs(values: list[str], what: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        name, eq, text = value.partition("=")
        if not eq or not name:
            raise ConfigError(
                notice("--{what} takes NAME=VALUE (got {value})", what=what, value=repr(name[:40]))
            )
        pairs[name] = text
    return pairs


def _add(target: Path, args: argparse.Namespace) -> int:
    try:
        if args.program:
            program, *rest = shlex.split(args.program) or [""]
            server = ServerConfig(
                command=program, args=rest, env=_pairs(args.env, "env"), useWhen=args.use_when
            )
        else:
            server = ServerConfig(
                url=args.url, headers=_pairs(args.header, "header"), type="sse" if args.sse else "http",
                useWhen=args.use_when,
            )  # fmt: skip
        parse_servers(
            json.dumps({"mcpServers": {args.name: server.for_file()}}), "--name"
        )  # the name's rules
        added, moved = add_servers(target, {args.name: server}, _store)
    except ValueError as exc:  # pydantic's ValidationError is one
        return _refuse(str(exc).splitlines()[-1] if "validation error" in str(exc) else str(exc))
    for field in moved:
        print(notice("note: {field} saved in the OS keyring", field=field), file=sys.stderr)
    print(f"{added[0]}\t{target}")
    return 0


def _import(target: Path, source: Path) -> int:
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            notice("Cannot read {path}: {problem}.", path=str(source), problem=str(exc))
        ) from exc
    servers = parse_servers(text, str(source))
    added, moved = add_servers(target, servers, _store)
    for field in moved:
        print(notice("note: {field} saved in the OS keyring", field=field), file=sys.stderr)
    for name in added:
        print(f"{name}\t{target}")
    return 0


def _list(hub: McpHub, layout: DataLayout, folder: Path | None, *, as_json: bool) -> int:
    decisions = load_decisions(folder) if folder is not None else None
    report: list[dict[str, Any]] = []
    for name, (server, scope) in servers_for(layout.root / MCP_FILE, folder).items():
        entry: dict[str, Any] = {
            "name": name, "scope": scope, "transport": server.transport(), "use_when": server.use_when,
            "where": str(describe(name, server)).split(": ", 1)[1], "tools": [],
        }  # fmt: skip
        try:
            for tool in hub.tools(name, server):
                decision = decisions.decision(name, tool.name) if decisions else None
                entry["tools"].append(
                    {"name": tool.name, "description": tool.description, "decision": decision}
                )
        except ToolFaultError as exc:
            entry["error"] = {"kind": exc.fault.kind, "message": str(exc.fault.message)}
        report.append(entry)
    if as_json:
        print(json.dumps({"servers": report}, ensure_ascii=False))
        return 0
    for entry in report:
        print(f"{entry['name']}\t{entry['scope']}\t{entry['transport']}\t{entry['where']}")
        if "error" in entry:
            print(f"  error\t{entry['error']['message']}")
        for tool in entry["tools"]:
            print(f"  {entry['name']}:{tool['name']}\t{tool['decision'] or '-'}\t{tool['description'][:100]}")
    return 0


def _call(hub: McpHub, layout: DataLayout, folder: Path | None, args: argparse.Namespace) -> int:
    try:
        server_name, tool_name = split_key(args.tool)
        arguments = json.loads(args.args)
    except (ValueError, RecursionError) as exc:
        return _refuse(notice("--args must be a JSON object: {problem}", problem=str(exc)[:200]))
    if not isinstance(arguments, dict):
        return _refuse(notice("--args must be a JSON object, like {example}", example='{"city": "Kyoto"}'))
    servers = servers_for(layout.root / MCP_FILE, folder)
    if server_name not in servers:
        known = ", ".join(servers) or notice("none")
        return _refuse(notice("No MCP server named {name} (known: {known}).", name=server_name, known=known))
    server = servers[server_name][0]
    try:
        tools = {t.name: t for t in hub.tools(server_name, server)}
        tool: ToolInfo | str = tools.get(tool_name, tool_name)
        outcome = hub.call(server_name, server, tool, arguments)
    except ToolFaultError as exc:
        return _refuse(str(exc.fault.message))
    if args.json:
        answer = {"text": outcome.text, "is_error": outcome.is_error, "structured": outcome.structured}
        print(json.dumps(answer, ensure_ascii=False))
    else:
        print(outcome.text)
    return 1 if outcome.is_error else 0


def terminal_asker(allowed: set[str], interactive: bool) -> Callable[[ApprovalRequest], Approval]:
    """How `chat` asks before an "ask" tool runs: on the terminal when there is one (stderr, so stdout
    stays the replies); piped, only the tools named with --allow-tool run, and the others are said once."""

    def ask(request: ApprovalRequest) -> Approval:
        key = request.tool.key
        if key in allowed:
            return "once"
        if not interactive:
            print(
                notice(
                    "note: {tool} asks before it runs and this chat is not on a terminal; it did not run "
                    "(--allow-tool {tool} lets it)",
                    tool=key,
                ),
                file=sys.stderr,
            )
            return "deny"
        shown = json.dumps(request.arguments, ensure_ascii=False)[:300]
        print(
            notice(
                "{persona} wants to run {tool} ({what}) with {arguments}.",
                persona=request.persona,
                tool=key,
                what=request.tool.description[:120] or "-",
                arguments=shown,
            ),
            file=sys.stderr,
        )
        print(notice("Allow it? [o]nce, [a]lways, [d]eny: "), end="", file=sys.stderr, flush=True)
        stopped = request.stopped
        typed = read_answer(stopped.is_set if stopped is not None else lambda: False)
        if typed is None:  # the turn was stopped while it asked: no one waits for the answer
            print(file=sys.stderr)
            return "deny"
        answer = typed.strip().lower()[:1]
        if answer == "o":
            return "once"
        return "always" if answer == "a" else "deny"  # anything else, or the end of input: not run

    return ask

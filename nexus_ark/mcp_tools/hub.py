"""The MCP servers this process talks to: started lazily on first use, on one asyncio loop with a thread of
its own (callers on any other thread block on a future with a deadline), stopped with the app, and started
again once after a crash. Every failure is a ToolFault: a turn goes on without the tool, never with a
traceback."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Coroutine
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

import jsonschema

from nexus_ark.mcp_tools.connect import START_TIMEOUT_S, Connection, Resolve, serve
from nexus_ark.mcp_tools.faults import ToolFaultError, ToolInfo, ToolOutcome, fault, timed_out
from nexus_ark.mcp_tools.results import outcome_of
from nexus_ark.mcp_tools.servers import ServerConfig
from nexus_ark.notices import notice

log = logging.getLogger(__name__)
T = TypeVar("T")
MAX_RESULT_CHARS = 4000  # what one tool result may put into the prompt
MAX_CRASHES = 2  # started again once after a crash; after the second, not until the app restarts
_CLOSED_CODE = -32000  # the SDK's CONNECTION_CLOSED: the server went away


class McpHub:
    """One per process. `tools(name, config)` and `call(name, config, tool, args)` block their caller (a
    worker or a turn's queue, never the UI thread) until the answer or the server's own timeout."""

    def __init__(self, resolve: Resolve) -> None:
        self._resolve = resolve
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._connections: dict[str, Connection] = {}

    def tools(self, name: str, config: ServerConfig) -> list[ToolInfo]:
        listed = self._run(name, "", config, self._list(name, config))
        return [
            ToolInfo(name, tool.name, (tool.description or "").strip(), dict(tool.input_schema or {}))
            for tool in listed
        ]

    def call(
        self, name: str, config: ServerConfig, tool: ToolInfo | str, arguments: dict[str, Any]
    ) -> ToolOutcome:
        """Run a tool. Arguments that do not fit the tool's input schema are refused before the server
        sees them (a "schema" fault naming the problem); the result is cut to MAX_RESULT_CHARS."""
        if isinstance(tool, ToolInfo):
            check_arguments(tool, arguments)
            tool = tool.name
        result = self._run(name, tool, config, self._call(name, config, tool, arguments))
        return outcome_of(result, MAX_RESULT_CHARS)

    def running(self) -> list[str]:
        return sorted({c.name for c in self._connections.values() if c.alive})

    def close(self) -> None:
        """Stop every server (each gets a few seconds to end) and the loop's thread."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._close_all(), loop).result(timeout=10)
        except Exception as exc:  # closing goes on whatever one server does
            log.warning("stopping MCP servers: %s", exc)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        loop.close()

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="mcp-servers", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def _run(self, name: str, tool: str, config: ServerConfig, coro: Coroutine[Any, Any, T]) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self._ensure_loop())
        try:
            return future.result(timeout=config.timeout_s + START_TIMEOUT_S)
        except FutureTimeout:
            future.cancel()
            raise timed_out(name, tool, config.timeout_s) from None

    async def _connection(self, name: str, config: ServerConfig) -> Connection:
        key = f"{name}\n{config.model_dump_json()}"
        conn = self._connections.get(key)
        if conn is not None and conn.error is not None:
            if conn.crashes + 1 >= MAX_CRASHES:
                raise fault(
                    "crash",
                    name,
                    "",
                    notice(
                        "The tool server {server} stopped twice; it is not started again until Nexus Ark "
                        "restarts.",
                        server=name,
                    ),
                )
            log.warning("starting MCP server %s again after: %s", name, conn.error)
            conn = Connection(name, config, crashes=conn.crashes + 1)
        if conn is None or conn.task is None:
            conn = conn or Connection(name, config)
            self._connections[key] = conn
            conn.task = asyncio.get_running_loop().create_task(serve(conn, self._resolve))
        try:
            await asyncio.wait_for(conn.ready.wait(), START_TIMEOUT_S)
        except TimeoutError:
            conn.closing.set()
            conn.error = conn.error or TimeoutError("no answer to the handshake")
            raise timed_out(name, "", START_TIMEOUT_S) from None
        if conn.error is not None or conn.client is None:
            raise _start_fault(name, conn.error)
        return conn

    async def _list(self, name: str, config: ServerConfig) -> list[Any]:
        conn = await self._connection(name, config)
        try:
            listed, cursor = [], None
            for _ in range(50):  # a paginator that never ends cannot hang the call
                page = await conn.client.list_tools(cursor=cursor)
                listed.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
            return listed
        except Exception as exc:
            raise _during_call(conn, name, "", exc) from exc

    async def _call(self, name: str, config: ServerConfig, tool: str, arguments: dict[str, Any]) -> Any:
        conn = await self._connection(name, config)
        try:
            return await conn.client.call_tool(tool, arguments, read_timeout_seconds=config.timeout_s)
        except Exception as exc:
            raise _during_call(conn, name, tool, exc) from exc

    async def _close_all(self) -> None:
        for conn in self._connections.values():
            conn.closing.set()
        tasks = [c.task for c in self._connections.values() if c.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=8)
        self._connections.clear()


def check_arguments(tool: ToolInfo, arguments: dict[str, Any]) -> None:
    """Refuse arguments the tool's own schema does not allow (said in words the model can act on)."""
    try:
        jsonschema.validate(arguments, tool.input_schema or {"type": "object"})
    except jsonschema.ValidationError as exc:
        where = ".".join(str(p) for p in exc.absolute_path) or notice("(the arguments)")
        raise fault(
            "schema",
            tool.server,
            tool.name,
            notice(
                "The arguments for {tool} do not fit its schema: {where}: {problem}.",
                tool=tool.key,
                where=where,
                problem=exc.message[:200],
            ),
        ) from None
    except jsonschema.SchemaError:
        log.warning("MCP tool %s has an invalid input schema; its arguments are not checked", tool.key)


def _start_fault(name: str, error: BaseException | None) -> ToolFaultError:
    if isinstance(error, ToolFaultError):
        return error
    problem = _plain(error) if error is not None else "no answer"
    return fault(
        "start",
        name,
        "",
        notice("The tool server {server} could not start: {problem}.", server=name, problem=problem),
    )


def _during_call(conn: Connection, name: str, tool: str, exc: Exception) -> ToolFaultError:
    """A call that failed: the server went away (a crash: started again at the next call), it took too
    long, or it answered something the protocol does not allow."""
    if isinstance(exc, ToolFaultError):
        return exc
    code = getattr(getattr(exc, "error", None), "code", None)
    if isinstance(exc, TimeoutError) or "timed out" in str(exc).lower():
        return timed_out(name, tool, conn.config.timeout_s)
    if code == _CLOSED_CODE or conn.error is not None or (conn.task is not None and conn.task.done()):
        conn.error = conn.error or exc
        return fault(
            "crash",
            name,
            tool,
            notice("The tool server {server} stopped: {problem}.", server=name, problem=_plain(exc)),
        )
    if code is not None:  # the server refused in protocol terms (an unknown tool, invalid parameters)
        return fault(
            "unknown_tool" if code == -32602 and "unknown" in str(exc).lower() else "garbage",
            name,
            tool,
            notice("The tool server {server} refused: {problem}.", server=name, problem=_plain(exc)),
        )
    return fault(
        "garbage",
        name,
        tool,
        notice(
            "The tool server {server} answered something unreadable: {problem}.",
            server=name,
            problem=_plain(exc),
        ),
    )


def _plain(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup) and error.exceptions:
        return _plain(error.exceptions[0])
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return (str(error) or type(error).__name__)[:300]

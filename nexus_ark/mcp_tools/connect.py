"""One MCP server's connection, held open by one task on the hub's loop (anyio's scopes must be left by
the task that entered them): stdio (a command, its stderr to our log), streamable HTTP, or SSE, through the
`mcp` SDK's Client with the classic initialize handshake every server speaks."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field
from typing import Any, TextIO
from urllib.parse import urlsplit

from nexus_ark.mcp_tools.servers import ServerConfig, is_reference

log = logging.getLogger(__name__)
Resolve = Callable[[str], str]  # a "keyring:…"/"${ENV}" reference to its value ("" where it has none)
START_TIMEOUT_S = 20.0  # a server that has not answered the handshake by then is not coming
STDERR_LINE_CHARS = 300  # a server's stderr line in our log, at most


@dataclass
class Connection:
    name: str
    config: ServerConfig
    crashes: int = 0  # how many times this server stopped before this connection
    client: Any = None
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    closing: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    error: BaseException | None = None

    @property
    def alive(self) -> bool:
        return self.client is not None and self.error is None and not (self.task and self.task.done())


async def serve(conn: Connection, resolve: Resolve) -> None:
    """Open the connection, say it is ready, and hold it until the hub closes it or the server goes away
    (then `conn.error` says why and the next call starts it again, once)."""
    from mcp import Client

    stderr = StderrToLog(conn.name) if not conn.config.url else None
    try:
        async with AsyncExitStack() as stack:
            transport = _transport(conn.config, resolve, stderr)
            # The handshake and listings wait up to START_TIMEOUT_S (a server may take seconds to start);
            # each call waits the server's own timeout (McpHub passes it).
            client = Client(transport, mode="legacy", read_timeout_seconds=START_TIMEOUT_S)
            conn.client = await stack.enter_async_context(client)
            conn.ready.set()
            await conn.closing.wait()
    except Exception as exc:  # whatever ended it is what the next call is told
        conn.error = exc
    except asyncio.CancelledError:
        conn.error = RuntimeError("stopped")
    finally:
        if conn.error is None and not conn.closing.is_set():
            conn.error = RuntimeError("the server closed the connection")
        conn.ready.set()
        if stderr is not None:
            stderr.close()


def _transport(config: ServerConfig, resolve: Resolve, stderr: StderrToLog | None) -> Any:
    if config.transport() == "stdio":
        from mcp.client.stdio import StdioServerParameters, stdio_client

        env = {key: resolve(value) if is_reference(value) else value for key, value in config.env.items()}
        params = StdioServerParameters(
            command=config.command, args=list(config.args), env=env or None, cwd=config.cwd or None
        )
        assert stderr is not None
        return stdio_client(params, errlog=stderr.writer)
    headers = {key: resolve(value) if is_reference(value) else value for key, value in config.headers.items()}
    if config.transport() == "sse":
        from mcp.client.sse import sse_client

        return sse_client(config.url, headers=headers, timeout=config.timeout_s)
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    loopback = (urlsplit(config.url).hostname or "") in ("127.0.0.1", "localhost", "::1")
    http = httpx2.AsyncClient(
        headers=headers,
        timeout=httpx2.Timeout(config.timeout_s, read=max(config.timeout_s, 60.0)),
        trust_env=not loopback,  # a proxy from the environment never stands between us and this machine
    )
    return streamable_http_client(config.url, http_client=http)


class StderrToLog:
    """A pipe whose write end is the server's stderr; a thread reads it and logs each line (cut short: a
    server may echo what it was given)."""

    def __init__(self, name: str) -> None:
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w")
        self._reader = os.fdopen(read_fd, "r", encoding="utf-8", errors="replace")
        self._thread = threading.Thread(
            target=self._pump, args=(name,), name=f"mcp-stderr-{name}", daemon=True
        )
        self._thread.start()

    def _pump(self, name: str) -> None:
        with self._reader:
            for line in self._reader:
                if line.strip():
                    log.info("MCP server %s: %s", name, line.rstrip()[:STDERR_LINE_CHARS])

    def close(self) -> None:
        with suppress(OSError):
            self.writer.close()

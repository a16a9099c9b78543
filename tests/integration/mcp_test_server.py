"""A real MCP server, written with the `mcp` SDK, for the tool tests: stdio by default, streamable HTTP on
127.0.0.1 with `--http PORT`. Every call it receives is appended to the file named by MCP_CALL_LOG (one
JSON line: the tool and its arguments), so a test can check on the server's side what reached it. `--sse PORT`
serves the older SSE transport."""

from __future__ import annotations

import json
import os
import sys
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("nexus-ark-test")


def _log(tool: str, **arguments: object) -> None:
    path = os.environ.get("MCP_CALL_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    _log("add", a=a, b=b)
    print(f"adding {a} and {b}", file=sys.stderr)
    return a + b


@server.tool()
def weather(city: str) -> str:
    """Today's weather in a city."""
    _log("weather", city=city)
    return f"Sunny in {city}, 21 degrees."


@server.tool()
def big(characters: int) -> str:
    """A long text of the given length."""
    _log("big", characters=characters)
    return "x" * characters


@server.tool()
def slow(seconds: float) -> str:
    """Answers after the given number of seconds."""
    _log("slow", seconds=seconds)
    time.sleep(seconds)
    return "done"


@server.tool()
def crash() -> str:
    """The server process dies."""
    _log("crash")
    os._exit(3)


@server.tool()
def garbage() -> str:
    """Writes lines that are not JSON-RPC to the protocol's stdout instead of answering."""
    _log("garbage")
    os.write(1, b"this is not JSON-RPC at all\n")
    os.write(1, b'{"jsonrpc": "2.0", "id": "nobody", "result": 12}\n')
    time.sleep(600)
    return "never"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif len(sys.argv) == 3 and sys.argv[1] == "--sse":  # the older transport some servers still speak
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()

"""What MCP tools are and what a call gave, as data the turn, the CLI and the window share; and the one way
a call fails: a typed ToolFault with words for the person."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from nexus_ark.notices import Notice, notice

FaultKind = Literal["start", "crash", "timeout", "garbage", "schema", "too_large", "unknown_tool", "denied"]


@dataclass(frozen=True)
class ToolFault:
    kind: FaultKind
    server: str
    tool: str
    message: Notice


class ToolFaultError(Exception):
    def __init__(self, fault: ToolFault) -> None:
        super().__init__(str(fault.message))
        self.fault = fault


def fault(kind: FaultKind, server: str, tool: str, message: Notice) -> ToolFaultError:
    return ToolFaultError(ToolFault(kind, server, tool, message))


def timed_out(server: str, tool: str, seconds: float) -> ToolFaultError:
    return fault(
        "timeout",
        server,
        tool,
        notice(
            "The tool server {server} did not answer within {seconds} s.",
            server=server,
            seconds=round(seconds),
        ),
    )


@dataclass(frozen=True)
class ToolInfo:
    """One tool a server offers, as it describes itself."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any]

    @property
    def key(self) -> str:
        return f"{self.server}:{self.name}"


@dataclass(frozen=True)
class ToolOutcome:
    """What a call gave: the text the model reads (cut to a limit, saying so), whether the server said the
    tool failed, and the structured result where the server gave one."""

    text: str
    is_error: bool = False
    cut_from: int = 0  # the full length where the text was cut, else 0
    structured: dict[str, Any] | None = None

"""The one place where what a client library raised becomes an error a person can act on.

Every network backend (Ollama through its client, LiteLLM, the embedders on either) hands its exceptions
here. Libraries wrap transport failures in their own types (LiteLLM reports a refused connection as an
HTTP 500-ish APIConnectionError), so the whole cause chain is read, by class name and status code: no
client library is imported here, and a library that is not installed cannot break the translation.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, SkipValidation

from nexus_ark.errors import (
    ModelNotInstalledError,
    ProviderError,
    ProviderHTTPError,
    ProviderProtocolError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    ToolsUnsupportedError,
)
from nexus_ark.notices import notice

PERSONA_SETTING = notice("the persona's model settings")
EMBEDDER_SETTING = notice("the app's embedder setting ([embedder] in config.toml)")

_TIMEOUTS = {"ReadTimeout", "WriteTimeout", "PoolTimeout", "TimeoutException", "APITimeoutError", "Timeout"}
_REFUSED = {"ConnectError", "ConnectTimeout", "ConnectionRefusedError"}
_CUT_OFF = {"RemoteProtocolError", "ReadError", "ConnectionResetError", "BrokenPipeError"}
_TRANSIENT = {"APIConnectionError", "ServiceUnavailableError", "InternalServerError", "RateLimitError"}


class Origin(BaseModel):
    """Who failed, in words, and where the person fixes it. The words are notices where they are ours
    (not validated, so they stay notices and the window translates them)."""

    model_config = ConfigDict(frozen=True)

    server: SkipValidation[
        str
    ]  # "Ollama at http://127.0.0.1:11434", "http://127.0.0.1:8000/v1", "provider openai"
    model: str
    setting: SkipValidation[str] = PERSONA_SETTING
    down: SkipValidation[str] = ""  # the sentence for a server that refuses connections, where one is known
    install: SkipValidation[str] = ""  # how to get a model the server lacks, where there is a way


def translate(exc: BaseException, origin: Origin) -> ProviderError:
    """A typed ProviderError (with a hint) for any exception a client library raised."""
    if isinstance(exc, ProviderError):
        return exc
    failure = _Failure(exc, cause_chain(exc))
    # Transport first: LiteLLM gives refused connections and stalls a status code of their own.
    return _transport_failure(failure, origin) or _server_refusal(failure, origin)


class _Failure:
    """What the cause chain of one exception says, read once: its classes' names, its text, the first
    HTTP error status in it."""

    def __init__(self, exc: BaseException, chain: list[BaseException]) -> None:
        self.exc = exc
        self.chain = chain
        self.names = {type(e).__name__ for e in chain}
        self.text = " ".join(str(e) for e in chain)
        self.status = next(
            (s for e in chain if isinstance(s := getattr(e, "status_code", None), int) and s >= 400), None
        )


def _transport_failure(failure: _Failure, origin: Origin) -> ProviderError | None:
    """The connection refused, timed out or cut, or something other than a model's stream answered."""
    names, text, chain, where = failure.names, failure.text, failure.chain, origin.server
    if names & _REFUSED or "Connection refused" in text or _is_plain_connection_error(chain):
        return ProviderUnavailableError(
            origin.down or notice("Cannot connect to {server}.", server=where),
            hint=notice(
                "Check that the server is running and the address in {setting} is right, then try again.",
                setting=origin.setting,
            ),
        )
    if names & _TIMEOUTS:
        return ProviderTimeoutError(notice("{server} did not answer in time.", server=where))
    if any(_is_web_page(e) for e in chain):
        return ProviderProtocolError(
            notice("{server} answered with a web page, not a model's reply.", server=where),
            hint=notice(
                "Another program (a web server or a proxy) answers at that address: check the address in "
                "{setting}.",
                setting=origin.setting,
            ),
        )
    if any(isinstance(e, json.JSONDecodeError) for e in chain) or "JSONDecodeError" in names:
        return ProviderProtocolError(
            notice(
                "{server} sent a malformed stream chunk: {problem}", server=where, problem=short(failure.exc)
            )
        )
    if names & _CUT_OFF or "incomplete chunked read" in text or "peer closed" in text:
        err = ProviderProtocolError(
            notice("The connection to {server} closed in the middle of the reply.", server=where)
        )
        err.transient = True
        return err
    if "MidStreamFallbackError" in names:
        # LiteLLM's wrapper for anything that broke while it read a stream (bad UTF-8, a chunk of the wrong
        # shape, a number too long) carries a 500 of its own making: the server said 200, then garbage.
        problem = short(chain[-1])
        return ProviderProtocolError(
            notice("{server} sent a malformed stream chunk: {problem}", server=where, problem=problem)
        )
    return None


def _server_refusal(failure: _Failure, origin: Origin) -> ProviderError:
    """The server answered with an error (tools refused, a key refused, no such model, an HTTP status), or
    the library failed in its own words."""
    names, text, status, where = failure.names, failure.text, failure.status, origin.server
    detail = _server_said(failure.chain) or short(failure.exc)
    if status == 400 and "does not support tools" in text:
        return ToolsUnsupportedError(
            notice(
                "{server} says {model} cannot call tools: {problem}",
                server=where,
                model=origin.model,
                problem=detail,
            ),
            status=400,
            hint=notice("The conversation goes on without tools for this model."),
        )
    if status in (401, 403) or "AuthenticationError" in names or "PermissionDeniedError" in names:
        return ProviderHTTPError(
            notice("{server} refused the API key for {model}.", server=where, model=origin.model),
            status=status or 401,
            hint=notice("Check the key in {setting}.", setting=origin.setting),
        )
    if status == 404 or "NotFoundError" in names or (status is not None and "not found" in text.lower()):
        return ModelNotInstalledError(
            notice("The model {model} is not available from {server}.", model=origin.model, server=where),
            hint=origin.install or notice("Check the model name in {setting}.", setting=origin.setting),
        )
    if status is not None:
        return ProviderHTTPError(
            notice("{server} answered HTTP {status}: {problem}", server=where, status=status, problem=detail),
            status=status,
        )
    # What the library said, in its words; never its exception's class (a person cannot act on it).
    err = ProviderError(notice("{server} failed: {problem}", server=where, problem=short(failure.exc)))
    err.transient = bool(names & _TRANSIENT)
    return err


def cause_chain(exc: BaseException) -> list[BaseException]:
    """The exception, what caused it, and what a library wrapped (original_exception), without loops."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop()
        if current is None or any(current is s for s in seen) or len(seen) > 20:
            continue
        seen.append(current)
        todo.extend([current.__cause__, current.__context__, getattr(current, "original_exception", None)])
    return seen


def short(exc: BaseException) -> str:
    """The first line of an exception's text, cut to a length a dialog can show."""
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def _is_plain_connection_error(chain: list[BaseException]) -> bool:
    # The ollama client raises the builtin ConnectionError itself when it cannot connect; its
    # subclasses (reset, broken pipe) mean a connection that was cut off instead.
    return any(type(e) is ConnectionError for e in chain)


def _server_said(chain: list[BaseException]) -> str:
    """The server's own error text where the client kept it (the ollama client's ResponseError.error)."""
    for e in chain:
        said = getattr(e, "error", None)
        if isinstance(said, str) and said.strip():
            return said.strip()[:300]
    return ""


def _is_web_page(exc: BaseException) -> bool:
    """A JSON parser that met HTML: a web server or a captive portal answered where a model server should."""
    doc = getattr(exc, "doc", None) if isinstance(exc, json.JSONDecodeError) else None
    return isinstance(doc, str) and doc.lstrip()[:15].lower().startswith(("<!doctype html", "<html"))

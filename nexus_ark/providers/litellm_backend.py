"""Any provider LiteLLM speaks: OpenAI, Anthropic, Gemini, or any OpenAI-compatible server (vLLM, LM Studio,
llama.cpp's server) via "openai/<model>" and an api_base.

LiteLLM takes about 3 s to import and, unless told otherwise, fetches a price list from the internet while
importing; it is imported on first use (never on the UI thread) with the local price map forced.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Iterator
from typing import Any, Literal

from nexus_ark.errors import ProviderError, ProviderProtocolError
from nexus_ark.logfile import masked_url
from nexus_ark.notices import notice
from nexus_ark.providers.base import (
    Capabilities,
    ChatBackend,
    ChatRequest,
    StreamChunk,
    ToolCall,
    openai_messages,
)
from nexus_ark.providers.failures import Origin, translate
from nexus_ark.providers.secrets import api_key_for, provider_of
from nexus_ark.providers.stream_guard import RetryPolicy, Timeouts, guarded_stream

_import_lock = threading.Lock()
LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")


def import_litellm() -> Any:
    with _import_lock:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        # Its handler (stdout) is installed while it imports, and it logs there at once: quiet until routed.
        quiet = [logging.getLogger(name) for name in LITELLM_LOGGERS]
        for logger in quiet:
            logger.setLevel(logging.WARNING)
        try:
            import litellm
        finally:
            for logger in quiet:
                logger.setLevel(logging.NOTSET)

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        _route_litellm_logging(litellm)
        return litellm


def _route_litellm_logging(litellm: Any) -> None:
    """LiteLLM's loggers carry a handler of its own that writes records below WARNING to stdout, and
    print_verbose prints there when set_verbose is on; stdout is the scripting contract (replies, --json).
    Its records go the way of every other library's: up to our handlers (stderr and the log file). The
    verbose flag its print_verbose reads lives in its private `_logging` module, with no public setter:
    read here alone."""
    litellm.set_verbose = False
    try:
        from litellm import _logging as litellm_logging

        litellm_logging.set_verbose = False
    except ImportError:  # an older LiteLLM: the loggers below are still found by name
        pass
    for name in LITELLM_LOGGERS:
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.propagate = True


ResponseFormat = Literal["json_schema", "json_object_schema", "json_object"]


class LiteLLMCapabilities(Capabilities):
    response_format: ResponseFormat = "json_object"  # how this backend asks for JSON


def response_format_for(configured: str, *, knows_schema: bool, api_base: str) -> ResponseFormat:
    """ "auto": json_schema where LiteLLM knows the provider takes it; a local OpenAI-compatible server
    (api_base set) gets json_object with the schema attached, which llama.cpp's server constrains to;
    anything else plain JSON mode."""
    if configured != "auto":
        return configured  # type: ignore[return-value]
    if knows_schema:
        return "json_schema"
    return "json_object_schema" if api_base else "json_object"


class LiteLLMBackend(ChatBackend):
    """Capabilities come from LiteLLM's model map (supports_function_calling, supports_response_schema):
    facts about the model, learned in ensure_ready before the first turn. A model the map does not know
    (a local server's alias) is assumed to call no tools."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str = "",
        api_key_ref: str = "",
        timeouts: Timeouts | None = None,
        retry: RetryPolicy | None = None,
        structured_output: str = "auto",
    ) -> None:
        self.model = model
        self.structured_output = structured_output
        self.provider = provider_of(model)
        self.api_base = api_base.rstrip("/")
        self.api_key_ref = api_key_ref
        self.model_id = f"litellm:{model}"
        self.timeouts = timeouts or Timeouts()
        self.retry = retry or RetryPolicy()
        self._litellm: Any = None
        self._origin = Origin(server=self._where(), model=model)

    def describe(self) -> str:
        return f"{self.model}" + (f" @ {masked_url(self.api_base)}" if self.api_base else "")

    def _lib(self) -> Any:
        if self._litellm is None:
            self._litellm = import_litellm()
        return self._litellm

    def _learn_capabilities(self) -> LiteLLMCapabilities:
        lib = self._lib()
        tools, knows_schema = (
            _model_supports(lib.supports_function_calling, self.model),
            _model_supports(lib.supports_response_schema, self.model),
        )
        fmt = response_format_for(self.structured_output, knows_schema=knows_schema, api_base=self.api_base)
        return LiteLLMCapabilities(
            tools=tools, structured="json" if fmt == "json_object" else "schema", response_format=fmt
        )

    def capabilities(self) -> LiteLLMCapabilities:
        caps = super().capabilities()
        return caps if isinstance(caps, LiteLLMCapabilities) else LiteLLMCapabilities(**caps.model_dump())

    def _api_key(self) -> str | None:
        return api_key_for(self.model, api_base=self.api_base, reference=self.api_key_ref)

    def ensure_ready(self) -> None:
        self.capabilities()
        self._api_key()

    def _where(self) -> str:
        return masked_url(self.api_base) or notice("provider {name}", name=self.provider)

    def _translate(self, exc: BaseException) -> ProviderError:
        return translate(exc, self._origin)

    def _stream(self, request: ChatRequest) -> Iterator[StreamChunk]:
        lib, kwargs = self._lib(), self._request_kwargs(request)
        chunks = guarded_stream(
            lambda: self._open_stream(lib, kwargs),
            timeouts=self.timeouts,
            cancel=request.cancel,
            what=self._where(),
            retry=self.retry,
        )
        yield from _replies(chunks, request.cancel)

    def _request_kwargs(self, request: ChatRequest) -> dict[str, Any]:
        """LiteLLM's completion() arguments for one request."""
        params, json_schema = request.params, request.json_schema
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": openai_messages(request.messages),
            "stream": True,
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "timeout": max(self.timeouts.first_token_s, self.timeouts.between_tokens_s),
            "max_retries": 0,  # retries are ours: transient errors only, and never after the first token
        }
        if params.stop:
            kwargs["stop"] = params.stop
        if params.seed is not None:
            kwargs["seed"] = params.seed
        if self.api_base:
            kwargs["api_base"] = self.api_base
        key = self._api_key()
        if key:
            kwargs["api_key"] = key
        if json_schema is not None:
            mode = self.capabilities().response_format
            fmt = _response_format(mode, json_schema)
            if mode == "json_object_schema":
                # Sent as raw body: LiteLLM would rewrite a json_object format that carries a schema.
                kwargs["extra_body"] = {"response_format": fmt}
            else:
                kwargs["response_format"] = fmt
        if request.tools:
            kwargs["tools"] = [t.openai_format() for t in request.tools]
        return kwargs

    def _open_stream(self, lib: Any, kwargs: dict[str, Any]) -> Iterator[Any]:
        """One attempt: LiteLLM's chunks as they come, its errors translated, and a stream that ended
        without the server saying it was done refused in words."""
        received = 0
        stream = None
        try:
            stream = lib.completion(**kwargs)
            for chunk in stream:
                received += _carries_reply(chunk)  # not LiteLLM's own closing chunk
                yield chunk
        except Exception as exc:
            raise self._translate(exc) from exc
        finally:
            if stream is not None:
                _close_now(stream)
        if _ended_unfinished(stream):
            # LiteLLM ends a body cut without [DONE] or a finish_reason with a "stop" of its own making.
            where = self._where()
            if not received:  # a 200 with not one event: a web page or another program answered
                raise ProviderProtocolError(
                    notice(
                        "{server} answered, but not with an OpenAI-compatible stream: not one event "
                        "of a reply came.",
                        server=where,
                    ),
                    hint=notice(
                        "Another program (a web server or a proxy) may answer at that address: check "
                        "the address in {setting}.",
                        setting=self._origin.setting,
                    ),
                )
            raise ProviderProtocolError(
                notice("The connection to {server} closed in the middle of the reply.", server=where)
            )


def _replies(chunks: Iterator[Any], cancel: threading.Event | None) -> Iterator[StreamChunk]:
    """LiteLLM's chunks as ours: the text as it comes, then one finish chunk (with the tool calls whose
    parts came spread over the chunks)."""
    finish = "stop"
    pending: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        choices = getattr(chunk, "choices", None) or []
        if not choices:
            continue
        choice = choices[0]
        delta = getattr(choice, "delta", None)
        text = getattr(delta, "content", None) if delta is not None else None
        if text:
            yield StreamChunk(text=text)
        for call in (getattr(delta, "tool_calls", None) or []) if delta is not None else []:
            _add_call_part(pending, call)
        if getattr(choice, "finish_reason", None):
            finish = choice.finish_reason
    if cancel is not None and cancel.is_set():
        yield StreamChunk(finish_reason="cancelled")
        return
    calls = tuple(_parse_call(slot) for _, slot in sorted(pending.items()) if slot["name"])
    if calls:
        yield StreamChunk(finish_reason="tool_calls", tool_calls=calls)
    else:
        yield StreamChunk(finish_reason="length" if finish == "length" else "stop")


def _add_call_part(pending: dict[int, dict[str, str]], call: Any) -> None:
    """A streamed part of a tool call added to the call it continues (by its index)."""
    slot = pending.setdefault(getattr(call, "index", 0) or 0, {"id": "", "name": "", "arguments": ""})
    slot["id"] = getattr(call, "id", None) or slot["id"]
    function = getattr(call, "function", None)
    if function is not None:
        slot["name"] = getattr(function, "name", None) or slot["name"]
        slot["arguments"] += getattr(function, "arguments", None) or ""


def _response_format(mode: str, schema: dict[str, Any]) -> dict[str, Any]:
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_object"}


def _parse_call(slot: dict[str, str]) -> ToolCall:
    try:
        arguments = json.loads(slot["arguments"] or "{}")
    except json.JSONDecodeError as exc:
        raise ProviderProtocolError(
            notice("The model called {tool} with arguments that are not JSON.", tool=slot["name"])
        ) from exc
    return ToolCall(
        id=slot["id"], name=slot["name"], arguments=arguments if isinstance(arguments, dict) else {}
    )


def _carries_reply(chunk: Any) -> bool:
    """Whether a streamed chunk came from the server: a role, text or a tool call in its delta."""
    delta = getattr(next(iter(getattr(chunk, "choices", None) or []), None), "delta", None)
    return any(getattr(delta, field, None) for field in ("role", "content", "tool_calls"))


def _close_now(stream: Any) -> None:
    """Close an abandoned stream's HTTP response here, on the thread that read it. Left to the garbage
    collector, the SDK's generator closed its response on whatever thread collected it, sometimes one
    inside httpcore's connection pool holding the pool's lock, which the close takes again: that thread
    and every later request to the server waited forever (seen with py-spy in the stream fuzz)."""
    for part in (getattr(stream, "completion_stream", None), stream):
        if part is None:
            continue
        with contextlib.suppress(Exception):
            iterator = getattr(part, "_iterator", None)  # the SDK's generator: its finally closes now
            if iterator is not None and hasattr(iterator, "close"):
                iterator.close()
        with contextlib.suppress(Exception):
            close = getattr(part, "close", None)
            if callable(close):
                close()


def _ended_unfinished(stream: Any) -> bool:
    """Whether the server's stream ended without saying it was done: no finish_reason came from the server
    (LiteLLM's stream wrapper records the ones that did; an older wrapper without the record is trusted)."""
    if not hasattr(stream, "received_finish_reason"):
        return False
    intermittent = getattr(stream, "intermittent_finish_reason", None)
    return stream.received_finish_reason is None and intermittent is None


def _model_supports(check: Any, model: str) -> bool:
    try:
        return bool(check(model))
    except Exception:  # a model string LiteLLM's map does not know: assume the least
        return False

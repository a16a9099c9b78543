"""Any provider LiteLLM speaks: OpenAI, Anthropic, Gemini, or any OpenAI-compatible server (vLLM, LM Studio,
llama.cpp's server) via "openai/<model>" and an api_base.

LiteLLM takes about 3 s to import and, unless told otherwise, fetches a price list from the internet while
importing; it is imported on first use (never on the UI thread) with the local price map forced.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from nexus_ark.errors import (
    ModelNotInstalledError,
    ProviderError,
    ProviderHTTPError,
    ProviderProtocolError,
    ProviderTimeoutError,
    ProviderUnavailableError,
)
from nexus_ark.providers.base import (
    ChatBackend,
    ChatMessage,
    GenerationParams,
    StreamChunk,
    ToolCall,
    ToolSpec,
    openai_messages,
)
from nexus_ark.providers.secrets import PROVIDER_KEY_ENV, resolve_key
from nexus_ark.providers.stream_guard import RetryPolicy, Timeouts, guarded_stream

_import_lock = threading.Lock()


def import_litellm() -> Any:
    with _import_lock:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        return litellm


class LiteLLMBackend(ChatBackend):
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
        self.provider = model.split("/", 1)[0] if "/" in model else "openai"
        self.api_base = api_base.rstrip("/")
        self.api_key_ref = api_key_ref
        self.model_id = f"litellm:{model}"
        self.timeouts = timeouts or Timeouts()
        self.retry = retry or RetryPolicy()
        self._litellm: Any = None

    def describe(self) -> str:
        return f"{self.model}" + (f" @ {self.api_base}" if self.api_base else "")

    def _lib(self) -> Any:
        if self._litellm is None:
            self._litellm = import_litellm()
            try:
                self.native_tools = bool(self._litellm.supports_function_calling(self.model))
                knows_schema = bool(self._litellm.supports_response_schema(self.model))
            except Exception:  # an unknown model string: assume the least
                self.native_tools, knows_schema = False, False
            if self.structured_output == "auto":
                self.structured_output = (
                    "json_schema"
                    if knows_schema
                    else "json_object_schema"
                    if self.api_base
                    else "json_object"
                )
            self.structured_mode = "json" if self.structured_output == "json_object" else "schema"
        return self._litellm

    def _api_key(self) -> str | None:
        # A local OpenAI-compatible server needs no key, but the OpenAI client insists on one.
        needs_key = self.provider in PROVIDER_KEY_ENV and not self.api_base
        key = resolve_key(self.api_key_ref, provider=self.provider, required=needs_key)
        return key or ("not-needed" if self.api_base else None)

    def ensure_ready(self) -> None:
        self._lib()
        self._api_key()

    def _where(self) -> str:
        return self.api_base or f"provider {self.provider}"

    def _translate(self, exc: BaseException) -> ProviderError:
        """LiteLLM reports most transport failures as HTTP 500-ish errors; the cause chain says what
        really happened, so it is read first."""
        if isinstance(exc, ProviderError):
            return exc
        ex = self._lib().exceptions
        where = self._where()
        chain = _cause_chain(exc)
        names = {type(e).__name__ for e in chain}
        text = " ".join(str(e) for e in chain)
        if isinstance(exc, ex.Timeout) or names & {"ReadTimeout", "TimeoutException", "APITimeoutError"}:
            return ProviderTimeoutError(f"{where} did not answer in time.")
        if names & {"ConnectError", "ConnectTimeout"} or "Connection refused" in text:
            return ProviderUnavailableError(
                f"Cannot connect to {where}.",
                hint="Check that the server is running and the base URL is right.",
            )
        if "JSONDecodeError" in names or "Unterminated string" in text or "Expecting value" in text:
            return ProviderProtocolError(f"{where} sent a malformed stream chunk: {_short(exc)}")
        if (
            names & {"RemoteProtocolError", "ReadError"}
            or "incomplete chunked read" in text
            or "peer closed" in text
        ):
            err = ProviderProtocolError(f"The connection to {where} closed in the middle of the reply.")
            err.transient = True
            return err
        if isinstance(exc, ex.AuthenticationError):
            return ProviderHTTPError(
                f"{where} refused the API key for {self.model}.",
                status=401,
                hint="Check the key in the persona's model settings.",
            )
        if isinstance(exc, ex.NotFoundError):
            return ModelNotInstalledError(f"{where} does not serve the model {self.model}.")
        status = getattr(exc, "status_code", None)
        if isinstance(status, int) and status >= 400:
            return ProviderHTTPError(f"{where} answered HTTP {status}: {_short(exc)}", status=status)
        err = ProviderError(f"{where} failed: {type(exc).__name__}: {_short(exc)}")
        err.transient = isinstance(exc, ex.APIConnectionError | ex.ServiceUnavailableError)
        return err

    def stream_chat(
        self,
        messages: Sequence[ChatMessage],
        params: GenerationParams,
        cancel: threading.Event | None = None,
        *,
        json_schema: dict[str, Any] | None = None,
        tools: Sequence[ToolSpec] | None = None,
    ) -> Iterator[StreamChunk]:
        lib = self._lib()
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": openai_messages(messages),
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
            fmt = _response_format(self.structured_output, json_schema)
            if self.structured_output == "json_object_schema":
                # Sent as raw body: LiteLLM would rewrite a json_object format that carries a schema.
                kwargs["extra_body"] = {"response_format": fmt}
            else:
                kwargs["response_format"] = fmt
        if tools and self.native_tools:
            kwargs["tools"] = [t.openai_format() for t in tools]

        def open_stream() -> Iterator[Any]:
            try:
                yield from lib.completion(**kwargs)
            except Exception as exc:
                raise self._translate(exc) from exc

        finish = "stop"
        pending: dict[int, dict[str, str]] = {}
        for chunk in guarded_stream(
            open_stream, timeouts=self.timeouts, cancel=cancel, what=self._where(), retry=self.retry
        ):
            choices = getattr(chunk, "choices", None) or []
            if not choices:
                continue
            choice = choices[0]
            delta = getattr(choice, "delta", None)
            text = getattr(delta, "content", None) if delta is not None else None
            if text:
                yield StreamChunk(text=text)
            for call in (getattr(delta, "tool_calls", None) or []) if delta is not None else []:
                slot = pending.setdefault(
                    getattr(call, "index", 0) or 0, {"id": "", "name": "", "arguments": ""}
                )
                slot["id"] = getattr(call, "id", None) or slot["id"]
                function = getattr(call, "function", None)
                if function is not None:
                    slot["name"] = getattr(function, "name", None) or slot["name"]
                    slot["arguments"] += getattr(function, "arguments", None) or ""
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
            f"The model called {slot['name']} with arguments that are not JSON."
        ) from exc
    return ToolCall(
        id=slot["id"], name=slot["name"], arguments=arguments if isinstance(arguments, dict) else {}
    )


def _cause_chain(exc: BaseException) -> list[BaseException]:
    """The exception, what caused it, and what LiteLLM wrapped (original_exception), without loops."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop()
        if current is None or any(current is s for s in seen) or len(seen) > 20:
            continue
        seen.append(current)
        todo.extend([current.__cause__, current.__context__, getattr(current, "original_exception", None)])
    return seen


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__

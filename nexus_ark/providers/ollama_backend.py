"""Models served by Ollama, through the official ollama client: streaming chat, tools, schemas, embeddings."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pydantic import BaseModel

from nexus_ark.errors import ModelNotInstalledError, ProviderError, ProviderProtocolError
from nexus_ark.logfile import masked_url
from nexus_ark.notices import notice
from nexus_ark.providers.base import (
    Capabilities,
    ChatBackend,
    ChatMessage,
    ChatRequest,
    StreamChunk,
    ToolCall,
)
from nexus_ark.providers.failures import PERSONA_SETTING, Origin, translate
from nexus_ark.providers.stream_guard import RetryPolicy, Timeouts, guarded_stream

log = logging.getLogger(__name__)

DEFAULT_HOST = "http://127.0.0.1:11434"


class PullCancelled(ProviderError):
    """The person stopped a pull; Ollama keeps the layers it fetched."""


class OllamaModelInfo(BaseModel):
    name: str
    size_bytes: int = 0
    parameter_size: str = ""
    family: str = ""


def same_model(a: str, b: str) -> bool:
    """Ollama treats "qwen2.5" and "qwen2.5:latest" as one model."""
    return (a if ":" in a else f"{a}:latest") == (b if ":" in b else f"{b}:latest")


class OllamaBackend(ChatBackend):
    """What the model can do is asked of the server (/api/show lists its capabilities, e.g. "tools"):
    tools go only to models that list them."""

    structured_mode = "schema"

    def __init__(
        self,
        model: str,
        host: str = DEFAULT_HOST,
        *,
        timeouts: Timeouts | None = None,
        retry: RetryPolicy | None = None,
        setting: str = PERSONA_SETTING,
    ) -> None:
        self.model = model
        self.host = (host or DEFAULT_HOST).rstrip("/")
        self.model_id = f"ollama:{model}"
        self.timeouts = timeouts or Timeouts()
        self.retry = retry or RetryPolicy()
        self._client_obj: Any = None
        self._origin = Origin(
            server=self._where(),
            model=model,
            setting=setting,
            down=notice("Ollama is not running at {host}.", host=masked_url(self.host)),
            install=_install_hint(model),
        )

    def _where(self) -> str:
        return notice("Ollama at {host}", host=masked_url(self.host))

    def describe(self) -> str:
        return f"{self.model} (Ollama)"

    def _client(self) -> Any:
        if self._client_obj is None:
            import httpx
            from ollama import Client

            t = self.timeouts
            read = max(t.first_token_s, t.between_tokens_s)  # the guard enforces the finer limits
            self._client_obj = Client(host=self.host, timeout=httpx.Timeout(read, connect=t.connect_s))
        return self._client_obj

    def _translate(self, exc: BaseException) -> ProviderError:
        return translate(exc, self._origin)

    # -- models -----------------------------------------------------------------------------------
    def list_models(self) -> list[OllamaModelInfo]:
        try:
            listed = self._client().list()
        except Exception as exc:
            raise self._translate(exc) from exc
        out = []
        for m in listed.models:
            details = m.details
            out.append(
                OllamaModelInfo(
                    name=m.model or "",
                    size_bytes=int(m.size or 0),
                    parameter_size=(details.parameter_size or "") if details else "",
                    family=(details.family or "") if details else "",
                )
            )
        return out

    def pull(self, progress: Callable[[int, int, str], None] | None = None, cancel: Any = None) -> None:
        """Have the server pull this model through /api/pull's stream: progress(done, total, status) with
        the bytes summed over the model's layers. Cancel (a threading.Event) closes the stream; Ollama
        keeps the layers it has, so pulling again goes on from there."""
        layers: dict[str, tuple[int, int]] = {}
        try:
            stream = self._client().pull(self.model, stream=True)
            try:
                for update in stream:
                    if cancel is not None and cancel.is_set():
                        raise PullCancelled(notice("The download was cancelled."))
                    if update.digest and update.total:
                        layers[update.digest] = (int(update.completed or 0), int(update.total))
                    if progress is not None:
                        done = sum(d for d, _ in layers.values())
                        total = sum(t for _, t in layers.values())
                        progress(done, total, update.status or "")
                    if update.status == "success":
                        return
            finally:
                stream.close()
        except PullCancelled:
            raise
        except Exception as exc:
            raise self._translate(exc) from exc
        raise ProviderProtocolError(
            notice(
                "{server} ended the pull of {model} without saying it succeeded.",
                server=self._where(),
                model=self.model,
            )
        )

    def delete(self) -> None:
        """Have the server delete this model (its layers shared with other models stay)."""
        try:
            self._client().delete(self.model)
        except Exception as exc:
            raise self._translate(exc) from exc

    def ensure_ready(self) -> None:
        names = [m.name for m in self.list_models()]
        if not any(same_model(self.model, n) for n in names):
            installed = ", ".join(names) or notice("none")
            raise ModelNotInstalledError(
                notice(
                    "The model {model} is not installed in Ollama at {host} (installed: {installed}).",
                    model=self.model,
                    host=masked_url(self.host),
                    installed=installed,
                ),
                hint=_install_hint(self.model),
            )
        self.capabilities()

    def _learn_capabilities(self) -> Capabilities | None:
        try:
            shown = self._client().show(self.model)
        except Exception as exc:  # down or not installed: the chat request will say so; ask again later
            log.info(
                "could not ask %s what %s can do: %s", masked_url(self.host), self.model, self._translate(exc)
            )
            return None
        record = shown_record(shown)
        listed = shown.capabilities
        if listed is None:
            # Servers before capabilities were listed: offer tools, and a refusal turns them off.
            return Capabilities(tools=True, structured="schema", **record)
        return Capabilities(tools="tools" in listed, structured="schema", **record)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        try:
            response = self._client().embed(model=self.model, input=list(texts))
        except Exception as exc:
            raise self._translate(exc) from exc
        return [list(v) for v in response.embeddings]

    # -- chat -------------------------------------------------------------------------------------
    @staticmethod
    def _messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
        out = []
        for m in messages:
            item: dict[str, Any] = {"role": m.role, "content": m.content}
            if m.tool_calls:
                item["tool_calls"] = [
                    {"function": {"name": c.name, "arguments": c.arguments}} for c in m.tool_calls
                ]
            if m.role == "tool" and m.name:
                item["tool_name"] = m.name
            out.append(item)
        return out

    def _stream(self, request: ChatRequest) -> Iterator[StreamChunk]:
        params, cancel, tools = request.params, request.cancel, request.tools
        options: dict[str, Any] = {
            "num_predict": params.max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "repeat_penalty": params.repeat_penalty,
        }
        if params.stop:
            options["stop"] = params.stop
        if params.seed is not None:
            options["seed"] = params.seed
        payload = self._messages(request.messages)

        def open_stream() -> Iterator[Any]:
            try:
                yield from self._client().chat(
                    model=self.model,
                    messages=payload,
                    stream=True,
                    options=options,
                    format=request.json_schema,
                    tools=[t.openai_format() for t in tools] if tools else None,
                )
            except Exception as exc:
                raise self._translate(exc) from exc

        finish = "stop"
        done = False
        calls: list[ToolCall] = []
        for part in guarded_stream(
            open_stream,
            timeouts=self.timeouts,
            cancel=cancel,
            what=self._where(),
            retry=self.retry,
        ):
            message = part.message
            if message is not None and message.tool_calls:
                for call in message.tool_calls:
                    calls.append(
                        ToolCall(
                            id=f"call_{len(calls)}",
                            name=call.function.name,
                            arguments=dict(call.function.arguments or {}),
                        )
                    )
            if message is not None and message.content:
                yield StreamChunk(text=message.content)
            if part.done:
                done = True
                finish = "length" if part.done_reason == "length" else "stop"
        if cancel is not None and cancel.is_set():
            yield StreamChunk(finish_reason="cancelled")
        elif not done:  # the body ended between lines without Ollama's last one: the reply is not whole
            raise ProviderProtocolError(
                notice("The connection to {server} closed in the middle of the reply.", server=self._where())
            )
        elif calls:
            yield StreamChunk(finish_reason="tool_calls", tool_calls=tuple(calls))
        else:
            yield StreamChunk(finish_reason=finish)  # type: ignore[arg-type]


def _install_hint(model: str) -> str:
    return notice("Install it with: ollama pull {model}", model=model)


def shown_record(shown: Any) -> dict[str, Any]:
    """The capability record's facts from /api/show: parameters and trained context from model_info
    (GGUF keys, as in a GGUF file), the chat template as Ollama keeps it."""
    info = dict(getattr(shown, "modelinfo", None) or {})
    arch = str(info.get("general.architecture", ""))
    params = info.get("general.parameter_count")
    context = info.get(f"{arch}.context_length")
    return {
        "parameters": int(params) if isinstance(params, int) and params > 0 else None,
        "context_length": int(context) if isinstance(context, int) and context > 0 else None,
        "chat_template": str(getattr(shown, "template", "") or ""),
    }

"""Ask with a pydantic model, get a validated instance: also from small local models.

Each backend constrains what it can: llama.cpp compiles the JSON schema into a sampling grammar, Ollama takes
it as `format`, LiteLLM sends response_format json_schema where the provider supports it and JSON mode
elsewhere. Whatever comes back is validated here; one repair round (the model sees its answer and the
validation errors) follows a failure, then a StructuredOutputError names what was wrong.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from nexus_ark.errors import StructuredOutputError
from nexus_ark.notices import notice
from nexus_ark.prompts.protocol import ANSWER_CUT_OFF, JSON_INSTRUCTION, JSON_REPAIR
from nexus_ark.providers.base import ChatBackend, ChatMessage, GenerationParams
from nexus_ark.sentences import trim_to_sentence

M = TypeVar("M", bound=BaseModel)

STRUCTURED_PARAMS = GenerationParams(max_tokens=768, temperature=0.2, top_p=0.95, repeat_penalty=1.1)


def extract_json(text: str) -> str:
    """The JSON object inside a reply that may wrap it in prose or a code fence."""
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if start != -1 and end > start else text.strip()


def _whole(text: str) -> str:
    """A string the grammar stopped at its maxLength, back to its last whole sentence, else its last
    whole word with "…" (it trails off, and says so); as it was when neither is there."""
    return trim_to_sentence(text)[0] or text


_TYPES: dict[str, type] = {"string": str, "object": dict, "array": list}


def _same_type(option: dict[str, Any], value: Any) -> bool:
    if "$ref" in option:
        return isinstance(value, dict)
    kind = _TYPES.get(str(option.get("type")))
    return kind is not None and isinstance(value, kind)


def trim_cut_strings(value: Any, schema: dict[str, Any], root: dict[str, Any] | None = None) -> Any:
    """Constrained decoding (llama.cpp's grammar, Ollama's format) ends a string at its schema's maxLength,
    mid-word ("tone: The mood was one of joy and el"): such strings are trimmed back (_whole) instead of
    being kept as if whole. Walks objects, arrays, $ref and anyOf."""
    root = root if root is not None else schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        schema = root.get("$defs", {}).get(ref.split("/")[-1], {})
    if "anyOf" in schema:  # e.g. an optional field: the option of the value's own type
        option = next((o for o in schema["anyOf"] if _same_type(o, value)), None)
        return trim_cut_strings(value, option, root) if option is not None else value
    if isinstance(value, str):
        limit = schema.get("maxLength")
        return _whole(value) if isinstance(limit, int) and len(value) >= limit else value
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        return {k: trim_cut_strings(v, properties.get(k, {}), root) for k, v in value.items()}
    if isinstance(value, list):
        items = schema.get("items", {})
        return [trim_cut_strings(v, items, root) for v in value] if isinstance(items, dict) else value
    return value


def _instruction(schema: dict) -> str:
    return JSON_INSTRUCTION.format(schema=json.dumps(schema, ensure_ascii=False))


def _describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(object)'}: {e['msg']}" for e in exc.errors()[:5]
        )
    return str(exc)


def generate_structured(
    backend: ChatBackend,
    messages: Sequence[ChatMessage],
    model: type[M],
    *,
    params: GenerationParams | None = None,
    cancel: threading.Event | None = None,
    repairs: int = 1,
    attempts: list[int] | None = None,
    context: dict[str, Any] | None = None,
) -> M:
    """`attempts`, when given, gets how many answers this took appended (1: valid the first time), for
    benchmarks of how often a model needs the repair round. `context` goes to the model's validators
    (pydantic validation context), e.g. the task an answer must not merely repeat."""
    schema = model.model_json_schema()
    params = params or STRUCTURED_PARAMS
    convo = list(messages)
    # The schema goes into the prompt as well: constrained decoding keeps the form, the prompt tells
    # the model what the fields mean.
    if convo and convo[0].role == "system":
        convo[0] = ChatMessage(role="system", content=f"{convo[0].content}\n\n{_instruction(schema)}")
    else:
        convo.insert(0, ChatMessage(role="system", content=_instruction(schema)))

    last_error = ""
    for attempt in range(repairs + 1):
        pieces, finish = [], None
        for chunk in backend.stream_chat(convo, params, cancel, json_schema=schema):
            pieces.append(chunk.text)
            finish = chunk.finish_reason or finish
        text = "".join(pieces)
        try:
            if finish == "length":  # whatever parses of it, it is not the whole answer
                raise ValueError(ANSWER_CUT_OFF)
            # strict=False: grammar-constrained strings may hold raw newlines, which JSON forbids but
            # which carry no ambiguity.
            data = trim_cut_strings(json.loads(extract_json(text), strict=False), schema)
            answer = model.model_validate(data, context=context)
            if attempts is not None:
                attempts.append(attempt + 1)
            return answer
        except (ValidationError, ValueError) as exc:
            last_error = _describe(exc)
            if attempt == repairs:
                break
            convo = [
                *convo,
                ChatMessage(role="assistant", content=text),
                ChatMessage(
                    role="user",
                    content=JSON_REPAIR.format(problem=last_error),
                ),
            ]
    if attempts is not None:
        attempts.append(repairs + 1)
    raise StructuredOutputError(
        notice(
            "{model} gave no valid {schema} in {tries} tries: {problem}",
            model=backend.describe(),
            schema=model.__name__,
            tries=repairs + 1,
            problem=str(last_error),
        ),
        hint=notice(
            "A larger model, or one with JSON-schema support, gives more reliable structured answers."
        ),
    )

"""A second opinion on the emotion head's reading from the internal model, when that model is worth asking.

The head (emotion.py) reads every message in tens of milliseconds; a capable chat model reads irony,
context and rarer feelings better, but costs a generation. So the model is asked only when it is better
than the bundled SmolLM2-135M (which reads emotions worse than the head does), its answer is a validated
structured object, and anything that goes wrong (garbage, a refusal, a timeout) keeps the head's reading.

    if is_better_than_bundled(internal):
        reading = confirm_emotion(internal, text, detector.classify(text), timeout_s=8.0)
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time

from pydantic import BaseModel, Field

from nexus_ark.errors import NexusArkError
from nexus_ark.mind.emotion import MAX_CHARS, EmotionReading
from nexus_ark.mind.labels import LABELS, VALUES, EmotionName
from nexus_ark.paths import BUNDLED_MODEL_FILE
from nexus_ark.prompts.mind import CONFIRM_FIELDS, CONFIRM_REQUEST, CONFIRM_SYSTEM, LABEL_MEANINGS
from nexus_ark.providers.base import ChatBackend, ChatMessage, GenerationParams
from nexus_ark.providers.structured import generate_structured

log = logging.getLogger(__name__)

# The bundled model as its llama.cpp backend names itself (LlamaCppBackend: "gguf:" + the file name).
BUNDLED_MODEL_ID = f"gguf:{BUNDLED_MODEL_FILE}"

# Greedy and short: the answer is two fields, and the same message should read the same way twice.
CONFIRM_PARAMS = GenerationParams(max_tokens=64, temperature=0.0, top_p=1.0, repeat_penalty=1.0)


class EmotionConfirmation(BaseModel):
    """The internal model's answer: one label and how sure it is."""

    label: EmotionName = Field(description=CONFIRM_FIELDS["label"])
    confidence: float = Field(ge=0.0, le=1.0, description=CONFIRM_FIELDS["confidence"])


def is_better_than_bundled(backend: ChatBackend | None) -> bool:
    """Whether asking this backend can improve on the head: a configured model other than the bundled
    135M one whose capability record does not call it small (the size reflection needs, about a billion
    parameters: below it a model invents, as it would invent a feeling; a cloud model's unknown size counts
    as capable), the same record that decides structured output and tools (providers.base.Capabilities).
    A backend that does not say what it is is not asked."""
    if backend is None:
        return False
    model_id = (backend.model_id or "").strip()
    if not model_id or model_id == BUNDLED_MODEL_ID:
        return False
    try:
        return backend.capabilities().reflects
    except NexusArkError as exc:  # a model that cannot say what it is keeps the head
        log.warning("emotion confirmation: %s cannot say what it is: %s", backend.describe(), exc)
        return False


def _prompt(text: str, reading: EmotionReading) -> list[ChatMessage]:
    top = sorted(reading.scores.items(), key=lambda kv: kv[1], reverse=True)[:3]
    labels = "\n".join(f"- {name}: {LABEL_MEANINGS[name]}" for name in LABELS)
    system = CONFIRM_SYSTEM.format(labels=labels)
    guess = ", ".join(f"{name} {p:.2f}" for name, p in top)
    user = CONFIRM_REQUEST.format(text=text.strip()[:MAX_CHARS], guess=guess)
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]


def revise(reading: EmotionReading, answer: EmotionConfirmation) -> EmotionReading:
    """The head's probabilities mixed with the model's vote, weighted by the model's confidence: a sure
    answer decides, an unsure one only tips a close call. The result stays a distribution over LABELS,
    so label, value and confidence stay consistent with scores."""
    weight = answer.confidence
    scores = {
        name: (1.0 - weight) * p + (weight if name == answer.label else 0.0)
        for name, p in reading.scores.items()
    }
    label = max(scores, key=scores.__getitem__)
    return EmotionReading(
        label=label,
        value=VALUES[label],
        confidence=round(scores[label], 4),
        scores={name: round(p, 4) for name, p in scores.items()},
    )


def confirm_emotion(
    backend: ChatBackend,
    text: str,
    reading: EmotionReading,
    *,
    timeout_s: float = 10.0,
    give_way: threading.Event | None = None,
) -> EmotionReading:
    """The head's reading confirmed or corrected by `backend`; the reading unchanged (and the reason
    logged) when the backend answers garbage, fails, or takes longer than timeout_s, or when `give_way` is set
    (the person's next turn comes first). Blocks at most about timeout_s: run it where that wait is
    acceptable (after the reply, or off the UI thread)."""
    if not text.strip():
        return reading
    cancel = threading.Event()
    outcome: dict[str, object] = {}

    def ask() -> None:
        try:
            # No repair round: a model that cannot answer two fields the first time is not worth a second
            # generation inside a turn.
            outcome["answer"] = generate_structured(
                backend,
                _prompt(text, reading),
                EmotionConfirmation,
                params=CONFIRM_PARAMS,
                cancel=cancel,
                repairs=0,
            )
        except Exception as exc:  # handed to the caller's thread below
            outcome["error"] = exc

    # A worker thread, so a server that never sends a first token cannot hold the caller past timeout_s;
    # the cancel event then stops the generation at its next token.
    # It runs in the caller's context: the request is made at the caller's model priority (background
    # after a turn), not the person's, which a new thread would otherwise start at.
    worker = threading.Thread(
        target=contextvars.copy_context().run, args=(ask,), name="emotion-confirm", daemon=True
    )
    worker.start()
    deadline = time.monotonic() + timeout_s
    while worker.is_alive() and time.monotonic() < deadline:
        worker.join(0.05)
        if give_way is not None and give_way.is_set():
            cancel.set()
            return reading
    if worker.is_alive():
        cancel.set()
        log.warning("emotion confirmation by %s timed out after %.1f s", backend.describe(), timeout_s)
        return reading
    error = outcome.get("error")
    if isinstance(error, NexusArkError):
        log.warning(
            "emotion confirmation by %s failed, keeping the head's reading: %s", backend.describe(), error
        )
        return reading
    if isinstance(error, BaseException):
        raise error
    answer = outcome["answer"]
    assert isinstance(answer, EmotionConfirmation)
    # Both readings, for comparing the head with the model over time (issue 37).
    log.info(
        "emotion read by the head: %s %.2f; by %s: %s %.2f",
        reading.label,
        reading.confidence,
        backend.describe(),
        answer.label,
        answer.confidence,
    )
    return revise(reading, answer)

"""Open questions resolved at the end of a conversation.

The persona keeps questions it wants answered (memory components, filled by dreaming). When a conversation
ends (idle for `idle_minutes_end`, or the window closed), the internal model reads what was said since the
last end and the open questions, and says which the conversation answered and in which message. Its answer
is checked before anything is written: a question id it made up, or an evidence message that is not in the
conversation it was shown, is rejected (and logged), never trusted.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from nexus_ark.agent.token_budget import Counter, cut_text
from nexus_ark.memory.components import OpenQuestion
from nexus_ark.memory.messages import StoredMessage
from nexus_ark.memory.store import MemoryStore
from nexus_ark.personas.store import Persona
from nexus_ark.prompts.upkeep import (
    QUESTION_LINE,
    QUESTIONS_REQUEST,
    QUESTIONS_SYSTEM,
    QUESTIONS_TRANSCRIPT_LINE,
    USER_LABEL,
)
from nexus_ark.providers.base import ChatBackend, ChatMessage
from nexus_ark.providers.structured import generate_structured

log = logging.getLogger(__name__)

# What the internal model reads: the newest messages that fit in this many tokens, each cut to a share.
TRANSCRIPT_TOKENS = 2500
MESSAGE_TOKENS = 300


class QuestionVerdict(BaseModel):
    question_id: int
    answered: bool
    # The message of the conversation that answers it (required when answered).
    evidence_message_id: int | None = None


class QuestionVerdicts(BaseModel):
    verdicts: list[QuestionVerdict] = Field(default_factory=list)


@dataclass
class Resolution:
    question_id: int
    question: str
    evidence_message_id: int


@dataclass
class ResolutionReport:
    resolved: list[Resolution] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # verdicts not trusted, and why


def _transcript(persona: Persona, messages: Sequence[StoredMessage], count: Counter) -> tuple[str, set[int]]:
    """The conversation as numbered lines, and the ids of the messages shown (the only valid evidence)."""
    lines: list[str] = []
    shown: set[int] = set()
    used = 0
    for m in reversed(messages):  # the newest first: they matter most when the window is short
        if m.role not in ("user", "assistant") or not m.content.strip():
            continue
        text = cut_text(m.content[: MESSAGE_TOKENS * 4], MESSAGE_TOKENS, count) or m.content[:400]
        speaker = USER_LABEL if m.role == "user" else persona.settings.name
        line = QUESTIONS_TRANSCRIPT_LINE.format(id=m.id, speaker=speaker, text=text)
        cost = count(line)
        if used + cost > TRANSCRIPT_TOKENS:
            break
        lines.append(line)
        shown.add(m.id)
        used += cost
    return "\n".join(reversed(lines)), shown


def judge(
    internal: ChatBackend,
    persona: Persona,
    questions: Sequence[OpenQuestion],
    messages: Sequence[StoredMessage],
) -> tuple[list[Resolution], list[str]]:
    """The questions the conversation answered, checked: (accepted, rejected with reasons). Raises what
    generate_structured raises (a model that cannot give a valid answer)."""
    count = internal.count_tokens
    transcript, shown = _transcript(persona, messages, count)
    listed = "\n".join(QUESTION_LINE.format(id=q.id, question=q.question) for q in questions)
    request = [
        ChatMessage(role="system", content=QUESTIONS_SYSTEM.format(name=persona.settings.name)),
        ChatMessage(role="user", content=QUESTIONS_REQUEST.format(listed=listed, transcript=transcript)),
    ]
    answer = generate_structured(internal, request, QuestionVerdicts)
    by_id = {q.id: q for q in questions}
    accepted: list[Resolution] = []
    rejected: list[str] = []
    for verdict in answer.verdicts:
        if not verdict.answered:
            continue
        question = by_id.get(verdict.question_id)
        if question is None:
            rejected.append(f"question {verdict.question_id} is not an open question")
        elif verdict.evidence_message_id is None:
            rejected.append(f"question {verdict.question_id} marked answered without evidence")
        elif verdict.evidence_message_id not in shown:
            rejected.append(
                f"question {verdict.question_id}: evidence message {verdict.evidence_message_id} "
                "is not in the conversation"
            )
        elif any(r.question_id == question.id for r in accepted):
            continue
        else:
            accepted.append(Resolution(question.id, question.question, verdict.evidence_message_id))
    for reason in rejected:
        log.warning("open-question verdict rejected: %s", reason)
    return accepted, rejected


def resolve_open_questions(
    memory: MemoryStore,
    persona: Persona,
    internal: ChatBackend,
    messages: Sequence[StoredMessage],
) -> ResolutionReport:
    """Mark the open questions `messages` answered, each with its evidence message. Nothing is asked of
    the model when there is no open question or nothing was said."""
    questions = memory.components.open_questions()
    if not questions or not any(m.content.strip() for m in messages):
        return ResolutionReport()
    accepted, rejected = judge(internal, persona, questions, messages)
    for resolution in accepted:
        memory.components.resolve_question(
            resolution.question_id, evidence_message_id=resolution.evidence_message_id
        )
    return ResolutionReport(resolved=accepted, rejected=rejected)

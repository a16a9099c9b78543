"""What a dream stage writes below the reflection capability: the day in its own words
(dreaming/extractive.py), each quote checked against the message it comes from."""

from __future__ import annotations

from collections import Counter
from typing import Any

from nexus_ark.dreaming.extractive import central, episode_summary, named, quote
from nexus_ark.dreaming.grounding import GroundingReport
from nexus_ark.dreaming.material import Material, day_messages
from nexus_ark.dreaming.writes import StageSkipped, _grounding
from nexus_ark.memory.components import Episode
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import notice


def _quoted_episode(memory: MemoryStore, material: Material) -> dict[str, Any]:
    """The day's most central messages, quoted (a later pass: chosen again from the whole day so far)."""
    check, report = _grounding(material), GroundingReport()
    through = max(material.message_ids) if material.message_ids else None
    day = day_messages(memory, material.day, through_id=through)
    chosen = central(day, check.embedder)
    check.prefetch([f"{line[2]}: {quote(line[3])}" for line in chosen])
    picked = [
        line
        for line in chosen
        # An earlier pass's message was checked when it was dreamt.
        if f"msg:{line[0]}" not in check.texts
        or check.check("episode", f"{line[2]}: {quote(line[3])}", [f"msg:{line[0]}"], report=report)
        is not None
    ]
    if not picked:
        raise StageSkipped(notice("no message of the day could be quoted"), report)
    episode = Episode(
        date=material.day.isoformat(),
        summary=episode_summary(picked),
        key_events=[],
        emotional_tone=_tone(memory, [mid for mid, *_ in day]),
        source_ids=[f"msg:{mid}" for mid, *_ in picked],
    )
    memory.components.put_episode(episode)
    return {**episode.model_dump(), "grounding": report.model_dump()}


def _tone(memory: MemoryStore, ids: list[int]) -> str:
    """The day's mood as the emotion detector read the person's messages (not a model's guess): the
    commonest feeling other than neutral, else neutral; '' when nothing was read."""
    if not ids:
        return ""
    marks = ",".join("?" * len(ids))
    labels = [
        r[0]
        for r in memory.db.execute(
            f"select emotion from emotion_log where message_id in ({marks})", ids
        ).fetchall()
    ]
    if not labels:
        return ""
    felt = Counter(label for label in labels if label != "neutral")
    return felt.most_common(1)[0][0] if felt else "neutral"


def _quoted_entities(memory: MemoryStore, material: Material) -> dict[str, Any]:
    """Names said in the pass's messages, each with the sentences that say them, quoted."""
    check, report = _grounding(material), GroundingReport()
    skip = {material.persona, *material.speakers}
    written = []
    found = named(material.messages, skip, memory.components.entity_names())
    check.prefetch([f'{speaker}: "{quote(sentence)}"' for m in found.values() for _, speaker, sentence in m])
    for name, mentions in found.items():
        lines, sources = [], []
        for mid, speaker, sentence in mentions:
            said = f'{speaker}: "{quote(sentence)}"'
            if check.check("entities", said, [f"msg:{mid}"], report=report) is not None:
                lines.append(f"({material.day.isoformat()}) {said}")
                sources.append(f"msg:{mid}")
        existing = memory.components.entity(name)
        new = [line for line in lines if existing is None or line not in existing.text]
        if new:
            text = "\n".join(new) if existing is None else f"{existing.text}\n" + "\n".join(new)
            memory.components.write_entity(name, text, sources)
            written.append(name)
    if not written:
        raise StageSkipped(notice("no name was said in the day's conversation"), report)
    return {"entities_updated": written, "grounding": report.model_dump()}

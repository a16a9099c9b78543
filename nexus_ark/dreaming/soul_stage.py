"""The level-3 dream's last reflection: after re-examining its values, the persona may propose a change to
one section of its soul (persona.md). It is only a proposal: the person reads, edits, accepts or declines
it (soul/keeper.py). Never asked of a model below the reflection capability (the stage has no faithful
fallback), never for a section the person fixed, never twice for the same section while one waits, and
never again once declined."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nexus_ark.clock import Clock
from nexus_ark.dreaming.material import Material
from nexus_ark.dreaming.schemas import SoulEditDraft
from nexus_ark.dreaming.writes import StageSkipped, cited_ids
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import notice
from nexus_ark.prompts.dreaming import SOUL_FIXED, SOUL_SECTIONS, SOUL_WAITING, STAGE_TASKS
from nexus_ark.soul import sections
from nexus_ark.soul.keeper import SoulKeeper, SoulRefused, read_soul
from nexus_ark.soul.records import SoulRecords

INSIGHT_SOURCES = 3  # the dream's newest insights (its values among them) are cited with the messages


@dataclass
class SoulContext:
    """What the soul stage needs besides the day (set on the material by the dream)."""

    folder: Path
    clock: Clock
    since: str  # when the dream began: the insights it wrote since are the proposal's sources too
    fixed: tuple[str, ...] = ()
    enabled: bool = True
    waiting: list[str] = field(default_factory=list)  # sections with an open proposal


def soul_task(memory: MemoryStore, material: Material) -> str:
    """The stage's task with the soul's sections listed, each marked fixed or waiting."""
    ctx: SoulContext | None = material.soul
    if ctx is None:
        return STAGE_TASKS["soul"]
    text = read_soul(ctx.folder / "persona.md") or ""
    waiting = {sections.fold(p.section) for p in SoulRecords(memory, ctx.clock).proposals("open")}
    fixed = {sections.fold(f) for f in ctx.fixed}
    lines = []
    for heading in sections.headings(text):
        mark = SOUL_FIXED if sections.fold(heading) in fixed else ""
        mark += SOUL_WAITING if sections.fold(heading) in waiting else ""
        lines.append(f"- {heading}{mark}")
    return f"{STAGE_TASKS['soul']}\n\n{SOUL_SECTIONS}\n" + "\n".join(lines or ["- (none)"])


def apply_soul_edit(memory: MemoryStore, draft: SoulEditDraft, material: Material) -> dict[str, Any]:
    ctx: SoulContext | None = material.soul
    if ctx is None or not ctx.enabled:
        raise StageSkipped(notice("the person turned soul proposals off"))
    if not draft.section.strip() or not draft.text.strip():
        raise StageSkipped(notice("no change to the soul proposed"))
    insights = [f"item:{i}" for i in memory.archive.newest_ids("insight", ctx.since, INSIGHT_SOURCES)]
    cited = cited_ids(draft.source_ids, material) or [f"msg:{i}" for i in material.shown_ids[-4:]]
    keeper = SoulKeeper(ctx.folder, memory, ctx.clock)
    try:
        proposal = keeper.propose(
            draft.section, draft.text, draft.reason, insights + cited, "dream", fixed=ctx.fixed
        )
    except SoulRefused as exc:
        raise StageSkipped(exc.message) from None
    return {"soul_proposal": proposal.id, "section": proposal.section}

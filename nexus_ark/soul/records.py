"""The soul's rows as the soul's rules read them: the versions and proposals in memory.db, through their
owners in nexus_ark/memory/soul_rows.py, and what makes two proposals the same (their fingerprint). Plain
reads and writes; soul/keeper.py decides when."""

from __future__ import annotations

from nexus_ark.clock import Clock, SystemClock
from nexus_ark.memory.soul_rows import (
    Author,
    Origin,
    ProposalState,
    SoulProposal,
    SoulProposals,
    SoulVersion,
    SoulVersions,
    sha256,
)
from nexus_ark.memory.store import MemoryStore
from nexus_ark.soul.sections import fold, normalised

# The rows' types live with their tables (memory/); the soul's callers and the window name them here.
__all__ = [
    "Author",
    "Origin",
    "ProposalState",
    "SoulProposal",
    "SoulRecords",
    "SoulVersion",
    "fingerprint",
    "sha256",
]


def fingerprint(section: str, text: str) -> str:
    """What makes two proposals the same: the section and the proposed words, spacing aside."""
    return sha256(f"{fold(section)}\n{normalised(text).casefold()}")


class SoulRecords:
    def __init__(self, memory: MemoryStore, clock: Clock | None = None) -> None:
        clock = clock or SystemClock()
        self._versions = SoulVersions(memory.db, clock)
        self._proposals = SoulProposals(memory.db, clock)

    # -- versions ---------------------------------------------------------------------------------
    def versions(self) -> list[SoulVersion]:
        """Every version, oldest first."""
        return self._versions.all()

    def version(self, version_id: int) -> SoulVersion | None:
        return self._versions.get(version_id)

    def latest(self) -> SoulVersion | None:
        return self._versions.latest()

    def version_before(self, version_id: int) -> SoulVersion | None:
        """The version recorded just before `version_id` (None for the first)."""
        return self._versions.before(version_id)

    def add_version(
        self,
        text: str,
        author: Author,
        reason: str = "",
        *,
        proposal_id: int | None = None,
        applied: bool = True,
    ) -> SoulVersion:
        return self._versions.add(text, author, reason, proposal_id, applied)

    def mark_applied(self, version_id: int) -> None:
        self._versions.mark_applied(version_id)

    # -- proposals --------------------------------------------------------------------------------
    def proposals(self, state: ProposalState | None = None) -> list[SoulProposal]:
        """Newest first; one state or all."""
        return self._proposals.all(state)

    def proposal(self, proposal_id: int) -> SoulProposal | None:
        return self._proposals.get(proposal_id)

    def open_for(self, section: str) -> SoulProposal | None:
        wanted = fold(section)
        return next((p for p in self.proposals("open") if fold(p.section) == wanted), None)

    def declined(self, section: str, text: str) -> bool:
        return self._proposals.declined(fingerprint(section, text))

    def add_proposal(
        self,
        section: str,
        current_text: str,
        proposed_text: str,
        reason: str,
        sources: list[str],
        origin: Origin,
    ) -> SoulProposal:
        return self._proposals.add(
            section, current_text, proposed_text, reason, sources, origin, fingerprint(section, proposed_text)
        )

    def decide(
        self,
        proposal_id: int,
        state: ProposalState,
        *,
        accepted_text: str | None = None,
        version_id: int | None = None,
    ) -> None:
        self._proposals.decide(proposal_id, state, accepted_text, version_id)

"""app.souls: the soul's growth as the app offers it: persona.md's history, the persona's proposals to
change it, and the person's decisions. Each soul's owner is its persona's runtime (runtime/soul_owner.py,
`rt.soul`): everything runs on the persona's queue with its owner connection, the history brought up to
date with the file first, so an edit made in another program is a version before anything replaces it.
Here a persona is named by its slug (its runtime opened on use), and the open personas are asked together.
All of it blocks: call it off the UI thread."""

from __future__ import annotations

from nexus_ark.app.personas import Personas
from nexus_ark.errors import NexusArkError
from nexus_ark.soul.records import ProposalState, SoulProposal, SoulVersion


class Souls:
    """Given the personas (whose runtimes own the souls)."""

    def __init__(self, personas: Personas) -> None:
        self._personas = personas

    def versions(self, slug: str) -> list[SoulVersion]:
        """Every version of the persona's soul, oldest first (the newest is persona.md now)."""
        return self._personas.runtime(slug).soul.versions()

    def version(self, slug: str, version_id: int) -> SoulVersion:
        return self._personas.runtime(slug).soul.version(version_id)

    def proposals(self, slug: str, state: ProposalState | None = None) -> list[SoulProposal]:
        """The persona's proposals, newest first (one state, or all)."""
        return self._personas.runtime(slug).soul.proposals(state)

    def proposal(self, slug: str, proposal_id: int) -> SoulProposal:
        return self._personas.runtime(slug).soul.proposal(proposal_id)

    def open_proposals(self) -> list[tuple[str, SoulProposal]]:
        """Every open persona's proposals waiting for the person, newest first."""
        found: list[tuple[str, SoulProposal]] = []
        for runtime in self._personas.runtimes():
            try:
                found += [(runtime.slug, p) for p in runtime.soul.proposals("open")]
            except NexusArkError:
                continue  # a persona closing meanwhile
        return sorted(found, key=lambda pair: pair[1].created_at, reverse=True)

    def accept(self, slug: str, proposal_id: int, text: str | None = None) -> SoulVersion:
        """The section becomes `text` (the person's edit) or the proposed text; the next turn uses it."""
        return self._personas.runtime(slug).soul.accept(proposal_id, text)

    def decline(self, slug: str, proposal_id: int) -> SoulProposal:
        """persona.md stays byte for byte as it is; the same proposal is not made again (every window that
        shows what waits for the person hears `soul_declined`)."""
        return self._personas.runtime(slug).soul.decline(proposal_id)

    def restore(self, slug: str, version_id: int) -> SoulVersion | None:
        """persona.md as that version was, byte for byte (None: it already is)."""
        return self._personas.runtime(slug).soul.restore(version_id)

    def save(self, slug: str, text: str, reason: str = "") -> SoulVersion | None:
        """The editor's save of persona.md, as a version (None: it already says that)."""
        return self._personas.runtime(slug).soul.save(text, reason)

"""NexusApp's part in the soul's growth (mixed into NexusApp): persona.md's history, the persona's proposals
to change it, and the person's decisions. Everything runs on the persona's queue with its owner connection
(runtime/soul_owner.py): the history is brought up to date with the file first, so an edit made in another
program is a version before anything replaces it. All of it blocks: call it off the UI thread."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nexus_ark.errors import NexusArkError
from nexus_ark.notices import notice
from nexus_ark.soul.keeper import SoulKeeper, SoulRefused
from nexus_ark.soul.records import ProposalState, SoulProposal, SoulVersion

if TYPE_CHECKING:
    from nexus_ark.runtime.persona_runtime import PersonaRuntime


class SoulMixin:
    if TYPE_CHECKING:  # RuntimesMixin's

        def runtime(self, slug: str) -> PersonaRuntime: ...
        def runtimes(self) -> list[PersonaRuntime]: ...

    def soul_versions(self, slug: str) -> list[SoulVersion]:
        """Every version of the persona's soul, oldest first (the newest is persona.md now)."""

        def read(keeper: SoulKeeper) -> list[SoulVersion]:
            keeper.reconcile()
            return keeper.records.versions()

        return self.runtime(slug).soul_call("soul history", read)

    def soul_version(self, slug: str, version_id: int) -> SoulVersion:
        def read(keeper: SoulKeeper) -> SoulVersion | None:
            keeper.reconcile()
            return keeper.records.version(version_id)

        found = self.runtime(slug).soul_call("soul version", read)  # one row, not every version's text
        if found is None:
            raise SoulRefused(
                notice("There is no soul version {id}.", id=version_id),
                hint=notice("`nexus-ark soul history` lists them."),
            )
        return found

    def soul_proposals(self, slug: str, state: ProposalState | None = None) -> list[SoulProposal]:
        """The persona's proposals, newest first (one state, or all)."""
        return self.runtime(slug).soul_call("soul proposals", lambda keeper: keeper.records.proposals(state))

    def soul_proposal(self, slug: str, proposal_id: int) -> SoulProposal:
        found = self.runtime(slug).soul_call("soul proposal", lambda k: k.records.proposal(proposal_id))
        if found is None:
            raise SoulRefused(
                notice("There is no soul proposal {id}.", id=proposal_id),
                hint=notice("`nexus-ark soul proposals` lists them."),
            )
        return found

    def open_soul_proposals(self) -> list[tuple[str, SoulProposal]]:
        """Every open persona's proposals waiting for the person, newest first."""
        found: list[tuple[str, SoulProposal]] = []
        for runtime in self.runtimes():
            try:
                found += [(runtime.slug, p) for p in self.soul_proposals(runtime.slug, "open")]
            except NexusArkError:
                continue  # a persona closing meanwhile
        return sorted(found, key=lambda pair: pair[1].created_at, reverse=True)

    def accept_soul_proposal(self, slug: str, proposal_id: int, text: str | None = None) -> SoulVersion:
        """The section becomes `text` (the person's edit) or the proposed text; the next turn uses it."""
        return self.runtime(slug).soul_call(
            "accept soul proposal", lambda keeper: keeper.accept(proposal_id, text), changes=True
        )

    def decline_soul_proposal(self, slug: str, proposal_id: int) -> SoulProposal:
        """persona.md stays byte for byte as it is; the same proposal is not made again. Every window that
        shows what waits for the person hears it (`soul_declined`), as it hears an accepted one
        (`soul_changed`)."""
        declined = self.runtime(slug).soul_call(
            "decline soul proposal", lambda keeper: keeper.decline(proposal_id)
        )
        self.events.publish("soul_declined", persona=slug, proposal=declined)
        return declined

    def restore_soul(self, slug: str, version_id: int) -> SoulVersion | None:
        """persona.md as that version was, byte for byte (None: it already is)."""
        return self.runtime(slug).soul_call(
            "restore soul", lambda keeper: keeper.restore(version_id), changes=True
        )

    def save_soul(self, slug: str, text: str, reason: str = "") -> SoulVersion | None:
        """The editor's save of persona.md, as a version (None: it already says that)."""
        return self.runtime(slug).soul_call(
            "save soul", lambda keeper: keeper.save(text, "editor", reason), changes=True
        )

"""The persona's soul, kept by its runtime (`runtime.soul`, a part of PersonaRuntime): persona.md's history is
brought up to date when the memory opens, every change to the soul runs on the persona's queue with the owner
connection (soul/keeper.py), the next turn speaks from the new soul, and a new proposal is announced to the
person once: a core event for the window, and a desktop notification.

The history is brought up to date with the file before it is read, so an edit made in another program is a
version before anything replaces it. Everything here but reconcile() and announce() blocks on the queue: call
it off the UI thread."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from nexus_ark.errors import NexusArkError
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import NoticeKind, notice
from nexus_ark.runtime.host import SoulHost
from nexus_ark.runtime.work_queue import WorkQueue
from nexus_ark.soul.keeper import SoulKeeper, SoulRefused
from nexus_ark.soul.records import ProposalState, SoulProposal, SoulRecords, SoulVersion

log = logging.getLogger(__name__)
T = TypeVar("T")
ANNOUNCED = "soul_proposals_announced"  # reflection_meta: the newest proposal the person was told of


class SoulOwner:
    def __init__(self, queue: WorkQueue, memory: MemoryStore, host: SoulHost) -> None:
        self._queue = queue
        self._memory = memory
        self._host = host

    def _keeper(self) -> SoulKeeper:
        return SoulKeeper(self._host.persona.folder, self._memory, self._host.host.clock)

    def reconcile(self) -> None:
        """At open (on the queue's thread): an outside edit becomes a version, a change a crash cut off is
        finished. A soul that cannot be read is reported where it is used, not here."""
        slug = self._host.slug
        try:
            before = self._host.persona.soul
            self._keeper().reconcile()
            self._host.persona_changed()
            if self._host.persona.soul != before:
                log.info("%s: persona.md was brought up to date with its history", slug)
        except NexusArkError as exc:
            log.warning("%s: the soul's history is not up to date: %s", slug, exc)

    def call(self, name: str, fn: Callable[[SoulKeeper], T], *, changes: bool = False) -> T:
        """Run `fn(keeper)` on the persona's queue, as the person's work; `changes`: the soul may be new, so
        the next turn (and every room) speaks from the soul as it is now."""

        def run() -> T:
            result = fn(self._keeper())
            if changes:
                self._host.persona_changed()
                self._host.host.events.publish("soul_changed", persona=self._host.slug)
            return result

        result: T = self._queue.call(name, run)
        return result

    # -- what the person reads ----------------------------------------------------------------------
    def versions(self) -> list[SoulVersion]:
        """Every version of the persona's soul, oldest first (the newest is persona.md now)."""

        def read(keeper: SoulKeeper) -> list[SoulVersion]:
            keeper.reconcile()
            return keeper.records.versions()

        return self.call("soul history", read)

    def version(self, version_id: int) -> SoulVersion:
        def read(keeper: SoulKeeper) -> SoulVersion | None:
            keeper.reconcile()
            return keeper.records.version(version_id)

        found = self.call("soul version", read)  # one row, not every version's text
        if found is None:
            raise SoulRefused(
                notice("There is no soul version {id}.", id=version_id),
                hint=notice("`nexus-ark soul history` lists them."),
            )
        return found

    def proposals(self, state: ProposalState | None = None) -> list[SoulProposal]:
        """The persona's proposals, newest first (one state, or all)."""
        return self.call("soul proposals", lambda keeper: keeper.records.proposals(state))

    def proposal(self, proposal_id: int) -> SoulProposal:
        found = self.call("soul proposal", lambda keeper: keeper.records.proposal(proposal_id))
        if found is None:
            raise SoulRefused(
                notice("There is no soul proposal {id}.", id=proposal_id),
                hint=notice("`nexus-ark soul proposals` lists them."),
            )
        return found

    # -- what the person decides --------------------------------------------------------------------
    def accept(self, proposal_id: int, text: str | None = None) -> SoulVersion:
        """The section becomes `text` (the person's edit) or the proposed text; the next turn uses it."""
        return self.call(
            "accept soul proposal", lambda keeper: keeper.accept(proposal_id, text), changes=True
        )

    def decline(self, proposal_id: int) -> SoulProposal:
        """persona.md stays byte for byte as it is; the same proposal is not made again. Every window that
        shows what waits for the person hears it (`soul_declined`), as it hears an accepted one
        (`soul_changed`)."""
        declined = self.call("decline soul proposal", lambda keeper: keeper.decline(proposal_id))
        self._host.host.events.publish("soul_declined", persona=self._host.slug, proposal=declined)
        return declined

    def restore(self, version_id: int) -> SoulVersion | None:
        """persona.md as that version was, byte for byte (None: it already is)."""
        return self.call("restore soul", lambda keeper: keeper.restore(version_id), changes=True)

    def save(self, text: str, reason: str = "") -> SoulVersion | None:
        """The editor's save of persona.md, as a version (None: it already says that)."""
        return self.call("save soul", lambda keeper: keeper.save(text, "editor", reason), changes=True)

    # -- what the persona asks ----------------------------------------------------------------------
    def announce(self) -> None:
        """Tell the person of proposals made since the last time (after a dream, after a turn that used the
        propose_soul_edit tool), each once. On the queue's thread."""
        components = self._memory.components
        try:
            told = int(components.reflection_meta().get(ANNOUNCED) or 0)
        except ValueError:
            told = 0
        new = [p for p in SoulRecords(self._memory, self._host.host.clock).proposals("open") if p.id > told]
        if not new:
            return
        components.set_reflection_meta(ANNOUNCED, str(max(p.id for p in new)))
        slug, host = self._host.slug, self._host.host
        name = self._host.persona.settings.name
        for proposal in sorted(new, key=lambda p: p.id):
            host.events.publish("soul_proposal", persona=slug, proposal=proposal)
            host.notify(
                name,
                notice(
                    "{name} would like to change “{section}” in its soul. Review it in the inbox.",
                    name=name,
                    section=proposal.section,
                    # Not in the sentence: which proposal a click on the notification opens for review.
                    persona=slug,
                    proposal=proposal.id,
                ).of_kind(NoticeKind.SOUL_PROPOSAL),
                slug,
            )

"""The persona's soul, kept by its runtime (PersonaRuntime mixes this in): persona.md's history is brought up
to date when the memory opens, every change to the soul runs on the persona's queue with the owner
connection (soul/keeper.py), the next turn speaks from the new soul, and a new proposal is announced to the
person once: a core event for the window, and a desktop notification."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from nexus_ark.errors import NexusArkError
from nexus_ark.notices import notice
from nexus_ark.soul.keeper import SoulKeeper
from nexus_ark.soul.records import SoulRecords

if TYPE_CHECKING:
    from nexus_ark.memory.store import MemoryStore
    from nexus_ark.personas.store import Persona
    from nexus_ark.runtime.persona_runtime import RuntimeHost
    from nexus_ark.runtime.work_queue import WorkQueue

log = logging.getLogger(__name__)
T = TypeVar("T")
ANNOUNCED = "soul_proposals_announced"  # reflection_meta: the newest proposal the person was told of


class SoulOwner:
    slug: str
    host: RuntimeHost
    persona: Persona
    queue: WorkQueue
    memory: MemoryStore
    _session: Any
    room_sessions: dict[str, Any]

    def _keeper(self) -> SoulKeeper:
        return SoulKeeper(self.persona.folder, self.memory, self.host.clock)

    def _reconcile_soul(self) -> None:
        """At open (on the queue's thread): an outside edit becomes a version, a change a crash cut off is
        finished. A soul that cannot be read is reported where it is used, not here."""
        try:
            before = self.persona.soul
            self._keeper().reconcile()
            self.persona = self.host.load_persona(self.slug)
            if self.persona.soul != before:
                log.info("%s: persona.md was brought up to date with its history", self.slug)
        except NexusArkError as exc:
            log.warning("%s: the soul's history is not up to date: %s", self.slug, exc)

    def _use_new_soul(self) -> None:
        """The next turn (and every room) speaks from the soul as it is now. On the queue's thread."""
        self.persona = self.host.load_persona(self.slug)
        self._session = None
        self.room_sessions.clear()
        self.host.events.publish("soul_changed", persona=self.slug)

    def soul_call(self, name: str, fn: Callable[[SoulKeeper], T], *, changes: bool = False) -> T:
        """Run `fn(keeper)` on the persona's queue, as the person's work; `changes`: the soul may be new."""

        def run() -> T:
            result = fn(self._keeper())
            if changes:
                self._use_new_soul()
            return result

        return self.queue.call(name, run)

    def announce_soul_proposals(self) -> None:
        """Tell the person of proposals made since the last time (after a dream, after a turn that used the
        propose_soul_edit tool), each once. On the queue's thread."""
        components = self.memory.components
        try:
            told = int(components.reflection_meta().get(ANNOUNCED) or 0)
        except ValueError:
            told = 0
        new = [p for p in SoulRecords(self.memory, self.host.clock).proposals("open") if p.id > told]
        if not new:
            return
        components.set_reflection_meta(ANNOUNCED, str(max(p.id for p in new)))
        name = self.persona.settings.name
        for proposal in sorted(new, key=lambda p: p.id):
            self.host.events.publish("soul_proposal", persona=self.slug, proposal=proposal)
            self.host.notify(
                name,
                notice(
                    "{name} would like to change “{section}” in its soul. Review it in the inbox.",
                    name=name,
                    section=proposal.section,
                    # Not in the sentence: which proposal a click on the notification opens for review.
                    persona=self.slug,
                    proposal=proposal.id,
                ),
                self.slug,
            )

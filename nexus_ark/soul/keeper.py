"""Changing persona.md with its history kept: the editor's saves, accepted proposals and restores each
become a version; an edit made in another program becomes one at the next open. Runs on the persona's
owner (its queue thread): it writes the memory and the file.

A change is recorded first (applied = 0, in the same transaction as the proposal's decision), then the file
is replaced whole (a temporary file, fsync, rename), then marked applied. A crash leaves persona.md either
as it was or as it became, never a mix, and the next open finishes a write the crash cut off."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from nexus_ark.clock import Clock, SystemClock
from nexus_ark.config import replace_file
from nexus_ark.errors import PersonaError
from nexus_ark.memory.store import MemoryStore
from nexus_ark.notices import notice
from nexus_ark.personas.model import SOUL_FILE
from nexus_ark.soul import sections
from nexus_ark.soul.records import Author, Origin, SoulProposal, SoulRecords, SoulVersion, sha256

log = logging.getLogger(__name__)

PROPOSAL_TEXT_MAX = 1200
REASON_MAX = 400


class SoulRefused(PersonaError):
    """A proposal that may not be made, or a decision that cannot be taken (the reason in words)."""


def read_soul(path: Path) -> str | None:
    """persona.md exactly as it is on disk (line endings included); None when there is none."""
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise PersonaError(
            notice("Cannot read the soul file {path}: {problem}.", path=str(path), problem=str(exc)),
            hint=notice("Save it as UTF-8 text."),
        ) from exc


def write_soul(path: Path, text: str) -> None:
    """Replace persona.md whole or not at all, byte for byte (no newline translation on Windows)."""
    try:
        replace_file(path, text.encode("utf-8"))
    except OSError as exc:
        raise PersonaError(
            notice("Cannot save {path}: {problem}.", path=str(path), problem=exc.strerror),
            hint=notice("The previous file is unchanged."),
        ) from exc


class SoulKeeper:
    def __init__(self, folder: Path, memory: MemoryStore, clock: Clock | None = None) -> None:
        self.path = folder / SOUL_FILE
        self.memory = memory
        self.records = SoulRecords(memory, clock or SystemClock())

    # -- keeping the history in step with the file ------------------------------------------------
    def reconcile(self) -> SoulVersion | None:
        """Bring the history up to date with persona.md: finish a write a crash cut off, record the file
        as it is when history begins, or record an edit made in another program. Returns the version
        recorded now (None when nothing changed)."""
        for stale in self.path.parent.glob(f"{self.path.name}.*.tmp"):  # a write a crash cut off
            stale.unlink(missing_ok=True)
        text = read_soul(self.path)
        latest = self.records.latest()
        if latest is not None and not latest.applied:
            return self._finish(latest, text)
        if text is None:
            return None  # a missing soul is reported where it is read; restore brings one back
        if latest is None:
            return self._record(text, "first")
        if sha256(text) != latest.sha256:
            return self._record(text, "outside", notice("changed outside Nexus Ark"))
        return None

    def _finish(self, pending: SoulVersion, text: str | None) -> SoulVersion | None:
        """A change recorded but perhaps not written (a crash between the two). The file as the version
        before it left it (or no file): the crash came first, so the change is written now. The file as
        nobody recorded it: edited by hand since, and that edit is the person's latest word: it is
        recorded as a version first (so it is in the history whatever happens next) and kept; the change
        the crash cut off stays in the history, not applied, to be restored if wanted."""
        if text is not None and sha256(text) == pending.sha256:
            self.records.mark_applied(pending.id)
            return None
        before = self.records.version_before(pending.id)
        if text is None or (before is not None and sha256(text) == before.sha256):
            write_soul(self.path, pending.text)  # the app's own change, cut off before the file
            self.records.mark_applied(pending.id)
            log.info("%s: finished a change of the soul a crash cut off", self.path)
            return None
        version = self._record(
            text,
            "outside",
            notice(
                "changed outside Nexus Ark; version {id}, which a crash kept from being written, was not "
                "applied over it",
                id=pending.id,
            ),
        )
        log.warning(
            "%s: edited by hand while soul version %d waited to be written: the edit is kept as version %d; "
            "restore version %d to apply the other",
            self.path,
            pending.id,
            version.id,
            pending.id,
        )
        return version

    def _record(self, text: str, author: Author, reason: str = "") -> SoulVersion:
        with self.memory.db.atomic():
            version = self.records.add_version(text, author, reason)
            if author != "first":  # the file as history found it: nothing happened (the history shows it)
                self._note(version)
        return version

    def _note(self, version: SoulVersion) -> None:
        self.memory.activity.append(
            "soul",
            notice("soul version {id} ({author})", id=version.id, author=version.author),
            data={"version": version.id, "author": version.author, "reason": version.reason},
        )

    def current(self) -> str:
        """The soul now (after reconciling): "" when the file is missing."""
        self.reconcile()
        return read_soul(self.path) or ""

    # -- changes ---------------------------------------------------------------------------------
    def save(
        self, text: str, author: Author, reason: str = "", *, proposal_id: int | None = None
    ) -> SoulVersion | None:
        """Replace persona.md with `text` as a new version (None: it says that already)."""
        before = self.current()
        if text == before and self.records.latest() is not None:
            return None
        with self.memory.db.atomic():
            version = self.records.add_version(text, author, reason, proposal_id=proposal_id, applied=False)
            self._note(version)
        return self._apply(version)

    def _apply(self, version: SoulVersion) -> SoulVersion:
        write_soul(self.path, version.text)
        self.records.mark_applied(version.id)
        return version.model_copy(update={"applied": True})

    def restore(self, version_id: int) -> SoulVersion | None:
        """persona.md as version `version_id` was, byte for byte, as a new version."""
        old = self.records.version(version_id)
        if old is None:
            raise SoulRefused(notice("There is no soul version {id}.", id=version_id))
        return self.save(old.text, "restore", notice("restored version {id}", id=version_id))

    # -- proposals -------------------------------------------------------------------------------
    def propose(
        self,
        section: str,
        text: str,
        reason: str,
        sources: list[str],
        origin: Origin,
        *,
        fixed: Sequence[str] = (),
    ) -> SoulProposal:
        """Record the persona's wish to change one section, or refuse it (SoulRefused says why): a fixed
        section, a second open proposal for a section, one the person declined before, no change at all."""
        heading = " ".join(section.strip().lstrip("#").split())[: sections.HEADING_MAX]
        body = text.strip()
        if not heading or not body:
            raise SoulRefused(notice("A proposal needs a section and its new text."))
        if len(body) > PROPOSAL_TEXT_MAX:
            raise SoulRefused(
                notice("The proposed text is longer than {limit} characters.", limit=PROPOSAL_TEXT_MAX)
            )
        soul = self.current()
        found = sections.find(soul, heading)
        if found is not None:
            heading = found.heading
        if any(sections.fold(f) == sections.fold(heading) for f in fixed):
            raise SoulRefused(
                notice("The section {section} is fixed: only the person changes it.", section=heading)
            )
        current = found.content if found is not None else ""
        if sections.normalised(current) == sections.normalised(body):
            raise SoulRefused(notice("The section {section} already says that.", section=heading))
        if self.records.open_for(heading) is not None:
            raise SoulRefused(
                notice("A proposal for {section} is already waiting for the person.", section=heading)
            )
        if self.records.declined(heading, body):
            raise SoulRefused(notice("The person declined this change to {section} before.", section=heading))
        with self.memory.db.atomic():
            proposal = self.records.add_proposal(
                heading, current, body, reason.strip()[:REASON_MAX], list(dict.fromkeys(sources)), origin
            )
            self.memory.activity.append(
                "soul",
                notice("proposed a change to {section}", section=heading),
                data={"proposal": proposal.id, "section": heading, "origin": origin},
            )
        return proposal

    def _open(self, proposal_id: int) -> SoulProposal:
        proposal = self.records.proposal(proposal_id)
        if proposal is None:
            raise SoulRefused(notice("There is no soul proposal {id}.", id=proposal_id))
        if proposal.state != "open":
            raise SoulRefused(
                notice("Proposal {id} was {state} already.", id=proposal_id, state=proposal.state)
            )
        return proposal

    def accept(self, proposal_id: int, text: str | None = None) -> SoulVersion:
        """Apply a proposal: its section becomes `text` (the person's edit of it) or the proposed text.
        The version and the decision commit together before the file is replaced."""
        proposal = self._open(proposal_id)
        body = (proposal.proposed_text if text is None else text).strip()
        if not body:
            raise SoulRefused(notice("The accepted text is empty: decline the proposal instead."))
        soul = self.current()
        new = sections.replace(soul, proposal.section, body)
        reason = notice("accepted proposal {id}: {reason}", id=proposal.id, reason=proposal.reason)
        with self.memory.db.atomic():
            version = self.records.add_version(
                new, "proposal", reason, proposal_id=proposal.id, applied=False
            )
            self.records.decide(proposal.id, "accepted", accepted_text=body, version_id=version.id)
            self._note(version)
        return self._apply(version)

    def decline(self, proposal_id: int) -> SoulProposal:
        """Leave persona.md as it is; the same proposal is not made again."""
        proposal = self._open(proposal_id)
        with self.memory.db.atomic():
            self.records.decide(proposal.id, "declined")
            self.memory.activity.append(
                "soul",
                notice("declined the change to {section}", section=proposal.section),
                data={"proposal": proposal.id, "section": proposal.section},
            )
        found = self.records.proposal(proposal_id)
        assert found is not None
        return found

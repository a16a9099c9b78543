"""The soul's two tables in memory.db (migration m016), each with its one owner: soul_versions (every
persona.md there has been) and soul_proposals (the changes the persona asked for). Plain reads and writes;
what a proposal's fingerprint is and when to write, nexus_ark/soul/ decides (records.py, keeper.py)."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

import sqlite_utils
from pydantic import BaseModel

from nexus_ark.clock import Clock, SystemClock, iso

Author = Literal["first", "editor", "proposal", "outside", "restore", "import"]
Origin = Literal["dream", "tool"]
ProposalState = Literal["open", "accepted", "declined", "withdrawn"]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class SoulVersion(BaseModel):
    id: int
    created_at: str
    author: Author
    reason: str = ""
    proposal_id: int | None = None
    sha256: str
    text: str
    applied: bool = True


class SoulProposal(BaseModel):
    id: int
    created_at: str
    section: str
    current_text: str  # the section's text when proposed ("" for a new section)
    proposed_text: str
    reason: str
    sources: list[str]  # "msg:ID" (a message), "item:ID" (an insight or another memory)
    origin: Origin
    state: ProposalState = "open"
    decided_at: str | None = None
    accepted_text: str | None = None  # what the person accepted, after their edit
    version_id: int | None = None


_VERSION_COLUMNS = "id, created_at, author, reason, proposal_id, sha256, text, applied"
_PROPOSAL_COLUMNS = (
    "id, created_at, section, current_text, proposed_text, reason, sources, origin, state, decided_at, "
    "accepted_text, version_id"
)


class SoulVersions:
    """soul_versions rows: one per persona.md there has been (applied: written to the file too)."""

    def __init__(self, db: sqlite_utils.Database, clock: Clock | None = None) -> None:
        self.db = db
        self.clock: Clock = clock or SystemClock()

    def all(self) -> list[SoulVersion]:
        """Every version, oldest first."""
        rows = self.db.execute(f"select {_VERSION_COLUMNS} from soul_versions order by id").fetchall()
        return [_version(r) for r in rows]

    def get(self, version_id: int) -> SoulVersion | None:
        row = self.db.execute(
            f"select {_VERSION_COLUMNS} from soul_versions where id = ?", [version_id]
        ).fetchone()
        return _version(row) if row else None

    def latest(self) -> SoulVersion | None:
        row = self.db.execute(
            f"select {_VERSION_COLUMNS} from soul_versions order by id desc limit 1"
        ).fetchone()
        return _version(row) if row else None

    def before(self, version_id: int) -> SoulVersion | None:
        """The version recorded just before `version_id` (None for the first)."""
        row = self.db.execute(
            f"select {_VERSION_COLUMNS} from soul_versions where id < ? order by id desc limit 1",
            [version_id],
        ).fetchone()
        return _version(row) if row else None

    def add(
        self, text: str, author: Author, reason: str, proposal_id: int | None, applied: bool
    ) -> SoulVersion:
        cur = self.db.execute(
            "insert into soul_versions (created_at, author, reason, proposal_id, sha256, text, applied) "
            "values (?, ?, ?, ?, ?, ?, ?)",
            [iso(self.clock.now()), author, reason, proposal_id, sha256(text), text, int(applied)],
        )
        found = self.get(int(cur.lastrowid or 0))
        assert found is not None
        return found

    def mark_applied(self, version_id: int) -> None:
        self.db.execute("update soul_versions set applied = 1 where id = ?", [version_id])


class SoulProposals:
    """soul_proposals rows: one per change the persona asked for, until the person decides."""

    def __init__(self, db: sqlite_utils.Database, clock: Clock | None = None) -> None:
        self.db = db
        self.clock: Clock = clock or SystemClock()

    def all(self, state: ProposalState | None = None) -> list[SoulProposal]:
        """Newest first; one state or all."""
        where, args = ("where state = ?", [state]) if state else ("", [])
        rows = self.db.execute(
            f"select {_PROPOSAL_COLUMNS} from soul_proposals {where} order by id desc", args
        ).fetchall()
        return [_proposal(r) for r in rows]

    def get(self, proposal_id: int) -> SoulProposal | None:
        row = self.db.execute(
            f"select {_PROPOSAL_COLUMNS} from soul_proposals where id = ?", [proposal_id]
        ).fetchone()
        return _proposal(row) if row else None

    def declined(self, fingerprint: str) -> bool:
        """Whether the person declined a proposal with this fingerprint before."""
        row = self.db.execute(
            "select 1 from soul_proposals where fingerprint = ? and state = 'declined' limit 1",
            [fingerprint],
        ).fetchone()
        return row is not None

    def add(
        self,
        section: str,
        current_text: str,
        proposed_text: str,
        reason: str,
        sources: list[str],
        origin: Origin,
        fingerprint: str,
    ) -> SoulProposal:
        cur = self.db.execute(
            "insert into soul_proposals (created_at, section, current_text, proposed_text, reason, sources, "
            "origin, fingerprint) values (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                iso(self.clock.now()),
                section,
                current_text,
                proposed_text,
                reason,
                json.dumps(sources),
                origin,
                fingerprint,
            ],
        )
        found = self.get(int(cur.lastrowid or 0))
        assert found is not None
        return found

    def decide(
        self, proposal_id: int, state: ProposalState, accepted_text: str | None, version_id: int | None
    ) -> None:
        self.db.execute(
            "update soul_proposals set state = ?, decided_at = ?, accepted_text = ?, version_id = ? "
            "where id = ?",
            [state, iso(self.clock.now()), accepted_text, version_id, proposal_id],
        )


def _version(row: Any) -> SoulVersion:
    return SoulVersion(
        id=row[0],
        created_at=row[1],
        author=row[2],
        reason=row[3],
        proposal_id=row[4],
        sha256=row[5],
        text=row[6],
        applied=bool(row[7]),
    )


def _proposal(row: Any) -> SoulProposal:
    return SoulProposal(
        id=row[0],
        created_at=row[1],
        section=row[2],
        current_text=row[3],
        proposed_text=row[4],
        reason=row[5],
        sources=json.loads(row[6] or "[]"),
        origin=row[7],
        state=row[8],
        decided_at=row[9],
        accepted_text=row[10],
        version_id=row[11],
    )

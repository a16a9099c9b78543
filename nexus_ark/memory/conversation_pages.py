"""The conversation a page at a time, for a window that scrolls back through years without loading them.

Reads only: a window opens these on a read-only connection of its own, off its UI thread. Each message
comes with its place among its versions (a regenerated reply's ‹ 2/3 ›).
"""

from __future__ import annotations

from pydantic import BaseModel

from nexus_ark.memory.messages import DEFAULT_ROOM, MessageStore, StoredMessage

PAGE = 60  # messages a page: a few screens, so a scroll past the top never shows an empty view
SEARCH_LIMIT = 2000  # hits a search returns (the newest): more than anyone steps through


class ShownMessage(BaseModel):
    """A message on the conversation's line, with its versions' ids (oldest first) for ‹ n/m ›."""

    message: StoredMessage
    version_ids: list[int]


class MessagePage(BaseModel):
    messages: list[ShownMessage]
    has_older: bool
    has_newer: bool


class ConversationPages:
    def __init__(self, messages: MessageStore, room: str = DEFAULT_ROOM) -> None:
        self.store = messages
        self.db = messages.db
        self.room = room

    def latest(self, limit: int = PAGE) -> MessagePage:
        rows = self._select("", [], "desc", limit)
        return self._page(rows[::-1], has_newer=False)

    def before(self, message_id: int, limit: int = PAGE) -> MessagePage:
        rows = self._select("and id < ?", [message_id], "desc", limit)
        return self._page(rows[::-1])

    def after(self, message_id: int, limit: int = PAGE) -> MessagePage:
        return self._page(self._select("and id > ?", [message_id], "asc", limit))

    def around(self, message_id: int, limit: int = PAGE) -> MessagePage:
        """The page that holds this message near its middle (a search hit far back)."""
        older = self._select("and id < ?", [message_id], "desc", limit // 2)[::-1]
        rest = self._select("and id >= ?", [message_id], "asc", limit - len(older))
        return self._page(older + rest)

    def search(self, text: str, limit: int = SEARCH_LIMIT) -> list[int]:
        """Ids of the messages on the line that contain the text (letters' case ignored), oldest first."""
        text = text.strip()
        if not text:
            return []
        rows = self.db.execute(
            "select id from messages where room = ? and hidden = 0 and instr(lower(content), lower(?)) > 0 "
            "order by id desc limit ?",
            [self.room, text, limit],
        ).fetchall()
        return [r[0] for r in reversed(rows)]

    def shown(self, ids: list[int]) -> list[ShownMessage]:
        """These messages as they are now (after a turn has given them their final words)."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        return self._with_versions(
            self.store.select(f"select * from messages where id in ({marks}) order by id", ids)
        )

    # -- helpers ----------------------------------------------------------------------------------
    def _select(self, where: str, args: list[object], order: str, limit: int) -> list[StoredMessage]:
        return self.store.select(
            f"select * from messages where room = ? and hidden = 0 {where} order by id {order} limit ?",
            [self.room, *args, limit],
        )

    def _exists(self, where: str, args: list[object]) -> bool:
        row = self.db.execute(
            f"select 1 from messages where room = ? and hidden = 0 {where} limit 1", [self.room, *args]
        ).fetchone()
        return row is not None

    def _page(self, messages: list[StoredMessage], *, has_newer: bool | None = None) -> MessagePage:
        if not messages:
            return MessagePage(messages=[], has_older=False, has_newer=False)
        older = self._exists("and id < ?", [messages[0].id])
        newer = self._exists("and id > ?", [messages[-1].id]) if has_newer is None else has_newer
        return MessagePage(messages=self._with_versions(messages), has_older=older, has_newer=newer)

    def _with_versions(self, messages: list[StoredMessage]) -> list[ShownMessage]:
        groups = {m.version_group for m in messages}
        members: dict[int, list[int]] = {g: [] for g in groups}
        if groups:
            marks = ",".join("?" * len(groups))
            for message_id, group in self.db.execute(
                f"select id, coalesce(version_of, id) from messages "
                f"where id in ({marks}) or version_of in ({marks}) order by id",
                [*groups, *groups],
            ).fetchall():
                members[group].append(message_id)
        return [ShownMessage(message=m, version_ids=members.get(m.version_group, [m.id])) for m in messages]

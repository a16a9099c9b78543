"""Which persona's conversation the main window shows, and whether a turn is being shown.

The main window writes it; the controllers it hands it to (conversation, life) read it. One shared object
rather than copies, so a controller never disagrees with the window about the open persona, and never needs
the window itself to ask."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class OpenPersona:
    slug: str = ""
    name: str = ""  # the display name (the slug until the list or the opened persona gives it)
    ready: bool = False  # opened: a message may be sent
    streaming: bool = False  # a reply is being shown

    def idle(self) -> bool:
        """Open, and no reply under way: the view may change under the person."""
        return self.ready and not self.streaming

"""What each kind of memory (an archive item's `kind`: nexus_ark.memory.archive) is called in the window.
One table for every window that names one: the Memory window's search results and the sources a soul
proposal drew on."""

from __future__ import annotations

from ui.util.i18n import N_, tr

MEMORY_KINDS = {
    "message": N_("conversation"),
    "episode": N_("episode"),
    "entity": N_("person or thing"),
    "insight": N_("dream diary"),
    "goal": N_("goal"),
    "core": N_("core memory"),
    "kb_chunk": N_("document"),
}


def memory_kind(kind: str) -> str:
    """A kind of memory in the person's language (a kind this table does not know, as it is stored)."""
    return tr(MEMORY_KINDS[kind]) if kind in MEMORY_KINDS else kind

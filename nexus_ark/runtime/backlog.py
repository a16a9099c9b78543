"""Vectors for what has none (after an import, a crash, a dream or a change of embedder), written by the
persona's owner on its queue like every other write: background steps of a slice each, so the person's work
goes first (a running step stops at its next small batch) and nothing else opens a connection that writes."""

from __future__ import annotations

import threading
from collections.abc import Callable

from nexus_ark.memory.store import MemoryStore
from nexus_ark.providers.embedders import Embedder, backlog_work
from nexus_ark.runtime.work_queue import AGAIN, WorkItem, WorkQueue

STEP_ITEMS = 64  # one queue step: a second or two on the bundled embedder, then the queue looks again


def queue_backlog(queue: WorkQueue, memory: Callable[[], MemoryStore], embedder: Embedder) -> WorkItem | None:
    """Queue the pass; None when one for this embedder is already queued or running (it picks up what was
    added since: each step looks at what is pending anew). Resumes at the next start when stopped."""

    def step(cancel: threading.Event) -> object:
        archive = memory().archive
        with backlog_work():  # the embedder serves a turn's own texts before this batch
            archive.embed_pending(embedder, cancel=cancel, limit=STEP_ITEMS)
        return AGAIN if archive.pending_vectors(embedder) else None

    return queue.submit_background("embed backlog", step, key=f"embed:{embedder.model_id}")

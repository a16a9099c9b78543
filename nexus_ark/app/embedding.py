"""NexusApp's embedding: the emotion reader, the app's embedder and the background pass that gives
vectors to what has none (mixed into NexusApp)."""

from __future__ import annotations

import logging
import threading

from nexus_ark.errors import NexusArkError
from nexus_ark.mind.emotion import EmotionDetector
from nexus_ark.providers.embedders import Embedder, backlog_work, make_embedder

log = logging.getLogger(__name__)


class EmbeddingMixin:
    @property
    def emotions(self) -> EmotionDetector:
        """The detector every turn reads the person's feelings with (also for imported history)."""
        return self._emotions

    def embedder(self) -> Embedder:
        """The app's embedder (one per process). Cheap to create: models load and servers are reached on
        first use, so call what uses it off the UI thread."""
        with self._embedder_lock:
            config = self.settings.embedder
            if self._embedder is None or self._embedder_spec != config.pool_key():
                self._embedder = make_embedder(
                    config.spec or "bundled",
                    api_base=config.api_base,
                    api_key_ref=config.api_key,
                    timeouts=config.timeouts,
                )
                self._embedder_spec = config.pool_key()
            return self._embedder

    def _embedder_for_recall(self) -> tuple[Embedder | None, str]:
        """The embedder, or None and why: a chat goes on with keyword recall when it cannot be had."""
        try:
            return self.embedder(), ""
        except NexusArkError as exc:
            log.warning("recall by meaning unavailable: %s", exc)
            return None, str(exc)

    def _embed_in_background(self, slug: str, embedder: Embedder) -> None:
        """Give every memory of a persona a vector from the current embedder, on a thread of its own
        with its own connection: after an import, a crash, or a change of embedder. Resumable, and a
        no-op when nothing is pending. Asked again while it runs, it makes one more pass when done."""
        with self._state_lock:
            if self._stopping.is_set():
                return
            if slug in self._embedding:
                self._embed_again[slug] = embedder
                return
            self._embedding.add(slug)

        def run() -> None:
            current: Embedder | None = embedder
            while current is not None:
                try:
                    store = self.open_memory(slug)
                    try:
                        with backlog_work():
                            store.archive.embed_pending(current, cancel=self._stopping)
                    finally:
                        store.close()
                except Exception as exc:  # logged, and resumed at the next start: nothing is lost
                    log.warning("background embedding for %s stopped: %s", slug, exc)
                with self._state_lock:
                    current = None if self._stopping.is_set() else self._embed_again.pop(slug, None)
                    if current is None:
                        self._embedding.discard(slug)
                        self._embed_again.pop(slug, None)

        thread = threading.Thread(target=run, name=f"embed-{slug}", daemon=True)
        self._threads.append(thread)
        thread.start()

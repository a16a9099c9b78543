"""NexusApp's embedding: the emotion reader, the app's embedder and the background pass that gives
vectors to what has none (mixed into NexusApp)."""

from __future__ import annotations

import logging

from nexus_ark.errors import NexusArkError
from nexus_ark.mind.emotion import EmotionDetector
from nexus_ark.providers.embedders import Embedder, make_embedder

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
        """Give every memory of a persona a vector from `embedder`: background steps on the persona's queue,
        written by its owner (after an import, or a change of embedder). Resumable, and a no-op when nothing
        is pending; resumed at the next start when the app closes first."""
        self.runtime(slug).embed_backlog(embedder)

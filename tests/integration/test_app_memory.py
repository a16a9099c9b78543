"""Memory inside the running app: recall in the chat turn, background (re-)embedding after an import or
a change of embedder."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexus_ark.agent.session import TurnResult
from nexus_ark.app import NexusApp
from nexus_ark.config import save_toml_model
from nexus_ark.memory.conversation_index import Turn, index_turns
from nexus_ark.memory.store import MemoryStore
from nexus_ark.model_config import ModelConfig
from nexus_ark.providers.embedders import LlamaCppEmbedder
from nexus_ark.providers.scripted import ScriptedBackend

pytestmark = pytest.mark.integration


def _wait_embedded(app: NexusApp, slug: str, embedder, timeout: float = 120) -> None:
    """The backlog is background steps on the persona's queue: done when the queue is idle."""
    assert app.personas.runtime(slug).queue.wait_idle(timeout), "background embedding did not finish"
    left = app.personas.change_memory(slug, "check", lambda store: store.archive.pending_vectors(embedder))
    assert left == 0, f"{left} memories still without a vector"


def test_chat_turn_recalls_and_remembers(data_dir: Path) -> None:
    backend = ScriptedBackend(["Of course: Keiko's birthday is on March 3rd.", "Noted."])
    app = NexusApp(data_dir, backend_factory=lambda config: backend).open()
    try:

        def plant(store: MemoryStore) -> None:
            index_turns(
                store.archive,
                [
                    Turn(
                        speaker="Mika",
                        text="My sister Keiko's birthday is on March 3rd.",
                        created_at="2025-12-01T10:00:00",
                        source_id="old-1",
                    ),
                    Turn(
                        speaker="Mika",
                        text="I repaired my bicycle today.",
                        created_at="2025-12-02T10:00:00",
                        source_id="old-2",
                    ),
                ],
            )
            store.components.set_core_memory("Mika is my friend.")

        app.personas.change_memory("aria", "plant", plant)
        runtime = app.personas.runtime("aria")
        runtime.open()
        _wait_embedded(app, "aria", app.models.embedder())
        result = next(r for r in runtime.send("When is Keiko's birthday?") if isinstance(r, TurnResult))
        assert result.status == "complete"
        prompt = backend.requests[-1]
        assert "Mika is my friend." in prompt[0].content, "core memory is in the system prompt"
        assert "Keiko's birthday is on March 3rd" in prompt[-2].content, "the old fact was recalled"
        assert prompt[-1].content == "When is Keiko's birthday?", "after the notes, the person's words"
        _wait_embedded(app, "aria", app.models.embedder())  # the turn's two messages, after the reply
        found = app.personas.change_memory(
            "aria", "search", lambda store: store.archive.search("Keiko birthday", app.models.embedder(), k=5)
        )
        kinds = [h.source_id for h in found]
        assert any(k and k.startswith("msg:") for k in kinds), "the new turn is now a memory too"
    finally:
        app.close()


@pytest.mark.slow
def test_changing_the_embedder_reembeds_in_the_background(data_dir: Path, bundled_model: Path) -> None:
    app = NexusApp(data_dir, backend_factory=lambda config: ScriptedBackend(["ok"])).open()
    notes = [
        Turn(speaker="Mika", text=f"Note {i}: the harbour boats.", created_at="2026-01-01T10:00:00")
        for i in range(40)
    ]
    app.personas.change_memory("aria", "plant", lambda store: index_turns(store.archive, notes))
    app.personas.session("aria")
    _wait_embedded(app, "aria", app.models.embedder())
    app.settings.embedder = ModelConfig(spec=f"gguf:{bundled_model}")
    save_toml_model(app.layout.config_file, app.settings)
    app.close()

    restarted = NexusApp(data_dir, backend_factory=lambda config: ScriptedBackend(["ok"])).open()
    try:
        assert isinstance(restarted.models.embedder(), LlamaCppEmbedder)
        restarted.personas.session("aria")
        _wait_embedded(restarted, "aria", restarted.models.embedder())
        store = restarted.personas.open_memory("aria")
        try:
            models = {r[0] for r in store.db.execute("select model from embedding_models")}
            assert len(models) == 2
            assert store.archive.search("boats in the harbour", restarted.models.embedder(), mode="vector")
        finally:
            store.close()
    finally:
        restarted.close()

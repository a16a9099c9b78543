"""Memory inside the running app: recall in the chat turn, background (re-)embedding after an import or
a change of embedder."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from nexus_ark.agent.session import TurnResult
from nexus_ark.app import NexusApp
from nexus_ark.config import save_toml_model
from nexus_ark.memory.conversation_index import Turn, index_turns
from nexus_ark.model_config import ModelConfig
from nexus_ark.providers.embedders import LlamaCppEmbedder
from nexus_ark.providers.scripted import ScriptedBackend

pytestmark = pytest.mark.integration


def _wait_embedded(app: NexusApp, slug: str, embedder, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        store = app.open_memory(slug)
        try:
            if store.archive.pending_vectors(embedder) == 0:
                return
        finally:
            store.close()
        time.sleep(0.2)
    raise AssertionError("background embedding did not finish")


def test_chat_turn_recalls_and_remembers(data_dir: Path) -> None:
    backend = ScriptedBackend(["Of course: Keiko's birthday is on March 3rd.", "Noted."])
    app = NexusApp(data_dir, backend_factory=lambda config: backend).open()
    try:
        store = app.open_memory("aria")
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
        store.close()
        session = app.session("aria")
        _wait_embedded(app, "aria", app.embedder())
        result = next(r for r in session.send("When is Keiko's birthday?") if isinstance(r, TurnResult))
        assert result.status == "complete"
        prompt = backend.requests[-1]
        assert "Mika is my friend." in prompt[0].content, "core memory is in the system prompt"
        assert "Keiko's birthday is on March 3rd" in prompt[-1].content, "the old fact was recalled"
        assert prompt[-1].content.endswith("When is Keiko's birthday?")
        assert session.embed_new_memories() == 2
        kinds = [h.source_id for h in session.memory.archive.search("Keiko birthday", app.embedder(), k=5)]
        assert any(k and k.startswith("msg:") for k in kinds), "the new turn is now a memory too"
    finally:
        app.close()


@pytest.mark.slow
def test_changing_the_embedder_reembeds_in_the_background(data_dir: Path, bundled_model: Path) -> None:
    app = NexusApp(data_dir, backend_factory=lambda config: ScriptedBackend(["ok"])).open()
    store = app.open_memory("aria")
    index_turns(
        store.archive,
        [
            Turn(speaker="Mika", text=f"Note {i}: the harbour boats.", created_at="2026-01-01T10:00:00")
            for i in range(40)
        ],
    )
    store.close()
    app.session("aria")
    _wait_embedded(app, "aria", app.embedder())
    app.settings.embedder = ModelConfig(spec=f"gguf:{bundled_model}")
    save_toml_model(app.layout.config_file, app.settings)
    app.close()

    restarted = NexusApp(data_dir, backend_factory=lambda config: ScriptedBackend(["ok"])).open()
    try:
        assert isinstance(restarted.embedder(), LlamaCppEmbedder)
        restarted.session("aria")
        _wait_embedded(restarted, "aria", restarted.embedder())
        store = restarted.open_memory("aria")
        try:
            models = {r[0] for r in store.db.execute("select model from embedding_models")}
            assert len(models) == 2
            assert store.archive.search("boats in the harbour", restarted.embedder(), mode="vector")
        finally:
            store.close()
    finally:
        restarted.close()

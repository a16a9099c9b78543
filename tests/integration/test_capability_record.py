"""The capability record: what a model is, read from the model itself (GGUF metadata, Ollama's /api/show)."""

from __future__ import annotations

import pytest

from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend
from nexus_ark.providers.ollama_backend import OllamaBackend
from tests.integration.wire_server import SERVED_MODEL, WireServer

pytestmark = pytest.mark.integration


def test_the_bundled_gguf_says_it_is_too_small_to_reflect(shared_llama: LlamaCppBackend) -> None:
    record = shared_llama.capabilities()
    assert 130_000_000 < (record.parameters or 0) < 140_000_000  # SmolLM2-135M
    assert record.context_length == 8192  # trained context, from the GGUF's llama.context_length
    assert "<|im_start|>" in record.chat_template
    assert record.reflects is False


def test_ollama_show_fills_the_record(ollama_wire: WireServer) -> None:
    record = OllamaBackend(SERVED_MODEL, ollama_wire.url).capabilities()
    assert record.parameters == 134_515_008 and record.context_length == 8192
    assert record.tools is True and record.reflects is False

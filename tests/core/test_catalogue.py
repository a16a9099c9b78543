from __future__ import annotations

from nexus_ark.model_config import ModelSpec
from nexus_ark.providers.catalogue import CatalogueEntry, load_catalogue, total_ram_gb


def test_shipped_catalogue_is_valid_and_starts_with_the_bundled_model() -> None:
    entries = load_catalogue()
    assert entries[0].spec == "bundled"
    for entry in entries:
        ModelSpec.parse(entry.spec)
    assert any(e.kind == "ollama" and "ja" in e.languages for e in entries), "a Japanese-capable suggestion"


def test_fits_in_memory() -> None:
    entry = CatalogueEntry(spec="ollama:x", name="x", ram_gb=8)
    assert entry.fits(24) is True
    assert entry.fits(8) is False
    assert entry.fits(None) is None
    assert total_ram_gb() is None or total_ram_gb() > 1

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


def test_catalogue_says_which_suggested_models_call_tools() -> None:
    by_spec = {e.spec: e for e in load_catalogue()}
    # As Ollama's /api/show lists them: gemma3 has no "tools" capability, qwen2.5 and llama3.2 do.
    assert by_spec["ollama:gemma3:4b"].tools is False
    assert by_spec["ollama:qwen2.5:7b"].tools is True and by_spec["ollama:llama3.2:3b"].tools is True
    assert by_spec["bundled"].tools is False, "the bundled model gets no native tools in conversation"
    assert any(e.tools and "ja" in e.languages and e.kind == "ollama" for e in by_spec.values()), (
        "a Japanese-capable suggestion that can use the memory tools"
    )


class _Kernel32:
    """kernel32's GlobalMemoryStatusEx, as Windows answers it: it refuses a struct whose dwLength is not
    the size of MEMORYSTATUSEX (64 bytes) and otherwise fills it in."""

    def __init__(self, total_bytes: int) -> None:
        self.total_bytes = total_bytes

    def GlobalMemoryStatusEx(self, ref) -> int:
        status = ref._obj
        if status.dwLength != 64:
            return 0
        status.ullTotalPhys = self.total_bytes
        status.ullAvailPhys = self.total_bytes // 2
        return 1


def test_total_ram_on_windows(monkeypatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "psutil", None)  # psutil is optional: the fallback must work alone
    assert total_ram_gb(platform="win32", kernel32=_Kernel32(16 * 2**30)) == 16.0
    entry = CatalogueEntry(spec="ollama:x", name="x", ram_gb=8)
    assert entry.fits(total_ram_gb(platform="win32", kernel32=_Kernel32(16 * 2**30))) is True
    assert entry.fits(total_ram_gb(platform="win32", kernel32=_Kernel32(8 * 2**30))) is False


def test_total_ram_here_is_known() -> None:
    ram = total_ram_gb()
    assert ram is not None and ram > 0.5, "Linux and macOS report their memory through sysconf"

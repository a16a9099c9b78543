from __future__ import annotations

import pytest

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


def test_downloadable_entries_pin_a_revision_and_a_sha256_and_name_a_plain_gguf(tmp_path) -> None:
    from nexus_ark.providers.catalogue import find_entry, installed_path, language_advice, persona_spec

    entries = load_catalogue()
    qwen = find_entry(entries, "qwen2.5-1.5b")
    assert qwen is not None and qwen.download is not None
    assert len(qwen.download.revision) == 40 and len(qwen.download.sha256) == 64
    assert qwen.download.size == 1_117_320_736
    # The language notice's one click for a Japanese persona on the bundled model: the file the app
    # downloads itself, before the same model in Ollama (which needs another program).
    advice = language_advice("bundled", "ja", entries, 16.0)
    assert advice is not None and advice.suggestion is qwen
    models = tmp_path / "models"
    models.mkdir()
    assert installed_path(qwen, models) is None
    (models / "qwen2.5-1.5b-instruct-q4_k_m.gguf.part").write_bytes(b"x" * 10)
    assert installed_path(qwen, models) is None, "a part file is not a model"
    spec = persona_spec(qwen, models)
    assert spec == f"gguf:{models / 'qwen2.5-1.5b-instruct-q4_k_m.gguf'}"
    assert qwen.matches(spec) and language_advice(spec, "ja", entries, 16.0) is None  # it speaks Japanese


def test_a_broken_catalogue_names_the_file_and_the_field(tmp_path) -> None:
    import pytest

    from nexus_ark.errors import ConfigError

    bad = {
        "file": 'file = "../escape.gguf"',
        "sha256": 'sha256 = "not-a-hash"',
        "size": "size = -1",
    }
    for field, line in bad.items():
        good = {
            "file": 'file = "m.gguf"',
            "sha256": f'sha256 = "{"a" * 64}"',
            "size": "size = 10",
        }
        good[field] = line
        path = tmp_path / f"catalogue-{field}.toml"
        path.write_text(
            '[[model]]\nspec = "gguf:m.gguf"\nname = "M"\n[model.download]\nrepo = "o/r"\nrevision = "abc"\n'
            + "\n".join(good.values())
            + "\n",
            encoding="utf-8",
        )
        with pytest.raises(ConfigError) as refused:
            load_catalogue(path)
        assert str(path) in refused.value.message and field in refused.value.message


def test_a_catalogue_nested_too_deep_is_a_config_error_not_a_crash(tmp_path) -> None:
    """NEXUS_ARK_CATALOGUE may name any file: tomllib's RecursionError must not end the command."""
    import pytest

    from nexus_ark.errors import ConfigError

    path = tmp_path / "catalogue.toml"
    path.write_text("x = " + "[" * 3000 + "]" * 3000 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_catalogue(path)
    assert str(path) in refused.value.message and "nested too deeply" in refused.value.message


def test_the_first_start_recommends_the_most_capable_download_that_fits_and_says_how_long_it_takes() -> None:
    from nexus_ark.providers.catalogue import ASSUMED_BYTES_PER_S, find_entry, recommended_download

    entries = load_catalogue()
    eight = recommended_download(entries, 8.0)
    assert eight is not None and eight.entry.id == "qwen3-4b"  # no licence to agree to before Gemma 3 4B
    assert eight.size_bytes == 2_497_280_736
    assert eight.seconds == pytest.approx(2_497_280_736 / ASSUMED_BYTES_PER_S) and not eight.speed_measured
    assert eight.minutes == 8
    measured = recommended_download(entries, 8.0, bytes_per_s=50_000_000)
    assert measured is not None and measured.speed_measured and measured.minutes == 1
    four = recommended_download(entries, 4.0)
    assert four is not None and four.entry.id == "qwen2.5-1.5b", "a 4B model does not fit 4 GB"
    unknown = recommended_download(entries, None)
    assert unknown is not None and unknown.entry.ram_gb <= 4, "memory unknown: a modest laptop's model"
    assert recommended_download(entries, 1.0) is None, "nothing the app downloads fits 1 GB"
    assert find_entry(entries, "qwen3-4b") is eight.entry


def test_the_newer_small_models_are_pinned_to_a_revision_and_a_sha256() -> None:
    from nexus_ark.providers.catalogue import find_entry

    entries = load_catalogue()
    for name, size in (("qwen3-4b", 2_497_280_736), ("gemma3-4b", 2_489_757_856), ("gemma3-1b", 806_058_240)):
        entry = find_entry(entries, name)
        assert entry is not None and entry.download is not None, name
        assert len(entry.download.revision) == 40 and int(entry.download.revision, 16) >= 0, name
        assert len(entry.download.sha256) == 64 and entry.download.size == size, name
        assert entry.spec == f"gguf:{entry.download.file}", name
    assert find_entry(entries, "gemma3-4b").accept_license, "the Gemma terms ask to be agreed to first"

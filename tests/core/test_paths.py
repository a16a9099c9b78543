from __future__ import annotations

from pathlib import Path

import pytest

from nexus_ark.errors import DataDirError
from nexus_ark.paths import DataLayout, ensure_writable_dir, resolve_data_dir


def test_explicit_dir_beats_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEXUS_ARK_HOME", str(tmp_path / "env"))
    assert resolve_data_dir(tmp_path / "cli") == (tmp_path / "cli").resolve()
    assert resolve_data_dir(None) == (tmp_path / "env").resolve()


def test_platform_dir_when_nothing_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NEXUS_ARK_HOME", raising=False)
    assert "NexusArk" in str(resolve_data_dir(None))


def test_unwritable_data_dir_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    target = blocker / "data"
    with pytest.raises(DataDirError) as err:
        ensure_writable_dir(target)
    assert str(target) in str(err.value)
    assert "--data-dir" in str(err.value)


def test_layout_creates_its_folders(tmp_path: Path) -> None:
    layout = DataLayout(tmp_path / "d")
    layout.create()
    for sub in ("personas", "models", "logs", "backups"):
        assert (tmp_path / "d" / sub).is_dir()

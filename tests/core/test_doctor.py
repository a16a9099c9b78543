"""`nexus-ark doctor` says what is missing instead of "ok" (the checks that need no model or server)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nexus_ark.doctor import check_notifications, check_personas, check_shipped
from nexus_ark.personas.store import PersonaStore

REPO = Path(__file__).resolve().parents[2]


def test_an_install_without_its_shipped_data_fails_and_names_what_is_missing(tmp_path: Path) -> None:
    checks = {c.name: c for c in check_shipped(tmp_path)}
    assert {n: c.status for n, c in checks.items()} == {
        "shipped personas": "fail",
        "translations": "fail",
        "model catalogue": "fail",
    }
    assert str(tmp_path / "personas") in checks["shipped personas"].detail
    assert str(tmp_path / "assets" / "translations" / "ja.json") in checks["translations"].detail
    assert str(tmp_path / "models" / "catalogue.toml") in checks["model catalogue"].detail


def test_damaged_shipped_data_fails(tmp_path: Path) -> None:
    for name in ("personas", "assets", "models"):
        shutil.copytree(REPO / name, tmp_path / name)
    (tmp_path / "personas" / "aria" / "persona.md").unlink()
    (tmp_path / "assets" / "translations" / "ja.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "models" / "catalogue.toml").write_text("[[model]\n", encoding="utf-8")
    checks = {c.name: c for c in check_shipped(tmp_path)}
    assert all(c.status == "fail" for c in checks.values()), checks
    assert "aria" in checks["shipped personas"].detail and "persona.md" in checks["shipped personas"].detail


def test_the_shipped_data_of_this_checkout_is_complete() -> None:
    checks = {c.name: c for c in check_shipped(REPO)}
    assert all(c.status == "ok" for c in checks.values()), checks
    assert "Aria" in checks["shipped personas"].detail and "ひかり" in checks["shipped personas"].detail


def test_without_a_session_bus_notifications_are_not_claimed_to_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A bus address nobody listens on: what a desktop without D-Bus (a server, a container) looks like.
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path / 'no-bus'}")
    check = check_notifications()
    assert check.status == "warn"
    assert "no session D-Bus" in check.detail
    assert "inbox" in check.detail and "tray" in check.detail  # what still works, said to the person


def test_a_persona_without_its_soul_is_named(tmp_path: Path) -> None:
    data = tmp_path / "data"
    PersonaStore(data / "personas").seed_from(REPO / "personas", [])
    assert check_personas(str(data)).status == "ok"
    (data / "personas" / "aria" / "persona.md").unlink()
    check = check_personas(str(data))
    assert check.status == "warn"
    assert "aria" in check.detail and "persona.md is missing" in check.detail


def test_doctor_names_the_downloaded_models_and_an_unfinished_download(tmp_path: Path) -> None:
    from nexus_ark.doctor import check_downloads

    models = tmp_path / "models"
    models.mkdir()
    assert "none" in check_downloads(str(tmp_path)).detail
    (models / "qwen2.5-3b-instruct-q4_k_m.gguf.part").write_bytes(b"x" * 100)
    with (models / "qwen2.5-1.5b-instruct-q4_k_m.gguf").open("wb") as fh:
        fh.truncate(
            1_117_320_736
        )  # sparse: its size is what "installed" reads (only verified files get the name)
    check = check_downloads(str(tmp_path))
    assert check.status == "ok"
    assert (
        check.detail.startswith("qwen2.5-1.5b;")
        and "unfinished: qwen2.5-3b-instruct-q4_k_m.gguf.part" in check.detail
    )

"""Help > About shows what this copy is (version, build date, commit) and the licences it ships with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QListWidget, QPlainTextEdit

from nexus_ark import about
from ui.settings.about_dialog import THIRD_PARTY, AboutDialog
from ui.util import i18n


def _select(qtbot, dialog: AboutDialog, starts_with: str) -> str:
    licences = dialog.findChild(QListWidget, "licenceList")
    rows = [licences.item(i).text() for i in range(licences.count())]
    row = next(i for i, text in enumerate(rows) if text.startswith(starts_with))
    licences.setCurrentRow(row)
    text = dialog.findChild(QPlainTextEdit, "licenceText")
    qtbot.waitUntil(lambda: text.toPlainText() not in ("", i18n.tr("Loading…")), timeout=10_000)
    return text.toPlainText()


@pytest.mark.qt_log_ignore("propagateSizeHints")  # offscreen platform, shown dialog
def test_about_shows_the_version_and_the_model_licences(qtbot, tmp_path: Path) -> None:
    dialog = AboutDialog(tmp_path)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    info = about.build_info()
    qtbot.waitUntil(lambda: dialog.info is not None, timeout=30_000)  # read on a worker (git, for a checkout)
    assert info.version in dialog.details.text()
    assert info.version in dialog.title.text()
    assert str(tmp_path) in dialog.details.text()
    licences = dialog.findChild(QListWidget, "licenceList")
    rows = [licences.item(i).text() for i in range(licences.count())]
    # The bundled models come first, each with its licence.
    assert rows[0].startswith("SmolLM2-135M-Instruct") and rows[0].endswith("Apache-2.0")
    assert rows[1].startswith("multilingual-e5-small") and rows[1].endswith("MIT")
    smollm = _select(qtbot, dialog, "SmolLM2")
    assert "Apache License" in smollm and "Version 2.0" in smollm and "Hugging Face" in smollm
    e5 = _select(qtbot, dialog, "multilingual-e5-small")
    assert "MIT License" in e5 and "intfloat" in e5
    qt = _select(qtbot, dialog, "Qt 6")
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in qt
    # The libraries: collected from this environment when running from source.
    libraries = _select(qtbot, dialog, "Libraries")
    assert "llama_cpp_python" in libraries and "numpy" in libraries and "PySide6_Essentials" in libraries


@pytest.mark.qt_log_ignore("propagateSizeHints")
def test_a_built_app_shows_its_baked_in_build_info(qtbot, tmp_path: Path, monkeypatch) -> None:
    """build.spec writes _build_info.json and THIRD_PARTY_LICENSES.txt; the dialog reads them."""
    info_file = tmp_path / "_build_info.json"
    info_file.write_text(
        json.dumps({"version": "9.8.7", "build_date": "2031-02-03T04:05:06Z", "commit": "abc123def456"}),
        encoding="utf-8",
    )
    licences = tmp_path / "licenses"
    licences.mkdir()
    for licence in (*about.MODEL_LICENCES, *about.OTHER_LICENCES):
        (licences / licence.file).write_text((about.LICENSES_DIR / licence.file).read_text("utf-8"), "utf-8")
    (licences / about.THIRD_PARTY_FILE).write_text("baked third-party list", encoding="utf-8")
    monkeypatch.setattr(about, "BUILD_INFO_FILE", info_file)
    monkeypatch.setattr(about, "LICENSES_DIR", licences)
    i18n.set_language("ja")
    try:
        dialog = AboutDialog(None)
        qtbot.addWidget(dialog)
        dialog.show()
        qtbot.waitUntil(lambda: dialog.info is not None, timeout=30_000)
        assert "Nexus Ark 9.8.7" in dialog.findChild(type(dialog.details), "aboutTitle").text()
        shown = dialog.details.text()
        assert "バージョン 9.8.7" in shown and "ビルド日時 2031-02-03T04:05:06Z" in shown
        assert "コミット abc123def456" in shown
        assert _select(qtbot, dialog, "ライブラリ") == "baked third-party list"
    finally:
        i18n.set_language("en")


@pytest.mark.parametrize("broken", ["", "{not json", json.dumps({"version": "1.0"})])
def test_a_damaged_build_info_falls_back_to_the_source_version(tmp_path: Path, monkeypatch, broken) -> None:
    info_file = tmp_path / "_build_info.json"
    info_file.write_text(broken, encoding="utf-8")
    monkeypatch.setattr(about, "BUILD_INFO_FILE", info_file)
    info = about.build_info()
    assert info.from_source and info.version and info.build_date == ""


def test_collected_third_party_licences_name_each_library_and_carry_texts() -> None:
    text = about.collect_third_party()
    assert "llama_cpp_python" in text and "MIT" in text
    assert "pyinstaller" not in text.lower().split("=" * 78)[0]  # build tools are left out
    assert all(f"\n{tool} " not in text for tool in ("pip", "setuptools", "pyinstaller"))
    assert "Permission is hereby granted" in text  # an MIT licence text from a .dist-info folder
    assert THIRD_PARTY == "third-party"

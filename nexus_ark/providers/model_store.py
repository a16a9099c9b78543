"""The models a person has and can get: catalogue entries with what is installed, what fits, and the one
way to fetch (a GGUF from the Hub into models/, or an Ollama pull) or remove one, for the CLI and the window.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from nexus_ark.errors import NexusArkError, ProviderUnavailableError
from nexus_ark.notices import notice
from nexus_ark.providers.catalogue import (
    CatalogueEntry,
    find_entry,
    installed_path,
    model_fits,
    persona_spec,
)
from nexus_ark.providers.model_download import (
    DownloadCancelled,
    DownloadError,
    Progress,
    ProgressFn,
    TransferRate,
    download_hub_file,
    lock_path,
    part_path,
)
from nexus_ark.providers.ollama_backend import OllamaBackend, PullCancelled, same_model

OLLAMA_DOWN_HINT = notice(
    "Start Ollama (open the Ollama app, or run `ollama serve`), or install it from https://ollama.com, then "
    "try again. Or choose a model that Nexus Ark downloads from Hugging Face and runs itself."
)


class LicenceNotAccepted(NexusArkError):
    """The model's terms ask to be agreed to before the first byte is fetched."""


@dataclass(frozen=True)
class ModelStatus:
    entry: CatalogueEntry
    installed: bool | None  # None: cannot tell (Ollama not reachable)
    fits: bool
    path: Path | None = None  # a downloaded GGUF
    partial_bytes: int = 0  # what an interrupted download left (it goes on from there)

    @property
    def spec(self) -> str:
        """What a persona's model setting says to use it (a downloaded file by its full path)."""
        return f"gguf:{self.path}" if self.path else self.entry.spec

    def as_json(self) -> dict[str, object]:
        e = self.entry
        return {
            "id": e.id,
            "name": e.name,
            "spec": e.spec,
            "source": "huggingface" if e.download else e.kind,
            "size_bytes": e.size_bytes(),
            "ram_gb": e.ram_gb,
            "languages": e.languages,
            "tools": e.tools,
            "license": e.license,
            "license_url": e.license_url,
            "accept_license": e.accept_license,
            "installed": self.installed,
            "fits": self.fits,
            "path": str(self.path) if self.path else None,
            "partial_bytes": self.partial_bytes,
        }


def model_statuses(
    entries: list[CatalogueEntry],
    models_dir: Path,
    ram_gb: float | None,
    ollama_names: list[str] | None,
) -> list[ModelStatus]:
    """Each entry with what is on this machine. `ollama_names`: what Ollama lists (None: not reachable)."""
    out = []
    for entry in entries:
        path = installed_path(entry, models_dir)
        partial = 0
        if entry.download is not None:
            installed: bool | None = path is not None
            part = part_path(models_dir / entry.download.file)
            partial = part.stat().st_size if part.is_file() else 0
        elif entry.kind == "ollama":
            target = entry.spec.partition(":")[2]
            installed = None if ollama_names is None else any(same_model(target, n) for n in ollama_names)
        else:
            installed = entry.kind == "bundled" or None
        out.append(ModelStatus(entry, installed, model_fits(entry, ram_gb), path, partial))
    return out


def unknown_model(name: str, entries: list[CatalogueEntry]) -> NexusArkError:
    return NexusArkError(
        notice("There is no model {name!r} in the catalogue.", name=name),
        hint=notice(
            "Choose one of: {names} (nexus-ark model list).",
            names=", ".join(e.id for e in entries if e.obtainable),
        ),
    )


def resolve(entries: list[CatalogueEntry], name: str) -> CatalogueEntry:
    entry = find_entry(entries, name)
    if entry is None:
        raise unknown_model(name, entries)
    return entry


def get_model(
    entry: CatalogueEntry,
    models_dir: Path,
    *,
    accepted_license: bool = False,
    ollama_host: str = "",
    endpoint: str | None = None,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
) -> str:
    """Fetch the entry (resuming what is there) and return the spec a persona uses for it."""
    if not entry.obtainable:
        raise NexusArkError(
            notice("{name} is not downloaded: {note}", name=entry.name, note=entry.note),
            hint=notice("Choose it in Model settings instead."),
        )
    if entry.accept_license and not accepted_license:
        raise LicenceNotAccepted(
            notice(
                "{name} comes under the {license}, which asks you to agree to it first: {url}",
                name=entry.name,
                license=entry.license,
                url=entry.license_url or entry.license,
            ),
            hint=notice("Read it, then run again with --accept-license (the window asks you)."),
        )
    if entry.download is not None:
        download_hub_file(entry.download, models_dir, endpoint=endpoint, progress=progress, cancel=cancel)
        return persona_spec(entry, models_dir)
    pull_ollama(entry.spec.partition(":")[2], ollama_host, progress=progress, cancel=cancel)
    return entry.spec


def pull_ollama(
    model: str, host: str, *, progress: ProgressFn | None = None, cancel: threading.Event | None = None
) -> None:
    rate = TransferRate()
    last_at, last_stage = 0.0, ""

    def report(done: int, total: int, status: str) -> None:
        nonlocal last_at, last_stage
        now = time.monotonic()
        speed = rate.add(now, done)
        stage = "verifying" if status.startswith(("verifying", "writing")) else "downloading"
        stage = "done" if status == "success" else stage
        if progress is None or not total:  # "pulling manifest": nothing to count yet
            return
        if now - last_at >= 0.1 or stage != last_stage:
            last_at, last_stage = now, stage
            progress(Progress(done, max(total, done), speed, 0, stage))

    try:
        OllamaBackend(model, host).pull(report, cancel)
    except PullCancelled as exc:
        raise DownloadCancelled(exc.message) from exc
    except ProviderUnavailableError as exc:  # not a persona's setting at fault: Ollama is not running
        raise ProviderUnavailableError(exc.message, hint=OLLAMA_DOWN_HINT) from exc


def remove_model(entry: CatalogueEntry, models_dir: Path, *, ollama_host: str = "") -> list[Path]:
    """Delete a downloaded file (and any part of it); for an Ollama model, ask Ollama to delete it.
    Returns the files removed."""
    if entry.download is not None:
        dest = models_dir / entry.download.file
        removed = []
        part = part_path(dest)
        for path in (dest, part, part.with_name(part.name + ".json"), lock_path(dest)):
            if path.exists():
                path.unlink()
                removed.append(path)
        if not removed:
            raise DownloadError(notice("{name} is not downloaded.", name=entry.name))
        return removed
    if entry.kind != "ollama":
        raise NexusArkError(notice("{name} cannot be removed from here.", name=entry.name))
    OllamaBackend(entry.spec.partition(":")[2], ollama_host).delete()
    return []

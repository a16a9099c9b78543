"""Getting, listing and removing the catalogue's voices and recognisers (nexus_ark/voice/catalogue.py), in
the data folder's voices/<id>/, through the app's own model downloader: pinned revision, each file's sha256
checked while it is written, resumable after a cancel, a crash or a dropped connection.

An entry counts as installed once every file is verified and `installed.json` is written beside them (the
last step): a folder without it is a download that has not finished, and the next `get` goes on from
the parts it left.
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import ClassVar

import httpx
from pydantic import BaseModel, ConfigDict

from nexus_ark.notices import notice
from nexus_ark.providers.model_download import HubFile, Progress, ProgressFn, download_hub_file, hub_endpoint
from nexus_ark.voice.base import VoiceError
from nexus_ark.voice.catalogue import CatalogueEntry, catalogue_entries, entry_by_id

MARKER = "installed.json"


class VoiceFile(HubFile):
    """A file of a voice or recogniser: like a model's, but of the kinds these are, and possibly in a
    folder of the repository (Piper's voices are)."""

    suffixes: ClassVar[tuple[str, ...]] = (".onnx", ".json", ".bin", ".txt")
    repo_path: str

    def url(self, endpoint: str | None = None) -> str:
        base = (endpoint or hub_endpoint()).rstrip("/")
        return f"{base}/{self.repo}/resolve/{self.revision}/{self.repo_path}"


class InstalledVoice(BaseModel):
    """A downloaded entry on disk."""

    model_config = ConfigDict(frozen=True)

    id: str
    folder: Path
    size_bytes: int
    entry: CatalogueEntry


def voices_dir(data_root: Path) -> Path:
    """Where downloaded voices and recognisers live in a data folder."""
    return data_root / "voices"


def download_voice(
    entry: CatalogueEntry,
    voices: Path,
    progress: ProgressFn | None = None,
    *,
    cancel: threading.Event | None = None,
    endpoint: str | None = None,
    client: httpx.Client | None = None,
) -> Path:
    """Download `entry` into voices/<id>/ and return that folder. Raises DownloadError (a VoiceError's
    sibling: a NexusArkError with the words) when a file cannot be had or does not verify; what arrived
    intact is kept for the next try."""
    folder = voices / entry.id
    if _complete(entry, folder):
        return folder
    total = entry.size_bytes
    done_before = 0
    for file in entry.files:
        source = VoiceFile(
            repo=entry.repo,
            file=file.name,
            revision=entry.revision,
            sha256=file.sha256,
            size=file.size,
            repo_path=file.path,
        )

        def report(p: Progress, before: int = done_before) -> None:
            if progress is not None:
                stage = p.stage if p.stage != "done" else "downloading"
                progress(Progress(before + p.done, total, p.bytes_per_s, p.resumed_from, stage))

        download_hub_file(source, folder, endpoint=endpoint, progress=report, cancel=cancel, client=client)
        done_before += file.size
    marker = {"id": entry.id, "repo": entry.repo, "revision": entry.revision}
    (folder / MARKER).write_text(json.dumps(marker, indent=1), encoding="utf-8")
    if progress is not None:
        progress(Progress(total, total, 0.0, 0, "done"))
    return folder


def installed_voices(voices: Path, entries: list[CatalogueEntry] | None = None) -> list[InstalledVoice]:
    """The catalogue's entries (or `entries`) that are downloaded whole into `voices`."""
    found = []
    for entry in catalogue_entries() if entries is None else entries:
        folder = voices / entry.id
        if _complete(entry, folder):
            found.append(InstalledVoice(id=entry.id, folder=folder, size_bytes=entry.size_bytes, entry=entry))
    return found


def remove_voice(voice_id: str, voices: Path) -> None:
    """Delete a downloaded entry's folder (a partial download too)."""
    entry = entry_by_id(voice_id)
    if entry is None:
        known = ", ".join(e.id for e in catalogue_entries())
        raise VoiceError(
            notice("There is no voice or recogniser {name} in the catalogue.", name=voice_id),
            hint=notice("Known: {known}.", known=known),
        )
    folder = voices / entry.id
    if not folder.exists():
        raise VoiceError(notice("{name} is not downloaded.", name=voice_id))
    try:
        shutil.rmtree(folder)
    except OSError as exc:
        raise VoiceError(
            notice(
                "Could not delete all of {folder}: {problem}.",
                folder=str(folder),
                problem=exc.strerror or str(exc),
            ),
            hint=notice("Close programs using files in it and delete the folder by hand."),
        ) from exc


def _complete(entry: CatalogueEntry, folder: Path) -> bool:
    try:
        marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(marker, dict) or marker.get("revision") != entry.revision:
        return False
    return all(
        (folder / f.name).is_file() and (folder / f.name).stat().st_size == f.size for f in entry.files
    )

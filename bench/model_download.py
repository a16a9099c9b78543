"""Downloading a model: our downloader against plain httpx and huggingface_hub, on the same loopback server.

The server is the tests' stand-in for the Hugging Face file endpoint (HEAD, a redirect to a second host,
ranges), serving the bundled GGUF (98 MB). Each run downloads the whole file into an empty folder:
- raw httpx: one streamed GET written to disk, nothing else (the floor);
- ours: nexus_ark.providers.model_download (HEAD probe, part file, sha256 while writing, fsync, rename);
- huggingface_hub: hf_hub_download(local_dir=...) with HF_ENDPOINT at the stand-in (as installed here).
Then the resume figure: our download cut at half (the connection dropped) fetches only what was missing.

    .venv/bin/python -m bench.model_download [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from nexus_ark.paths import bundled_model_path
from nexus_ark.providers.model_download import download_hub_file
from tests.integration.hub_server import HubStandIn


def raw_httpx(url: str, dest: Path) -> None:
    with httpx.Client(follow_redirects=True) as client, client.stream("GET", url) as response:
        response.raise_for_status()
        with dest.open("wb") as fh:
            for chunk in response.iter_bytes(1 << 20):
                fh.write(chunk)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    bundled = bundled_model_path()
    assert bundled is not None
    work = Path(tempfile.mkdtemp())
    served = work / "smollm2-135m-instruct-q4_1.gguf"
    shutil.copyfile(bundled, served)
    hub = HubStandIn(served).start()
    os.environ["HF_ENDPOINT"] = hub.hub_url
    os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
    entry = hub.entry
    size_mb = entry.size / 1e6
    times: dict[str, list[float]] = {"raw httpx": [], "ours": [], "huggingface_hub": []}
    try:
        for run in range(args.runs):
            for name in times:
                folder = work / f"{name.replace(' ', '_')}-{run}"
                folder.mkdir()
                began = time.perf_counter()
                if name == "raw httpx":
                    raw_httpx(entry.url(hub.hub_url), folder / entry.file)
                elif name == "ours":
                    download_hub_file(entry, folder, endpoint=hub.hub_url)
                else:
                    from huggingface_hub import hf_hub_download

                    hf_hub_download(entry.repo, entry.file, revision=entry.revision, local_dir=folder)
                times[name].append(time.perf_counter() - began)
                assert (folder / entry.file).stat().st_size == entry.size
                shutil.rmtree(folder)
        floor = statistics.median(times["raw httpx"])
        print(f"file: {size_mb:.1f} MB over loopback, {args.runs} runs, median (MB/s, ratio to raw httpx)")
        for name, values in times.items():
            median = statistics.median(values)
            print(f"  {name:16s} {median:6.3f} s  ({size_mb / median:6.0f} MB/s, x{median / floor:.2f})")

        # Resume: the connection drops at half; the same call goes on from there.
        folder = work / "resume"
        hub.drop_after, hub.drops = entry.size // 2, 1
        before = len(hub.sent)
        report = download_hub_file(entry, folder, endpoint=hub.hub_url, retry_pause_s=0.01)
        sent = sum(hub.sent[before:])
        print(
            f"resume after a drop at {entry.size // 2 / 1e6:.1f} MB: {report.attempts} requests, "
            f"{sent / 1e6:.1f} MB sent for a {size_mb:.1f} MB file "
            f"(refetched {(sent - entry.size) / 1e6:.1f} MB: what was in flight at the cut)"
        )
    finally:
        hub.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

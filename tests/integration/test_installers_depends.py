"""The .deb's Depends is read off what the bundle links, on any Debian machine (issue 23, defect 14).

scripts/build_linux.sh stopped on a fresh machine with "libwayland-cursor.so.0 is needed by the bundle and
unknown here": absent libraries were mapped by a table written on the developer's machine. Now
scripts/deb_depends.py maps a present library with dpkg -S and an absent one with apt-file. These tests
build small real ELF files with gcc (a "bundle" whose DT_NEEDED names the libraries) and run the script as
build_linux.sh does. Nothing here installs anything or leaves the machine: the absent-library test needs
apt-file's Contents index already downloaded (`apt-get install apt-file && apt-file update`) and skips,
saying so, without it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.integration

SCRIPT = REPO / "scripts" / "deb_depends.py"

# Libraries of Debian packages that a build machine may well lack, none of them in the table the old
# script had (it knew the xcb helpers, libGL/libEGL, fontconfig, freetype and D-Bus, nothing of Wayland).
ABSENT_CANDIDATES = {
    "libwayland-cursor.so.0": "libwayland-cursor0",  # the soname of the report
    "libwayland-egl.so.1": "libwayland-egl1",
    "libcaca.so.0": "libcaca0",
    "libvterm.so.0": "libvterm0",
    "libcmark.so.0.30.2": "libcmark0.30.2",
}


def _need_tools(*tools: str) -> None:
    if sys.platform != "linux":
        pytest.skip("Debian packaging: Linux only")
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (Debian: apt-get install build-essential binutils)")


def _installed_sonames() -> set[str]:
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines()[1:] if line.strip()}


def _shared_lib(path: Path, soname: str, links: list[Path] = ()) -> Path:
    """A real shared library named by soname that links (DT_NEEDED) the given libraries."""
    source = path.with_suffix(".c")
    source.write_text(f"int {path.stem.replace('-', '_').replace('.', '_')}(void) {{ return 1; }}\n")
    cmd = [
        "gcc",
        "-shared",
        "-fPIC",
        "-o",
        str(path),
        str(source),
        f"-Wl,-soname,{soname}",
        "-Wl,--no-as-needed",
    ]
    cmd += [str(lib) for lib in links]
    subprocess.run(cmd, check=True, capture_output=True)
    source.unlink()
    return path


def _bundle_needing(tmp_path: Path, sonames: list[str], own: list[str] = ()) -> Path:
    """bundle/_internal/libapp.so, whose DT_NEEDED are `sonames` (linked against stubs outside the bundle,
    so the bundle does not provide them) and `own` (libraries inside the bundle)."""
    stubs = tmp_path / "stubs"
    bundle = tmp_path / "bundle" / "_internal"
    stubs.mkdir()
    bundle.mkdir(parents=True)
    links = [_shared_lib(stubs / name, name) for name in sonames]
    links += [_shared_lib(bundle / name, name) for name in own]
    _shared_lib(bundle / "libapp.so", "libapp.so", links)
    return bundle.parent


def _resolve(bundle: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(bundle), "--json"], capture_output=True, text=True, timeout=300
    )


def _apt_file_ready() -> bool:
    if not shutil.which("apt-file"):
        return False
    proc = subprocess.run(["apt-file", "search", "-l", "libc.so.6"], capture_output=True, text=True)
    return "libc6" in proc.stdout.split()


def test_an_installed_library_is_mapped_by_dpkg_and_the_bundles_own_library_is_no_dependency(tmp_path):
    _need_tools("gcc", "objdump", "dpkg", "ldconfig")
    if "libz.so.1" not in _installed_sonames():
        pytest.skip("zlib (libz.so.1) is not installed here")
    bundle = _bundle_needing(tmp_path, ["libz.so.1"], own=["libnexus-own.so.1"])
    proc = _resolve(bundle)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["sonames"]["libz.so.1"] == "zlib1g"
    assert "libnexus-own.so.1" not in result["sonames"]  # the bundle ships it
    assert result["sonames"]["libc.so.6"] == "libc6"  # gcc's own link
    assert result["depends"].startswith("libc6 (>= ") and "zlib1g" in result["depends"].split(", ")


def test_a_library_never_installed_here_is_named_by_apt_file_not_by_a_table(tmp_path):
    """The failure of the report: a library the bundle links that this machine does not have."""
    _need_tools("gcc", "objdump", "dpkg", "ldconfig")
    if not _apt_file_ready():
        pytest.skip("apt-file has no Contents index: apt-get install apt-file && apt-file update")
    installed = _installed_sonames()
    absent = {s: p for s, p in ABSENT_CANDIDATES.items() if s not in installed}
    if not absent:
        pytest.skip(f"every candidate library is installed here: {sorted(ABSENT_CANDIDATES)}")
    bundle = _bundle_needing(tmp_path, sorted(absent))
    proc = _resolve(bundle)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    for soname, package in absent.items():
        assert result["sonames"][soname] == package
        assert f"{soname}: not on this machine -> {package} (apt-file)" in proc.stderr
        assert package in result["depends"].split(", ")


def test_a_library_no_package_ships_stops_the_build_naming_it_and_the_file(tmp_path):
    _need_tools("gcc", "objdump", "dpkg", "ldconfig")
    bundle = _bundle_needing(tmp_path, ["libnexus-nowhere.so.7"])
    proc = _resolve(bundle)
    assert proc.returncode == 1
    assert proc.stdout == ""  # no Depends line for build_linux.sh to use
    assert "libnexus-nowhere.so.7" in proc.stderr
    if _apt_file_ready():
        assert "no Debian package ships libnexus-nowhere.so.7 (needed by _internal/libapp.so)" in proc.stderr

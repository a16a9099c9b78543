"""The Debian packages a built bundle needs from the system: its .deb's Depends.

    python3 scripts/deb_depends.py BUNDLE [--install] [--json]

Reads the DT_NEEDED entries of every ELF file under BUNDLE (objdump -p). A soname that some file in the
bundle provides is the bundle's own (the bootloader puts its folders first, Qt's plugins find Qt by
RPATH); any other comes from the system and is mapped to the package that ships it:
  - present on this machine (ldconfig's cache): `dpkg -S` of its path;
  - absent: `apt-file search` of the soname in the architecture's library folders, so a library that was
    never installed here is still named (the Contents index comes from the same Debian mirror as apt).
Nothing is mapped from a list written by hand, so the result is the same on a fresh machine as on one
that happens to have the libraries. --install (root, or passwordless sudo) installs apt-file when needed
and the packages of absent sonames, so the smoke test can run the bundle. The Depends value goes to
stdout, what was found to stderr; --json prints {soname: package} and the Depends instead. Exit 1
names any soname no package ships.
Stdlib only: it runs with the system's python3 before any virtual environment exists.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ELF_MAGIC = b"\x7fELF"


class ResolveError(Exception):
    """A soname that no Debian package known here ships, or a tool that is missing."""


def _run(cmd: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", errors="replace")
    if check and proc.returncode != 0:
        raise ResolveError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return proc


def elf_files(bundle: Path) -> list[Path]:
    """Every ELF file under bundle (the executable, Python extensions, Qt plugins, shared libraries)."""
    found = []
    for path in sorted(bundle.rglob("*")):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as fh:
                if fh.read(4) == ELF_MAGIC:
                    found.append(path)
    return found


def needed(path: Path) -> list[str]:
    """The DT_NEEDED sonames of one ELF file: what it links directly (as dpkg-shlibdeps reads them)."""
    out = _run(["objdump", "-p", str(path)]).stdout
    return re.findall(r"^\s+NEEDED\s+(\S+)$", out, flags=re.MULTILINE)


def system_libraries() -> dict[str, str]:
    """soname -> path for the native architecture, from ldconfig's cache (its tag for the native libraries,
    e.g. 'libc6,x86-64', is the one libc.so.6 has in the multiarch folder)."""
    ldconfig = "/sbin/ldconfig" if Path("/sbin/ldconfig").exists() else "ldconfig"
    entries = re.findall(
        r"^\s+(\S+) \(([^)]*)\)(?: OS ABI: [^=]*)? => (\S+)$", _run([ldconfig, "-p"]).stdout, re.M
    )
    native = {tag for name, tag, path in entries if name == "libc.so.6" and f"/{multiarch()}/" in path}
    if len(native) != 1:
        raise ResolveError(f"ldconfig -p has no single native libc.so.6 ({sorted(native)})")
    libs: dict[str, str] = {}
    for name, tag, path in entries:
        if tag in native:
            libs.setdefault(name, path)
    return libs


def multiarch() -> str:
    """The Debian multiarch triplet, e.g. x86_64-linux-gnu (the folder the native libraries live in)."""
    triplet = getattr(sys.implementation, "_multiarch", "")
    if not triplet:
        triplet = _run(["gcc", "-print-multiarch"]).stdout.strip()
    return triplet


def package_of_path(path: str) -> str:
    """The installed package that owns a library file, trying the usr-merged spellings of its path."""
    real = os.path.realpath(path)
    candidates = [path, real]
    for p in (path, real):  # /lib is /usr/lib on a usr-merged system, and dpkg knows one spelling
        candidates.append(p[4:] if p.startswith("/usr/") else "/usr" + p)
    for candidate in dict.fromkeys(candidates):
        proc = _run(["dpkg", "-S", candidate], check=False)
        if proc.returncode == 0 and proc.stdout.strip():
            # "libfoo1:amd64: /usr/lib/..." (or "diversion by ..." lines, which have no ": /")
            for line in proc.stdout.splitlines():
                if ": /" in line and not line.startswith("diversion by"):
                    return line.split(": /", 1)[0].split(", ")[0].split(":")[0]
    raise ResolveError(f"no installed Debian package owns {path}")


def apt_file_ready() -> bool:
    if not shutil.which("apt-file"):
        return False
    # With no Contents index apt-file prints nothing for any search; libc.so.6 is always in one.
    return bool(_run(["apt-file", "search", "-l", f"/lib/{multiarch()}/libc.so.6"], check=False).stdout)


def _as_root(cmd: list[str]) -> list[str]:
    """cmd with root's rights: as it is for root, through passwordless sudo otherwise (CI runners)."""
    prefix = [] if os.geteuid() == 0 else ["sudo", "-n"]
    return [*prefix, "env", "DEBIAN_FRONTEND=noninteractive", *cmd]


def install_apt_file() -> None:
    if not shutil.which("apt-file"):
        subprocess.run(_as_root(["apt-get", "update", "-qq"]), check=True)
        subprocess.run(
            _as_root(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "apt-file"]), check=True
        )
    subprocess.run(_as_root(["apt-file", "update"]), check=True, stdout=subprocess.DEVNULL)


def packages_shipping(soname: str) -> list[str]:
    """The packages (of this architecture's library folders) whose Contents list the soname."""
    folders = rf"(usr/)?lib/({re.escape(multiarch())}/)?"
    pattern = rf"^/{folders}{re.escape(soname)}$"
    proc = _run(["apt-file", "search", "--regexp", pattern], check=False)
    return sorted({line.split(":", 1)[0] for line in proc.stdout.splitlines() if ":" in line})


def resolve(bundle: Path, install: bool = False, log=print) -> dict[str, str]:
    """soname -> Debian package (or 'a | b' where several ship it) for every soname the bundle takes from
    the system. Raises ResolveError naming the sonames no package ships."""
    files = elf_files(bundle)
    if not files:
        raise ResolveError(f"{bundle} holds no ELF file: is it a built bundle?")
    own = {p.name for p in bundle.rglob("*")}
    users: dict[str, list[Path]] = {}
    for path in files:
        for soname in needed(path):
            if soname not in own:
                users.setdefault(soname, []).append(path)
    system = system_libraries()
    result: dict[str, str] = {}
    absent = sorted(s for s in users if s not in system)
    for soname in sorted(users):
        if soname in system:
            result[soname] = package_of_path(system[soname])
            log(f"  {soname}: {system[soname]} -> {result[soname]}")
    if absent:
        if not apt_file_ready():
            if not install:
                raise ResolveError(
                    f"not on this machine: {', '.join(absent)}; apt-file names their packages: "
                    "apt-get install apt-file && apt-file update (or run as root: it installs them)"
                )
            install_apt_file()
        unknown = []
        for soname in absent:
            packages = packages_shipping(soname)
            if not packages:
                unknown.append(f"{soname} (needed by {users[soname][0].relative_to(bundle)})")
                continue
            result[soname] = " | ".join(packages)
            log(f"  {soname}: not on this machine -> {result[soname]} (apt-file)")
        if unknown:
            raise ResolveError(f"no Debian package ships {', '.join(unknown)}")
        if install:
            wanted = sorted({result[s].split(" | ")[0] for s in absent})
            log(f"  installing {' '.join(wanted)} (the bundle needs them to run here)")
            subprocess.run(
                _as_root(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *wanted]),
                check=True,
                stdout=subprocess.DEVNULL,
            )
    return result


def depends_line(packages: dict[str, str], glibc: str) -> str:
    """'libc6 (>= GLIBC), pkg, ...': each package once, sorted, libc6 with the build's glibc floor."""
    rest = sorted({p for p in packages.values() if p != "libc6"})
    return ", ".join([f"libc6 (>= {glibc})", *rest])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument(
        "--install", action="store_true", help="apt-get install apt-file and absent libraries"
    )
    parser.add_argument("--json", action="store_true", help="print {soname: package} and the Depends as JSON")
    args = parser.parse_args(argv)
    try:
        packages = resolve(args.bundle, install=args.install, log=lambda m: print(m, file=sys.stderr))
    except (ResolveError, subprocess.CalledProcessError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    glibc = os.confstr("CS_GNU_LIBC_VERSION").split()[-1]  # e.g. "glibc 2.36"
    line = depends_line(packages, glibc)
    print(json.dumps({"sonames": packages, "depends": line}, indent=1) if args.json else line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

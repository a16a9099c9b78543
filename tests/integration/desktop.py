"""A real, private Linux desktop for tests: Xvfb, a session D-Bus, a notification daemon (dunst), a tray
host (trayer). Every process is started here, watched with deadlines and ended at the end.

The programs come from Debian's packages (.ci/run installs them: DESKTOP_PACKAGES there). Where one is
missing, `require()` skips with the apt-get line that installs it; where one is installed but fails to
start, that is a failure, not a skip.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# program -> the Debian package that has it
PROGRAMS = {
    "Xvfb": "xvfb",
    "dbus-daemon": "dbus-daemon",
    "dbus-monitor": "dbus-bin",
    "gdbus": "libglib2.0-bin",
    "dunst": "dunst",
    "dunstctl": "dunst",
    "trayer": "trayer",
}


def require(*programs: str) -> None:
    missing = [p for p in programs if shutil.which(p) is None]
    if missing:
        packages = sorted({PROGRAMS.get(p, p) for p in missing})
        pytest.skip(
            f"{', '.join(missing)} not installed here: apt-get install {' '.join(packages)} "
            "(.ci/run does this on a Debian-like machine)"
        )


def wait_for(check: Callable[[], object], timeout: float, what: str, interval: float = 0.05) -> object:
    """Poll until check() is truthy; fail loudly at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def _read_line(proc: subprocess.Popen[bytes], stream, timeout: float, what: str) -> str:
    """The first line a process prints, within a deadline (the process stays running)."""
    deadline = time.monotonic() + timeout
    buffer = b""
    while b"\n" not in buffer:
        left = deadline - time.monotonic()
        if left <= 0 or proc.poll() is not None:
            raise AssertionError(f"{what} did not start (exit code {proc.poll()}, printed {buffer!r})")
        ready, _, _ = select.select([stream], [], [], left)
        if ready:
            chunk = os.read(stream.fileno() if hasattr(stream, "fileno") else stream, 256)
            if not chunk:
                continue
            buffer += chunk
    return buffer.split(b"\n", 1)[0].decode().strip()


NO_ACTIVATION_BUS = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir={dir}</listen>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


@dataclass
class Desktop:
    workdir: Path
    display: str = ""
    bus: str = ""
    processes: list[tuple[str, subprocess.Popen[bytes]]] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(DISPLAY=self.display, DBUS_SESSION_BUS_ADDRESS=self.bus, NO_AT_BRIDGE="1")
        return env

    def _spawn(self, name: str, args: list[str], **kwargs) -> subprocess.Popen[bytes]:
        log = open(self.workdir / f"{name}.log", "wb")  # noqa: SIM115 (closed with the process)
        kwargs.setdefault("stdout", log)
        proc = subprocess.Popen(args, stderr=log, stdin=subprocess.DEVNULL, **kwargs)
        log.close()
        self.processes.append((name, proc))
        return proc

    def start_x(self) -> None:
        """Xvfb on a free display number it picks itself (-displayfd), so parallel runs never collide."""
        read_end, write_end = os.pipe()
        try:
            proc = self._spawn(
                "xvfb",
                ["Xvfb", "-displayfd", str(write_end), "-screen", "0", "640x360x24", "-nolisten", "tcp"],
                pass_fds=(write_end,),
            )
            os.close(write_end)
            write_end = -1
            self.display = ":" + _read_line(proc, read_end, 15, "Xvfb")
        finally:
            os.close(read_end)
            if write_end >= 0:
                os.close(write_end)

    def start_bus(self, *, activation: bool = True) -> None:
        """A session bus of our own (its address printed by dbus-daemon); nothing of the machine's.

        activation=False: a bus that cannot start services on demand, so no notification daemon appears
        unless a test starts one (the normal session bus would start dunst when asked, as desktops do)."""
        if activation:
            config = ["--session"]
        else:
            path = self.workdir / "bus.conf"
            path.write_text(NO_ACTIVATION_BUS.format(dir=self.workdir), encoding="utf-8")
            config = [f"--config-file={path}"]
        proc = self._spawn(
            "dbus",
            ["dbus-daemon", *config, "--nofork", "--nopidfile", "--print-address=1"],
            stdout=subprocess.PIPE,
        )
        assert proc.stdout is not None
        self.bus = _read_line(proc, proc.stdout, 15, "dbus-daemon")

    def name_has_owner(self, name: str) -> bool:
        out = subprocess.run(
            ["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path",
             "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.NameHasOwner", name],
            env=self.env, capture_output=True, text=True, timeout=10,
        )  # fmt: skip
        return out.stdout.strip() == "(true,)"

    def start_dunst(self) -> None:
        """dunst, the notification daemon, with a config where a left click runs the default action (as a
        click on a notification's body does in GNOME and KDE)."""
        config = self.workdir / "dunstrc"
        config.write_text(
            "[global]\n"
            "    mouse_left_click = do_action, close_current\n"
            '    geometry = "300x60-10+40"\n'
            "[urgency_normal]\n    timeout = 0\n",
            encoding="utf-8",
        )
        self._spawn("dunst", ["dunst", "-config", str(config)], env=self.env)
        wait_for(lambda: self.name_has_owner("org.freedesktop.Notifications"), 15, "dunst on the session bus")

    def monitor(self, name: str = "monitor") -> Path:
        """dbus-monitor recording every org.freedesktop.Notifications call and signal on the bus."""
        out = self.workdir / f"{name}.txt"
        with open(out, "wb") as fh:
            self._spawn(
                name,
                ["dbus-monitor", "--session", "interface='org.freedesktop.Notifications'"],
                env=self.env,
                stdout=fh,
            )
        # It prints the bus's NameLost signal once it has become a monitor.
        wait_for(lambda: b"NameLost" in out.read_bytes(), 15, "dbus-monitor to start listening")
        return out

    def start_tray_host(self) -> None:
        """trayer: a standalone freedesktop (XEmbed) system tray, docked at the top right of the screen."""
        self._spawn(
            "trayer",
            ["trayer", "--edge", "top", "--align", "right", "--widthtype", "request", "--height", "48",
             "--transparent", "false", "--tint", "0x2b2b2b", "--SetDockType", "true"],
            env=self.env,
        )  # fmt: skip
        # Ready means owning the tray selection: the Qt side polls isSystemTrayAvailable() for that.
        proc = self.processes[-1][1]
        if proc.poll() is not None:
            raise AssertionError(f"trayer exited with {proc.returncode}: {self.log('trayer')}")

    def log(self, name: str) -> str:
        path = self.workdir / f"{name}.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    def stop(self) -> None:
        for _name, proc in reversed(self.processes):
            if proc.poll() is None:
                proc.terminate()
        for _name, proc in reversed(self.processes):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
            if proc.stdout is not None:
                proc.stdout.close()
        self.processes.clear()


@contextlib.contextmanager
def desktop(
    workdir: Path, *, notifications: bool = False, tray: bool = False, activation: bool = True
) -> Iterator[Desktop]:
    programs = ["Xvfb", "dbus-daemon", "gdbus"]
    if notifications:
        programs += ["dunst", "dunstctl", "dbus-monitor"]
    if tray:
        programs += ["trayer"]
    require(*programs)
    d = Desktop(workdir)
    try:
        d.start_x()
        d.start_bus(activation=activation)
        if notifications:
            d.start_dunst()
        if tray:
            d.start_tray_host()
        yield d
    finally:
        d.stop()

"""The app's entry point with a Python audit hook that writes down every attempt to reach a host other than
this machine (a connect to a non-loopback address, a name lookup of another host) to the file named by
NEXUS_ARK_AUDIT_LOG. Run by test_privacy inside a network namespace with only loopback."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from typing import Any

LOCAL_NAMES = {None, "", "localhost", "localhost.localdomain", "127.0.0.1", "::1", "0.0.0.0"}


def _beyond_loopback(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    if host in LOCAL_NAMES:
        return False
    try:
        return not ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return True  # a name: looking it up is already reaching out


def install(log_path: str) -> None:
    """From now on, every attempt to reach beyond this machine is one line in `log_path`."""

    def hook(event: str, args: tuple[Any, ...]) -> None:
        attempt = None
        if event == "socket.connect":
            sock, address = args[0], args[1]
            if sock.family in (socket.AF_INET, socket.AF_INET6) and _beyond_loopback(address[0]):
                attempt = f"connect {address!r}"
        elif event == "socket.getaddrinfo" and _beyond_loopback(args[0]):
            attempt = f"getaddrinfo {args[0]!r}"
        if attempt is not None:
            with open(log_path, "a", encoding="utf-8") as log:
                log.write(f"{attempt}\n")

    sys.addaudithook(hook)


def main() -> None:
    install(os.environ["NEXUS_ARK_AUDIT_LOG"])
    from ui.launch import main as launch

    sys.argv[0] = "nexus-ark"
    sys.exit(launch())


if __name__ == "__main__":
    main()

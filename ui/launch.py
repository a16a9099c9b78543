"""The `nexus-ark` entry point: headless subcommands go to the core CLI without importing Qt;
no subcommand opens the window."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def _open_window(args: argparse.Namespace) -> int:
    from ui.app.application import run_window  # Qt is imported only here

    return run_window(args.data_dir)


def main(argv: Sequence[str] | None = None) -> int:
    from nexus_ark.cli import main as cli_main

    return cli_main(argv, open_window=_open_window)

"""`nexus-ark soul history|show|diff|restore|proposals`: the soul's versions and the persona's proposals
to change it, from the command line. stdout holds the answer (a version's text byte for byte, a diff, one
row a line); notes go to stderr."""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nexus_ark.app import NexusApp
from nexus_ark.cli.memory import one_field
from nexus_ark.errors import ConfigError
from nexus_ark.notices import notice
from nexus_ark.soul.records import SoulProposal, SoulVersion


class _Intermixed(argparse.ArgumentParser):
    """A parser whose options may come between its positionals: `proposals accept --persona X 1` as well
    as `proposals accept 1 --persona X`. Plain argparse fills an optional positional (the ID) with nothing
    when an option follows the one before it, then refuses the ID as "unrecognized arguments"."""

    _mixing = False

    def parse_known_args(  # type: ignore[override]  # typeshed's overloads; one signature serves both here
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self._mixing:  # parse_known_intermixed_args calls back here for its two passes
            return super().parse_known_args(args, namespace)
        self._mixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._mixing = False


def add_soul_parsers(sub: Any) -> None:
    soul = sub.add_parser(
        "soul", help="the soul's history (every version of persona.md) and the persona's proposals"
    )
    ssub = soul.add_subparsers(dest="soul_command", metavar="ACTION", required=True, parser_class=_Intermixed)
    history = ssub.add_parser(
        "history", help="one version a line: ID<TAB>time<TAB>who<TAB>characters<TAB>why"
    )
    show = ssub.add_parser("show", help="a version's text exactly as it was (default: the newest)")
    show.add_argument("version", nargs="?", type=int, help="its ID as `soul history` prints it")
    diff = ssub.add_parser("diff", help="what changed from one version to another (default: the newest)")
    diff.add_argument("old", type=int, help="the earlier version's ID")
    diff.add_argument("new", nargs="?", type=int, help="the later version's ID (default: the newest)")
    restore = ssub.add_parser("restore", help="make persona.md that version again, as a new version")
    restore.add_argument("version", type=int)
    proposals = ssub.add_parser(
        "proposals", help="the persona's proposals: list (open ones; --all), show, accept or decline one"
    )
    proposals.add_argument("action", nargs="?", choices=["list", "show", "accept", "decline"], default="list")
    proposals.add_argument("id", nargs="?", type=int, help="the proposal's ID as the list prints it")
    proposals.add_argument("--all", action="store_true", help="decided proposals too")
    proposals.add_argument(
        "--text-file", type=Path, metavar="FILE", help="accept: your edit of the section's new text (UTF-8)"
    )
    for p in (history, show, diff, restore, proposals):
        p.add_argument("--persona", required=True)
    for p in (history, proposals):
        p.add_argument("--json", action="store_true", help="one JSON object a line")


def run_soul_command(app: NexusApp, args: argparse.Namespace) -> int:
    slug = app.personas.load(args.persona).slug
    command = args.soul_command
    if command == "history":
        for v in app.souls.versions(slug):
            if args.json:
                print(v.model_dump_json(exclude={"text"}))
            else:
                fields = [str(v.id), v.created_at, v.author, str(len(v.text)), v.reason]
                print("\t".join(one_field(f) for f in fields))
        return 0
    if command == "show":
        version = _version(app, slug, args.version)
        sys.stdout.buffer.write(version.text.encode("utf-8"))
        sys.stdout.flush()
        return 0
    if command == "diff":
        old = app.souls.version(slug, args.old)
        new = _version(app, slug, args.new)
        sys.stdout.writelines(unified(old.text, new.text, f"version {old.id}", f"version {new.id}"))
        return 0
    if command == "restore":
        restored = app.souls.restore(slug, args.version)
        if restored is None:
            print(f"persona.md already is version {args.version}; nothing changed.", file=sys.stderr)
            return 0
        print(restored.id)
        print(f"persona.md is version {args.version} again (kept as version {restored.id}).", file=sys.stderr)
        return 0
    return _proposals(app, slug, args)


def _version(app: NexusApp, slug: str, version_id: int | None) -> SoulVersion:
    if version_id is not None:
        return app.souls.version(slug, version_id)
    versions = app.souls.versions(slug)
    if not versions:
        raise ConfigError(notice("{slug} has no persona.md and no soul history yet.", slug=slug))
    return versions[-1]


def unified(old: str, new: str, old_name: str, new_name: str) -> list[str]:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), old_name, new_name
    )
    return [line if line.endswith("\n") else line + "\n" for line in lines]


def _proposal_line(p: SoulProposal) -> str:
    fields = [str(p.id), p.state, p.section, p.origin, p.created_at, p.reason]
    return "\t".join(one_field(f) for f in fields)


def _proposals(app: NexusApp, slug: str, args: argparse.Namespace) -> int:
    if args.action == "list":
        for p in app.souls.proposals(slug, None if args.all else "open"):
            print(p.model_dump_json() if args.json else _proposal_line(p))
        return 0
    if args.id is None:
        raise ConfigError(notice("soul proposals {action} needs the proposal's ID.", action=args.action))
    if args.action == "show":
        p = app.souls.proposal(slug, args.id)
        print(_proposal_line(p))
        print(f"sources: {', '.join(p.sources) or '-'}")
        sys.stdout.writelines(unified(p.current_text + "\n", p.proposed_text + "\n", "now", "proposed"))
        return 0
    if args.action == "decline":
        p = app.souls.decline(slug, args.id)
        print(json.dumps({"id": p.id, "state": p.state}))
        return 0
    text = None
    if args.text_file is not None:
        try:
            text = args.text_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(
                notice("Cannot read {path}: {problem}.", path=str(args.text_file), problem=str(exc))
            ) from exc
    version = app.souls.accept(slug, args.id, text)
    print(json.dumps({"id": args.id, "state": "accepted", "version": version.id}))
    return 0

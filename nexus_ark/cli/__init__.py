"""The command line: the scripting and evaluation contract (see README). Headless: never imports Qt."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence

from nexus_ark import __version__
from nexus_ark.app import NexusApp
from nexus_ark.cli.memory import one_field
from nexus_ark.cli.parser import build_parser
from nexus_ark.errors import NexusArkError
from nexus_ark.logfile import setup_logging
from nexus_ark.paths import DataLayout, resolve_data_dir

WindowOpener = Callable[[argparse.Namespace], int]


def main(argv: Sequence[str] | None = None, open_window: WindowOpener | None = None) -> int:
    args = build_parser().parse_args(argv)
    # One log for the window and every command: the windowed build has no console (see README).
    log_file = setup_logging(DataLayout(resolve_data_dir(args.data_dir)).logs_dir, verbose=args.verbose)
    logging.getLogger(__name__).info(
        "nexus-ark %s %s (log %s)", __version__, args.command or "window", log_file or "stderr only"
    )
    try:
        if args.command is None:
            if open_window is None:
                print("This entry point has no window; run `nexus-ark` to open it.", file=sys.stderr)
                return 2
            return open_window(args)
        if args.command == "doctor":
            from nexus_ark.doctor import run_doctor

            return run_doctor(args.data_dir, sys.stdout)
        if args.command == "emotion":  # needs only the bundled embedder: no data folder opened
            from nexus_ark.mind.emotion_stream import classify_stream

            return classify_stream(sys.stdin.buffer, sys.stdout, as_json=args.json)
        if args.command == "model":  # models/ only: no persona opened, the data folder not locked
            from nexus_ark.cli.model import run_model_command

            return run_model_command(args)
        if args.command == "tools":  # settings files and servers only: the data folder is not locked
            from nexus_ark.cli.tools import run_tools_command

            return run_tools_command(DataLayout(resolve_data_dir(args.data_dir)), args)
        if args.command in ("say", "transcribe", "voice"):  # voices and recognisers need no lock (say does)
            from nexus_ark.cli.voice import run_voice_cli

            return run_voice_cli(args)
        if args.command == "simulate":  # a copy in a temporary folder: the data folder is not locked
            from nexus_ark.cli.life import simulate_command

            return simulate_command(args)
        with NexusApp(args.data_dir) as app:
            _persona_slugs(app, args)
            if args.command == "run":
                from nexus_ark.cli.life import run_command

                return run_command(app, args)
            here = {"activity": _activity, "persona": _persona, "prompt": _prompt}
            if args.command in here:
                return here[args.command](app, args)
            if args.command == "room":
                from nexus_ark.cli.room import run_room_command

                return run_room_command(app, args)
            if args.command == "chat":
                from nexus_ark.cli.chat import run_chat

                return run_chat(app, args)
            if args.command == "setup":
                from nexus_ark.cli.setup import run_setup

                return run_setup(app, args)
            if args.command == "memory":
                from nexus_ark.cli.memory import run_memory_command

                return run_memory_command(app, args)
            if args.command == "soul":
                from nexus_ark.cli.soul import run_soul_command

                return run_soul_command(app, args)
            if args.command in ("drives", "goals", "questions", "dream"):
                from nexus_ark.cli.mind import run_mind_command

                return run_mind_command(app, args)
    except NexusArkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        logging.getLogger(__name__).info("stopped: %s", exc)  # the file only: stderr has it above
        return 2
    except BrokenPipeError:  # `nexus-ark persona list | head -1`: the reader has what it wanted
        # Python would print another BrokenPipeError flushing stdout at exit: point it at nothing.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return 2


def _persona_slugs(app: NexusApp, args: argparse.Namespace) -> None:
    """The personas named on the command line (--persona, chat's PERSONA, export's NAME) as their slugs:
    a person types the name the window shows ("ひかり", "Aria") as often as `persona list`'s first field."""
    named = list(getattr(args, "names", None) or [])
    if named:  # `chat ひかり`: the same as `chat --persona ひかり`
        args.persona = [*(args.persona or []), *named]
    given = getattr(args, "persona", None)
    if isinstance(given, str):
        args.persona = app.personas.store.slug_for(given)
    elif isinstance(given, list):
        args.persona = [app.personas.store.slug_for(name) for name in given]
    if getattr(args, "persona_command", None) == "export":
        args.name = app.personas.store.slug_for(args.name)


def _persona(app: NexusApp, args: argparse.Namespace) -> int:
    if args.persona_command == "list":
        for p in app.personas.all():
            if p.ok:
                fields = [p.slug, p.name, p.language, p.description]
            else:
                fields = [p.slug, "(unusable)", "", p.error]
            print("\t".join(one_field(f) for f in fields))
            if p.warning:  # usable but damaged: stdout keeps its shape, the person still reads why
                print(f"warning: {p.slug}: {one_field(p.warning)}", file=sys.stderr)
        return 0
    if args.persona_command in ("import", "export"):
        return _card(app, args)
    info = app.personas.create(args.name, args.language, args.description)
    print(info.slug)
    print(f"created {info.folder}; edit persona.md there to shape who {info.name} is.", file=sys.stderr)
    return 0


def _card(app: NexusApp, args: argparse.Namespace) -> int:
    """`persona import CARD` / `persona export NAME OUT`: the slug or the file on stdout, notes on stderr."""
    from nexus_ark.cards_io import export_card, import_card

    if args.persona_command == "import":
        done = import_card(app, args.card)
        print(done.slug)
        print(
            f"imported {done.name} ({done.spec}) into {done.folder}: {done.greetings} greetings, "
            f"{done.lore_in_memory} lore entries in memory, {done.lore_always} always in the soul"
            + (", avatar.png" if done.avatar else ""),
            file=sys.stderr,
        )
        warnings = done.warnings
    else:
        exported = export_card(app, args.name, args.out, args.format)
        print(exported.path)
        warnings = exported.warnings
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def _prompt(app: NexusApp, args: argparse.Namespace) -> int:
    """`nexus-ark prompt`: what a message would send, as text to read or one JSON object."""
    built = app.personas.preview_prompt(args.persona or app.admin.default_persona(), args.text)
    for warning in built.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        out = {
            "messages": [{"role": m.role, "content": m.content} for m in built.messages],
            "sections": [s.model_dump(include={"name", "tokens", "cut"}) for s in built.sections],
        }
        print(json.dumps(out, ensure_ascii=False))
        return 0
    for message in built.messages:
        print(f"--- {message.role} ---")
        print(message.content)
    print("--- sections (tokens; * = cut to fit) ---")
    for section in built.sections:
        print(f"{section.name}\t{section.tokens}{' *' if section.cut else ''}")
    return 0


def _activity(app: NexusApp, args: argparse.Namespace) -> int:
    """The persona's timeline, oldest first, through a read-only connection (it never writes)."""
    import json
    from datetime import datetime

    from nexus_ark.memory.activity import KINDS
    from nexus_ark.memory.db import database_error, sqlite

    persona = app.personas.load(args.persona)
    store = app.personas.open_memory(persona.slug, read_only=True)
    try:
        entries = store.activity.query(since=args.since, until=args.until, kinds=args.kind, limit=args.limit)
        present = set(store.activity.kinds())
    except sqlite.Error as exc:
        raise database_error(exc, persona.memory_path) from exc
    finally:
        store.close()
    for kind in args.kind or []:
        if kind not in KINDS and kind not in present:  # a typo should not look like an empty timeline
            print(
                f"warning: no entries of kind {kind!r}; kinds here: {', '.join(sorted(present)) or 'none'}",
                file=sys.stderr,
            )
    for entry in entries:
        if args.json:
            line = {
                "time": entry.time,
                "kind": entry.kind,
                "summary": entry.summary,
                "message_id": entry.message_id,
                "data": entry.data,
                "id": entry.id,
            }
            print(json.dumps(line, ensure_ascii=False))
        else:
            when = datetime.fromisoformat(entry.time).astimezone().strftime("%Y-%m-%d %H:%M:%S")
            print(f"{when}  {entry.kind:<12}  {entry.summary}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

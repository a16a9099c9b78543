"""`nexus-ark run` (personas live headless: the scheduler on, no window) and `nexus-ark simulate`."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from nexus_ark.app import NexusApp
from nexus_ark.errors import PersonaError
from nexus_ark.paths import DataLayout, resolve_data_dir, shipped_personas_dir
from nexus_ark.personas.store import PersonaStore


def add_life_parsers(sub: Any) -> None:
    run = sub.add_parser(
        "run",
        help="keep personas alive without the window: they dream, recompute their drives, keep their plans "
        "and write first (printed here and sent as desktop notifications) until Ctrl-C",
    )
    run.add_argument("--persona", action="append", help="only this persona (repeatable; default: all)")
    run.add_argument(
        "--json",
        action="store_true",
        help='a line for each message a persona writes first: {"time", "persona", "text", "reason"}',
    )
    run.add_argument("--interval", type=float, default=60.0, help="seconds between looks at what is due")
    sim = sub.add_parser(
        "simulate",
        help="run a copy of a persona through simulated days and report what it did on its own",
    )
    sim.add_argument(
        "--persona",
        action="append",
        required=True,
        help="give it two to six times to simulate a room of them",
    )
    sim.add_argument(
        "--strategy", choices=("natural", "list", "manual"), default="natural", help="a room's order"
    )
    sim.add_argument("--days", type=int, default=30)
    sim.add_argument(
        "--model",
        choices=("scripted", "bundled"),
        default="scripted",
        help="scripted: a deterministic stand-in (fast); bundled: the real bundled model (slow)",
    )
    sim.add_argument("--seed", type=int, default=7, help="the scripted person's choices")
    sim.add_argument(
        "--json",
        action="store_true",
        help='one object: {"days", "dreams": {"1", "2", "3"}, "autonomous_messages": [{"time", "drive", '
        '"level", "reason"}], "goals": {"created", "completed"}, "open_questions", "events_processed", '
        '"db_bytes"}',
    )


def _persona_folder(data_dir: str | None, name: str) -> Path:
    for root in (DataLayout(resolve_data_dir(data_dir)).personas_dir, shipped_personas_dir()):
        try:
            store = PersonaStore(root)
            return store.load(store.slug_for(name)).folder
        except PersonaError:
            continue
    raise PersonaError(f"There is no persona {name!r}.", hint="`nexus-ark persona list` shows them.")


def _simulate_room(folders: list[Path], args: argparse.Namespace) -> int:
    from nexus_ark.room_simulation import simulate_room

    report = simulate_room(folders, args.days, model=args.model, seed=args.seed, strategy=args.strategy)
    if args.json:
        print(report.model_dump_json())
        return 0
    names = ", ".join(report.members)
    print(f"{args.days} days of a room of {names} on the {report.model} model ({report.seconds} s)")
    print(f"the person's messages: {report.person_messages}; lines in the room: {report.journal_lines}")
    for member in report.members:
        print(
            f"  {member}: answered {report.answers[member]}, wrote first {report.written_first[member]}, "
            f"memory.db {report.db_bytes.get(member, 0):,} bytes"
        )
    return 0


def simulate_command(args: argparse.Namespace) -> int:
    """Needs no lock on the data folder: the persona is copied into a temporary one."""
    from nexus_ark.simulation import simulate

    if args.days < 1 or args.days > 366:
        print("error: --days must be between 1 and 366", file=sys.stderr)
        return 2
    folders = [_persona_folder(args.data_dir, name) for name in args.persona]
    if len(folders) > 1:
        return _simulate_room(folders, args)
    folder = folders[0]

    def progress(day: int, report: Any) -> None:
        if not args.json:
            print(
                f"day {day}/{args.days}: {len(report.autonomous_messages)} written first so far",
                file=sys.stderr,
            )

    report = simulate(folder, args.days, model=args.model, seed=args.seed, progress=progress)
    if args.json:
        print(report.model_dump_json())
        return 0
    print(f"{args.days} days of {folder.name} on the {report.model} model ({report.seconds} s)")
    print(f"dreams by level: {report.dreams}")
    print(f"goals: {report.goals['created']} created, {report.goals['completed']} completed")
    print(f"open questions: {report.open_questions}; planned events carried out: {report.events_processed}")
    print(f"written first: {len(report.autonomous_messages)} ({report.in_quiet_hours} in quiet hours)")
    for entry in report.autonomous_messages:
        print(f"  {entry.time[:16]}  {entry.trigger:<8} {entry.drive or '-':<16} {entry.reason[:90]}")
    size = report.db_bytes[-1] if report.db_bytes else 0
    growth = size - report.db_bytes[0] if report.db_bytes else 0
    print(f"memory.db: {size:,} bytes; grew {growth:,} bytes after day 1")
    return 0


def run_command(app: NexusApp, args: argparse.Namespace) -> int:
    from nexus_ark.notify import default_notifier

    app.life.notifications.notifier = default_notifier()
    if args.persona:
        runtimes = [app.personas.runtime(app.personas.load(name).slug) for name in args.persona]
    else:
        runtimes = app.personas.open_all()
    if not runtimes:
        print("error: no persona to run", file=sys.stderr)
        return 2

    printing = threading.Lock()  # personas write first on threads of their own: one line at a time

    def show(topic: str, payload: dict[str, Any]) -> None:
        reason = payload["reason"]
        if args.json:
            line = {
                "time": reason["time"],
                "persona": payload["persona"],
                "text": payload["text"],
                "reason": reason,
            }
            out = json.dumps(line, ensure_ascii=False) + "\n"
        else:
            said = f"[{reason['time'][:16]}] {payload['persona']}: {payload['text']}"
            out = f"{said}\n    why: {reason['why']}\n"
        with printing:  # two personas at once interleaved their lines (two objects on one JSON line)
            sys.stdout.write(out)
            sys.stdout.flush()

    app.events.subscribe("autonomous_message", show)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    names = ", ".join(r.persona.settings.name for r in runtimes)
    print(
        f"running {names}; Ctrl-C stops (a dream in progress resumes next time)", file=sys.stderr, flush=True
    )
    app.life.start(args.interval)
    while not stop.wait(0.5):
        pass
    print("stopping…", file=sys.stderr, flush=True)
    return 0

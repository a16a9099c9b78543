"""`nexus-ark drives | goals | questions | dream`: the mind from the command line.

Reads go through read-only connections; the user's edits (a goal, a resolved question) go through a peer
connection, so they never fight a window that has the persona open.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel

from nexus_ark.app import NexusApp
from nexus_ark.errors import NexusArkError
from nexus_ark.memory.components import Goal, OpenQuestion
from nexus_ark.memory.store import MemoryStore
from nexus_ark.mind.drives import DRIVES, DriveReport
from nexus_ark.mind.narrative import drive_line


def add_mind_parsers(sub: Any) -> None:
    drives = sub.add_parser(
        "drives", help="the persona's four drives now, what each comes from, the dominant one and why"
    )
    drives.add_argument("--persona", required=True)
    drives.add_argument(
        "--json",
        action="store_true",
        help='one object: {"drives": {NAME: {"level", "threshold", "inputs"}}, "dominant", "narrative"}',
    )
    drives.add_argument(
        "--no-record", action="store_true", help="only look: do not add this reading to the drive history"
    )

    dream = sub.add_parser(
        "dream", help="dream now: reflect on a day (level 1), a week (2) or a month (3) on the internal model"
    )
    dream.add_argument("--persona", required=True)
    dream.add_argument(
        "--level", type=int, choices=[1, 2, 3], help="default: chosen from the last dreams' dates"
    )
    dream.add_argument(
        "--date",
        type=_day,
        metavar="YYYY-MM-DD",
        help="the day to dream about (default: the latest with talk)",
    )
    dream.add_argument(
        "--json",
        action="store_true",
        help='one object: {"level", "date", "insight", "episode", "entities_updated", "open_questions", '
        '"goals", "skipped", ...}',
    )

    goals = sub.add_parser("goals", help="the persona's goals: list, add, note progress, complete, abandon")
    goals.add_argument("--persona", required=True)
    gsub = goals.add_subparsers(dest="goals_command", metavar="ACTION")
    glist = gsub.add_parser("list", help="active goals (--all: every goal)")
    glist.add_argument("--all", action="store_true")
    glist.add_argument("--json", action="store_true", help="one goal object a line")
    gadd = gsub.add_parser("add", help="a new goal")
    gadd.add_argument("--term", choices=["short", "long"], default="short")
    gadd.add_argument("--priority", type=int, default=1, help="1 is the most important")
    gadd.add_argument("text")
    gprog = gsub.add_parser("progress", help="a progress note on a goal")
    gprog.add_argument("id")
    gprog.add_argument("note")
    for action in ("complete", "abandon"):
        gact = gsub.add_parser(action, help=f"{action} a goal (with an optional note why)")
        gact.add_argument("id")
        gact.add_argument("note", nargs="?", default="")

    questions = sub.add_parser("questions", help="the persona's open questions: list, resolve, delete")
    questions.add_argument("--persona", required=True)
    qsub = questions.add_subparsers(dest="questions_command", metavar="ACTION")
    qlist = qsub.add_parser("list", help="open questions (--all: resolved ones too)")
    qlist.add_argument("--all", action="store_true")
    qlist.add_argument("--json", action="store_true", help="one question object a line")
    for action in ("resolve", "delete"):
        qact = qsub.add_parser(action, help=f"{action} a question by its id")
        qact.add_argument("id", type=int)


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from exc


def report_json(report: DriveReport) -> dict[str, Any]:
    return {
        "drives": {
            n: {
                "level": report.drives[n].level,
                "threshold": report.drives[n].threshold,
                "inputs": report.drives[n].inputs,
            }
            for n in DRIVES
        },
        "dominant": report.dominant,
        "narrative": report.narrative,
    }


def run_mind_command(app: NexusApp, args: argparse.Namespace) -> int:
    persona = app.personas.load(args.persona)
    if args.command == "drives":
        report = app.personas.drives(persona.slug, record=not args.no_record)
        if args.json:
            print(json.dumps(report_json(report), ensure_ascii=False))
            return 0
        language = persona.settings.language
        for n in DRIVES:
            d = report.drives[n]
            mark = "*" if d.over else " "
            print(f"{mark} {n:<17} {d.level:.2f} / {d.threshold:.2f}  {drive_line(report, n, language)}")
        print(f"dominant: {report.dominant or 'none'}")
        print(report.narrative)
        return 0
    if args.command == "dream":
        return _dream(app, persona.slug, args)
    if args.command == "goals":
        return _goals(app, persona.slug, args)
    return _questions(app, persona.slug, args)


@contextmanager
def _memory(app: NexusApp, slug: str, *, read_only: Literal[True]) -> Iterator[MemoryStore]:
    store = app.personas.open_memory(slug, read_only=read_only)
    try:
        yield store
    finally:
        store.close()


def _print_rows(rows: Sequence[BaseModel], as_json: bool, line: Callable[[Any], str]) -> int:
    for row in rows:
        print(row.model_dump_json() if as_json else line(row))
    return 0


def _goal_line(g: Goal) -> str:
    notes = f"  ({len(g.progress_notes)} notes)" if g.progress_notes else ""
    return f"{g.id}\t{g.term}\t{g.status}\tp{g.priority}\t{g.goal}{notes}"


def _question_line(q: OpenQuestion) -> str:
    state = f"resolved by {q.resolved_by or 'conversation'}" if q.resolved_at else "open"
    return f"{q.id}\t{q.priority:.2f}\t{state}\t{q.question}"


def _goals(app: NexusApp, slug: str, args: argparse.Namespace) -> int:
    action = args.goals_command or "list"
    if action == "list":
        with _memory(app, slug, read_only=True) as store:
            goals = store.components.goals(status=None if getattr(args, "all", False) else "active")
        return _print_rows(goals, getattr(args, "json", False), _goal_line)

    def change(store: MemoryStore) -> Goal:
        c = store.components
        if action == "add":
            return c.put_goal(Goal(term=args.term, goal=args.text, priority=max(1, args.priority)))
        if action == "progress":
            return c.add_progress(args.id, args.note, ["user"])
        return c.set_goal_status(args.id, "completed" if action == "complete" else "abandoned", args.note)

    goal = app.personas.change_memory(slug, f"goals {action}", change)
    print(goal.id)
    app.events.publish("mind_changed", persona=slug, what="goals")
    return 0


def _questions(app: NexusApp, slug: str, args: argparse.Namespace) -> int:
    action = args.questions_command or "list"
    if action == "list":
        with _memory(app, slug, read_only=True) as store:
            questions = store.components.open_questions(include_resolved=getattr(args, "all", False))
        return _print_rows(questions, getattr(args, "json", False), _question_line)

    def change(store: MemoryStore) -> None:
        known = {q.id for q in store.components.open_questions(include_resolved=True)}
        if args.id not in known:
            raise NexusArkError(
                f"There is no open question {args.id} for this persona (see `questions list`)."
            )
        if action == "resolve":
            store.components.resolve_question(args.id, by="user")
        else:
            store.components.delete_question(args.id)

    app.personas.change_memory(slug, f"questions {action}", change)
    print(f"{action}d question {args.id}", file=sys.stderr)
    app.events.publish("mind_changed", persona=slug, what="questions")
    return 0


def _dream(app: NexusApp, slug: str, args: argparse.Namespace) -> int:
    from nexus_ark.dreaming.dream import DreamProgress

    def progress(step: DreamProgress) -> None:
        print(f"dreaming ({step.index}/{step.total}): {step.stage}", file=sys.stderr, flush=True)

    result = app.personas.dream(slug, level=args.level, day=args.date, progress=progress)
    if args.json:
        print(result.model_dump_json())
        return 0
    print(f"level {result.level} dream of {result.date}" + (f": {result.skipped}" if result.skipped else ""))
    for name, state in result.stages.items():
        print(f"  {name}: {state}")
    if result.insight:
        print(f"insight: {result.insight['insight']}")
        print(f"strategy: {result.insight['strategy']}")
    if result.episode:
        print(f"episode: {result.episode['summary']}")
    for name in result.entities_updated:
        print(f"entity updated: {name}")
    for q in result.open_questions:
        print(f"new open question: {q['question']}")
    for g in result.goals:
        print(f"goal {g['change']}: {g.get('goal') or g.get('note')}")
    return 0

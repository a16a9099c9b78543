"""The command line: the scripting and evaluation contract (see README). Headless: never imports Qt."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from nexus_ark import __version__
from nexus_ark.agent.session import ReplyDelta, TurnResult
from nexus_ark.app import NexusApp
from nexus_ark.errors import NexusArkError, ProviderError
from nexus_ark.logfile import setup_logging
from nexus_ark.memory_cli import one_field
from nexus_ark.paths import DataLayout, resolve_data_dir
from nexus_ark.runtime.persona_runtime import PersonaRuntime

WindowOpener = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nexus-ark", description="Nexus Ark: a local-first desktop companion."
    )
    parser.add_argument("--version", action="version", version=f"nexus-ark {__version__}")
    parser.add_argument(
        "--data-dir",
        help="where personas, memory and settings live (default: NEXUS_ARK_HOME "
        "or the platform's user data folder)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    chat = sub.add_parser(
        "chat", help="talk with a persona in the terminal (streams; reads stdin lines when piped)"
    )
    chat.add_argument(
        "--persona", help="the persona's name as `persona list` prints it first (default: last used)"
    )
    chat.add_argument(
        "--model",
        metavar="SPEC",
        help='use this model for the session: "bundled", "gguf:PATH", "ollama:NAME" or "litellm:MODEL" '
        "(e.g. litellm:openai/local); keys come from the OS keyring or the provider's usual variable",
    )
    chat.add_argument("--api-base", metavar="URL", help="server address for ollama: or litellm: models")

    persona = sub.add_parser("persona", help="list, create, import or export personas")
    psub = persona.add_subparsers(dest="persona_command", metavar="ACTION", required=True)
    psub.add_parser("list", help="one persona a line: NAME<TAB>display name<TAB>language<TAB>description")
    create = psub.add_parser("create", help="create a persona folder with a soul template")
    create.add_argument("name")
    create.add_argument("--language", choices=["en", "ja"], default="en")
    create.add_argument("--description", default="")
    card_in = psub.add_parser(
        "import",
        help="a new persona from a SillyTavern character card V2/V3 (.png or .json); prints its NAME",
    )
    card_in.add_argument("card", type=Path)
    card_out = psub.add_parser("export", help="write a persona as a V3 character card (PNG or JSON)")
    card_out.add_argument("name", help="the persona's name as `persona list` prints it first")
    card_out.add_argument(
        "--format", choices=["png", "json"], help="default: json for a .json OUT, else png (its avatar)"
    )
    # A string, not a Path: "out/" (a folder meant, perhaps not there yet) must keep its slash.
    card_out.add_argument("out", help="the card file to write (or a folder: NAME.png in it)")

    memory = sub.add_parser("memory", help="import conversations into a persona's memory, or search it")
    msub = memory.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    imp = msub.add_parser(
        "import",
        help='earlier conversations: JSON Lines {"id", "speaker", "text", "timestamp"} (ids kept as '
        "source_id), or a ChatGPT export's conversations.json (--format chatgpt)",
    )
    imp.add_argument("--persona", required=True)
    imp.add_argument(
        "--format",
        choices=["jsonl", "chatgpt"],
        default="jsonl",
        help="jsonl (default) or chatgpt: conversations.json from a ChatGPT data export, or its .zip",
    )
    imp.add_argument("file", type=Path)
    search = msub.add_parser("search", help="hybrid recall (keywords + meaning), best first")
    search.add_argument("--persona", required=True)
    search.add_argument("-k", type=int, default=10, help="how many hits (default 10)")
    search.add_argument("--json", action="store_true", help="JSON lines out")
    search.add_argument(
        "--queries", type=Path, help='JSON Lines of {"id", "query"}: one result line per query'
    )
    search.add_argument("--mode", choices=["hybrid", "fts", "vector"], default="hybrid")
    search.add_argument("--kind", action="append", help="only these kinds (message, episode, entity, ...)")
    search.add_argument("--since", help="only items at or after this ISO time")
    search.add_argument("--until", help="only items at or before this ISO time")
    search.add_argument("query", nargs="?")
    export = msub.add_parser(
        "export", help="write the whole memory as Markdown (to read) and JSON (to restore)"
    )
    export.add_argument("--persona", required=True)
    export.add_argument("folder", type=Path)
    restore = msub.add_parser("restore", help="load an export into a persona with an empty memory")
    restore.add_argument("--persona", required=True)
    restore.add_argument("folder", type=Path)
    back = msub.add_parser("backup", help="copy memory.db into backups/ now (the app also does it daily)")
    back.add_argument("--persona", required=True)
    kb = msub.add_parser("kb", help="the knowledge base: add .txt/.md/.pdf documents, list, remove")
    kb.add_argument("--persona", required=True)
    kb.add_argument("action", choices=["add", "list", "remove"])
    kb.add_argument("targets", nargs="*", help="files to add, or document ids to remove")

    prompt = sub.add_parser(
        "prompt",
        help="print the exact messages TEXT would be sent with, and each section's tokens "
        "(a dry run: nothing is stored)",
    )
    prompt.add_argument("--persona", help="the persona's name as `persona list` prints it first")
    prompt.add_argument(
        "--json",
        action="store_true",
        help='one object: {"messages": [{"role", "content"}], "sections": [{"name", "tokens", "cut"}]}',
    )
    prompt.add_argument("text")

    activity = sub.add_parser(
        "activity",
        help="a persona's timeline: messages, emotions, tool calls, memory writes, imports, errors",
    )
    activity.add_argument("--persona", required=True)
    activity.add_argument(
        "--since",
        type=_iso_time,
        metavar="TIME",
        help="only entries at or after this ISO-8601 time, e.g. 2026-11-20 or 2026-11-20T18:30+09:00 "
        "(without a zone: local time)",
    )
    activity.add_argument(
        "--until", type=_iso_time, metavar="TIME", help="only entries at or before this time"
    )
    activity.add_argument(
        "--kind",
        action="append",
        metavar="KIND",
        help="only this kind; repeat for several (message, emotion, tool_call, memory_write, compression, "
        "import, error)",
    )
    activity.add_argument("--limit", type=int, metavar="N", help="only the newest N entries")
    activity.add_argument(
        "--json",
        action="store_true",
        help='one object a line: {"time", "kind", "summary", "message_id", "data", "id"}',
    )

    emotion = sub.add_parser("emotion", help="read the emotion in texts (no persona or chat model needed)")
    esub = emotion.add_subparsers(dest="emotion_command", required=True)
    classify = esub.add_parser(
        "classify", help='one text per stdin line -> {"label", "value", "confidence", "scores"} a line'
    )
    classify.add_argument("--json", action="store_true", help="JSON lines out (default: readable lines)")

    from nexus_ark.mind_cli import add_mind_parsers

    add_mind_parsers(sub)
    from nexus_ark.life_cli import add_life_parsers

    add_life_parsers(sub)
    from nexus_ark.model_cli import add_model_parsers

    add_model_parsers(sub)
    sub.add_parser("doctor", help="report what works on this machine and what does not")
    return parser


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
            from nexus_ark.model_cli import run_model_command

            return run_model_command(args)
        if args.command == "simulate":  # a copy in a temporary folder: the data folder is not locked
            from nexus_ark.life_cli import simulate_command

            return simulate_command(args)
        with NexusApp(args.data_dir) as app:
            if args.command == "run":
                from nexus_ark.life_cli import run_command

                return run_command(app, args)
            if args.command == "activity":
                return _activity(app, args)
            if args.command == "persona":
                return _persona(app, args)
            if args.command == "chat":
                return _chat(app, args)
            if args.command == "prompt":
                return _prompt(app, args)
            if args.command == "memory":
                from nexus_ark.memory_cli import run_memory_command

                return run_memory_command(app, args)
            if args.command in ("drives", "goals", "questions", "dream"):
                from nexus_ark.mind_cli import run_mind_command

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


def _persona(app: NexusApp, args: argparse.Namespace) -> int:
    if args.persona_command == "list":
        for p in app.list_personas():
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
    info = app.create_persona(args.name, args.language, args.description)
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
    else:
        done = export_card(app, args.name, args.out, args.format)
        print(done.path)
    for warning in done.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def _prompt(app: NexusApp, args: argparse.Namespace) -> int:
    """`nexus-ark prompt`: what a message would send, as text to read or one JSON object."""
    built = app.preview_prompt(args.persona or app.default_persona(), args.text)
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


def _chat(app: NexusApp, args: argparse.Namespace) -> int:
    """The conversation runs on the persona's runtime, as in the window: each turn on its queue (first in
    line), the after-turn work (vectors, compression, drives, a backup) as background work the next turn
    pre-empts; this thread only prints what the queue hands back."""
    slug = args.persona or app.default_persona()
    try:
        session = app.session(slug, model_override=args.model, api_base=args.api_base)
    except ProviderError as exc:
        if not exc.transient:  # a model not installed, a key missing: what was asked for is wrong (2)
            raise
        # The server is down or did not answer: the input was right and no reply came (1, as a failed reply).
        print(f"error: {exc}", file=sys.stderr)
        return 1
    app.remember_persona(slug)
    runtime = app.runtime(slug)
    if sys.stdin.isatty():
        return _chat_interactive(runtime, session.persona.settings.name, session.model_name)
    # Piped (scripts, evaluations): deterministic. Each line's after-turn work is done before the next line
    # is read, so the same input always leaves the same memory.
    failures = 0
    state = _ChatState()
    for line in sys.stdin:
        if line.strip():
            failures += not _one_turn(runtime, line, sys.stdout, state)
            runtime.queue.wait_idle()
    return 1 if failures else 0


def _chat_interactive(runtime: PersonaRuntime, name: str, model_name: str) -> int:
    state = _ChatState()
    print(
        f"Talking with {name} on {model_name}. Ctrl-C stops a reply; /continue goes on with a reply "
        "the token limit cut; Ctrl-D or /quit leaves."
    )
    for message in runtime.history(limit=6):
        who = name if message.role == "assistant" else "you"
        print(f"  [{who}] {message.content}")
    while True:
        try:
            line = input("> ")
        except (EOFError, KeyboardInterrupt):
            print()
            return 0
        if line.strip() in ("/quit", "/exit"):
            return 0  # background work still queued stops with the app and resumes next time
        if line.strip():
            sys.stdout.write(f"{name}: ")
            _one_turn(runtime, line, sys.stdout, state)


@dataclass
class _ChatState:
    warned: set[str] = field(default_factory=set)  # each warning once per session
    cut_reply: int | None = None  # the last reply the token limit cut, for /continue


def _one_turn(runtime: PersonaRuntime, text: str, out: TextIO, state: _ChatState) -> bool:
    """Stream one reply to `out`; Ctrl-C stops it and keeps what was said. Returns False on error.
    The runtime queues the after-turn work once the reply is done.
    "/continue" goes on with the last reply the token limit cut (appended to that message).
    Warnings (e.g. recall fell back to keywords) go to stderr, each once per session."""
    cancel = threading.Event()
    result: TurnResult | None = None
    if text.strip() == "/continue":
        if state.cut_reply is None:
            print("note: there is no reply cut by the token limit to continue.", file=sys.stderr)
            out.write("\n")
            return True
        turn = runtime.continue_reply(state.cut_reply, cancel)
    else:
        turn = runtime.send(text, cancel)
    while True:
        try:
            item = next(turn)
        except StopIteration:
            break
        except KeyboardInterrupt:
            cancel.set()
            continue
        if isinstance(item, ReplyDelta):
            out.write(item.text)
            out.flush()
        else:
            result = item
    out.write("\n")
    out.flush()
    for warning in result.warnings if result is not None else []:
        if warning not in state.warned:
            state.warned.add(warning)
            print(f"warning: {warning}", file=sys.stderr)
    state.cut_reply = result.reply_id if result is not None and result.cut_by_limit else None
    if state.cut_reply is not None:
        print("note: the reply reached the token limit; send /continue to go on.", file=sys.stderr)
    if result is not None and result.error:
        print(f"error: {result.error}", file=sys.stderr)
        return False
    return True


def _iso_time(value: str) -> str:
    """--since/--until: ISO-8601 or refused (argparse exits with 2 and this message)."""
    from datetime import datetime

    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not an ISO-8601 time; write it like 2026-11-20, 2026-11-20T18:30 (local time) "
            "or 2026-11-20T09:30:00Z"
        ) from None
    return value


def _activity(app: NexusApp, args: argparse.Namespace) -> int:
    """The persona's timeline, oldest first, through a read-only connection (it never writes)."""
    import json
    from datetime import datetime

    from nexus_ark.memory.activity import KINDS
    from nexus_ark.memory.db import database_error, sqlite

    persona = app.personas.load(args.persona)
    store = app.open_memory(persona.slug, read_only=True)
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

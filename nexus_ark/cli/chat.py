"""`nexus-ark chat`: the conversation in a terminal, or line by line from a pipe. It streams through the
persona's runtime as the window does: each turn on the persona's queue (first in line), its after-turn work
as background work the next turn pre-empts; this thread only prints what the queue hands back.

Piped (stdin not a terminal), stdout is one line per reply, so a script reads reply N from line N: the reply
as stored, trailing spaces dropped, its own line breaks written as \\n (and a backslash as \\\\). With --raw
it is the reply as streamed, piece by piece, as a terminal shows it."""

from __future__ import annotations

import argparse
import sys
import threading
from dataclasses import dataclass, field
from typing import TextIO

from nexus_ark.agent.session import ReplyDelta, TurnResult
from nexus_ark.app import NexusApp
from nexus_ark.cli.line_input import read_line
from nexus_ark.cli.said import language_note, one_line
from nexus_ark.cli.tools import terminal_asker
from nexus_ark.cli.voice import ReplySpeech
from nexus_ark.errors import ProviderError
from nexus_ark.runtime.persona_runtime import PersonaRuntime


def run_chat(app: NexusApp, args: argparse.Namespace) -> int:
    """The conversation runs on the persona's runtime, as in the window: each turn on its queue (first in
    line), the after-turn work (vectors, compression, drives, a backup) as background work the next turn
    pre-empts; this thread only prints what the queue hands back."""
    app.tools.asker = terminal_asker(set(args.allow_tool), sys.stdin.isatty())
    if args.room or len(args.persona or []) > 1:
        from nexus_ark.cli.room import run_room_chat

        if args.speak:
            print(
                "note: --speak speaks a chat with one persona; this room's replies are text only.",
                file=sys.stderr,
            )

        return run_room_chat(app, args)
    slug = args.persona[0] if args.persona else app.admin.default_persona()
    try:
        session = app.personas.session(slug, model_override=args.model, api_base=args.api_base)
    except ProviderError as exc:
        if not exc.transient:  # a model not installed, a key missing: what was asked for is wrong (2)
            raise
        # The server is down or did not answer: the input was right and no reply came (1, as a failed reply).
        print(f"error: {exc}", file=sys.stderr)
        return 1
    app.admin.remember_persona(slug)
    # The persona's own model: the window's notice, said once on stderr.
    if not args.model and (note := language_note(app, slug, session.persona.settings.name)):
        print(note, file=sys.stderr)
    runtime = app.personas.runtime(slug)
    speech = ReplySpeech(app, slug) if args.speak else None
    try:
        if sys.stdin.isatty():
            state = _ChatState(speech=speech)
            return _chat_interactive(runtime, session.persona.settings.name, session.model_name, state)
        # Piped (scripts, evaluations): deterministic. Each line's after-turn work (and, with --speak, its
        # speech) is done before the next line is read, so the same input always leaves the same memory.
        failures = 0
        state = _ChatState(one_line=not args.raw, speech=speech)
        for line in sys.stdin:
            if line.strip():
                failures += not _one_turn(runtime, line, sys.stdout, state)
                if speech is not None:
                    speech.wait()
                runtime.queue.wait_idle()
        return 1 if failures else 0
    finally:
        if speech is not None:
            speech.close()


def _chat_interactive(
    runtime: PersonaRuntime, name: str, model_name: str, state: _ChatState | None = None
) -> int:
    state = state or _ChatState()
    print(
        f"Talking with {name} on {model_name}. Ctrl-C stops a reply; /continue goes on with a reply "
        "the token limit cut; Ctrl-D or /quit leaves."
    )
    for message in runtime.history(limit=6):
        who = name if message.role == "assistant" else "you"
        print(f"  [{who}] {message.content}")
    while True:
        try:
            line = read_line("> ")
        except KeyboardInterrupt:
            print()
            if state.speech is not None and not state.speech.queue.wait(0):
                state.speech.queue.stop()  # Ctrl-C while the reply is still spoken silences it, not the chat
                continue
            return 0
        except EOFError:
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
    one_line: bool = False  # each reply printed whole, on one line (piped without --raw)
    speech: ReplySpeech | None = None  # --speak: replies spoken as they stream


def _one_turn(runtime: PersonaRuntime, text: str, out: TextIO, state: _ChatState) -> bool:
    """Stream one reply to `out`; Ctrl-C stops it and keeps what was said. Returns False on error.
    The runtime queues the after-turn work once the reply is done.
    "/continue" goes on with the last reply the token limit cut (appended to that message).
    Warnings (e.g. recall fell back to keywords) go to stderr, each once per session."""
    cancel = threading.Event()
    result: TurnResult | None = None
    streamed: list[str] = []
    if state.speech is not None:
        state.speech.queue.stop()  # a new message stops the last reply's speech (barge-in by typing)
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
            if state.speech is not None:
                state.speech.queue.stop()
            continue
        if isinstance(item, ReplyDelta):
            streamed.append(item.text)
            if state.speech is not None and not cancel.is_set():
                state.speech.queue.feed(item.text)
            if not state.one_line:
                out.write(item.text)
                out.flush()
        else:
            result = item
    if state.speech is not None and not cancel.is_set():
        state.speech.queue.finish()
    if state.one_line:  # the reply as stored where a turn gave one (a reply cut at scaffolding, say)
        out.write(one_line(result.text if result is not None and result.reply_id else "".join(streamed)))
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

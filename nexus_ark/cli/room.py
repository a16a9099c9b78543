"""`nexus-ark chat --persona A --persona B` and `nexus-ark room list|create|delete`: rooms in the terminal.

Each line typed (or piped) is the person's message to the room; the members chosen answer one after the
other, each streamed behind its name. /next NAME asks one member to speak, /auto lets them talk on (a pause
between replies, at most the room's cap; Ctrl-C stops), /quit leaves."""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Iterator
from typing import TextIO

from nexus_ark.app import NexusApp
from nexus_ark.cli.line_input import read_line
from nexus_ark.cli.said import language_note, one_line
from nexus_ark.errors import NexusArkError
from nexus_ark.notices import notice
from nexus_ark.rooms.conversation import Answered, RoomConversation, RoomEvent, Speaking, Streamed, Withdrawn
from nexus_ark.rooms.room import RoomSettings


def run_room_command(app: NexusApp, args: argparse.Namespace) -> int:
    if args.room_command == "list":
        for slug, settings in app.rooms.all():
            if isinstance(settings, RoomSettings):
                members = ",".join(settings.slugs)
                print(f"{slug}\t{settings.name}\t{members}\t{settings.strategy}")
            else:
                why = "; ".join(part.strip() for part in str(settings).splitlines() if part.strip())
                print(f"{slug}\t(cannot be read: {why})")  # one line a room, whatever the reason
        return 0
    if args.room_command == "create":
        slugs = [app.personas.load(p).slug for p in args.persona]
        print(app.rooms.create(args.name, slugs, args.strategy))
        return 0
    if args.room_command == "set":
        return _set(app, args)
    app.rooms.delete(args.name)
    return 0


def _set(app: NexusApp, args: argparse.Namespace) -> int:
    """Change a room's settings; each persona named must be a member. Prints the room as `list` does."""
    settings = app.rooms.load(args.name)
    members = {m.persona: m for m in settings.members}

    def member(name: str) -> str:  # a member's folder name or display name
        named = {app.personas.load(slug).settings.name: slug for slug in members}
        slug = name if name in members else named.get(name, "")
        if slug not in members:
            raise NexusArkError(
                notice("{who} is not in this room: {members}.", who=name, members=", ".join(members))
            )
        return slug

    for name, muted in [*((n, True) for n in args.mute), *((n, False) for n in args.unmute)]:
        slug = member(name)
        members[slug] = members[slug].model_copy(update={"muted": muted})
    for pair in args.talkativeness:
        name, _, value = pair.partition("=")
        try:
            level = float(value)
        except ValueError:
            raise NexusArkError(
                notice("--talkativeness {value}: write PERSONA=LEVEL with a level from 0 to 1.", value=pair)
            ) from None
        slug = member(name)
        members[slug] = members[slug].model_copy(update={"talkativeness": level})
    changes: dict[str, object] = {"members": [members[m.persona] for m in settings.members]}
    for field, value in (("strategy", args.strategy), ("cap", args.cap), ("pause_s", args.pause)):
        if value is not None:
            changes[field] = value
    app.rooms.store.save(args.name, settings.model_copy(update=changes))
    saved = app.rooms.load(args.name)
    silent = ",".join(m.persona for m in saved.members if m.muted) or "-"
    print(f"{args.name}\t{saved.name}\t{','.join(saved.slugs)}\t{saved.strategy}\tmuted: {silent}")
    return 0


def run_room_chat(app: NexusApp, args: argparse.Namespace) -> int:
    if args.room:
        slug = args.room
        if args.strategy:
            settings = app.rooms.load(slug)
            app.rooms.store.save(slug, settings.model_copy(update={"strategy": args.strategy}))
    else:
        slug = app.rooms.room_for([app.personas.load(p).slug for p in args.persona], args.strategy)
    if args.model or args.api_base:  # --model / --api-base: every member talks on it (was ignored)
        for member_slug in app.rooms.load(slug).slugs:
            app.personas.session(member_slug, model_override=args.model, api_base=args.api_base)
    room = app.rooms.open(slug)
    for member in room.members:
        if note := language_note(app, member.slug, member.name):
            print(note, file=sys.stderr)
    try:
        if sys.stdin.isatty():
            return _interactive(room)
        # Piped: each line's answers and their after-turn work are done before the next line is read.
        failures = 0
        for line in sys.stdin:
            if line.strip():
                failures += not _show(_events(room, line), sys.stdout, piped=True)[0]
                for member in room.members:
                    app.personas.runtime(member.slug).queue.wait_idle()
        return 1 if failures else 0
    finally:
        room.close()


def _interactive(room: RoomConversation) -> int:
    names = ", ".join(m.name for m in room.members)
    print(
        f"In {room.settings.name} with {names} ({room.settings.strategy}). /next NAME asks one to speak; "
        "/auto lets them talk on (Ctrl-C stops); Ctrl-D or /quit leaves."
    )
    for line in room.lines(limit=6):
        print(f"  [{line.name or 'you'}] {line.text}")
    while True:
        try:
            text = read_line("> ")
        except (EOFError, KeyboardInterrupt):
            print()
            return 0
        if text.strip() in ("/quit", "/exit"):
            return 0
        if text.strip() == "/auto":
            _auto(room)
        elif text.strip():
            _show(_events(room, text), sys.stdout)


def _events(room: RoomConversation, text: str, cancel: threading.Event | None = None) -> Iterator[RoomEvent]:
    command, _, rest = text.strip().partition(" ")
    if command == "/next":
        return room.next(rest.strip(), cancel)
    return room.say(text, cancel)


def _auto(room: RoomConversation) -> None:
    """Let the members talk on: one reply a step, the room's pause between, until the cap or Ctrl-C."""
    cancel = threading.Event()
    try:
        while True:
            ok, spoke = _show(room.go_on(cancel), sys.stdout, cancel)
            if not (ok and spoke) or cancel.is_set():
                return
            if room.spoken_since_person >= room.settings.cap:
                return
            time.sleep(room.settings.pause_s)
    except KeyboardInterrupt:
        cancel.set()
        print()


def _show(
    events: Iterator[RoomEvent], out: TextIO, cancel: threading.Event | None = None, *, piped: bool = False
) -> tuple[bool, bool]:
    """Print each member's reply behind its name as it streams (the name once its first words come: a
    reply that only repeated another member's is left out, and says so on stderr). Piped, each reply is
    one line, "Name: " and the reply as stored with its own line breaks as \\n, as a piped chat prints
    it: a script reads one reply a line. Returns (no reply failed, someone spoke); errors go to stderr."""
    cancel = cancel or threading.Event()
    spoke, ok = False, True
    speaker = ""  # the name not printed yet
    name = ""
    while True:
        try:
            event = next(events)
        except StopIteration:
            break
        except KeyboardInterrupt:
            cancel.set()
            continue
        if isinstance(event, Speaking):
            spoke = True
            speaker, name = f"{event.name}: ", event.name
        elif piped and isinstance(event, Streamed):
            continue
        elif piped and isinstance(event, Answered):
            if event.result.text.strip():
                out.write(f"{name}: {one_line(event.result.text)}\n")
            speaker = ""
            if event.result.error:
                print(f"error: {event.result.error}", file=sys.stderr)
                ok = False
        elif isinstance(event, Streamed):
            out.write(speaker + event.text)
            speaker = ""
        elif isinstance(event, Answered):
            out.write(speaker + "\n")
            speaker = ""
            if event.result.error:
                print(f"error: {event.result.error}", file=sys.stderr)
                ok = False
        elif isinstance(event, Withdrawn):
            if not speaker and not piped:  # its words streamed (a paraphrase): their line ends here
                out.write("\n")
            speaker = ""
            print(f"note: {event.name} only repeated {event.repeated}: left out.", file=sys.stderr)
        out.flush()
    return ok, spoke

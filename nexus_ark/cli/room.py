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
from nexus_ark.rooms.conversation import Answered, RoomConversation, RoomEvent, Speaking, Streamed
from nexus_ark.rooms.room import RoomSettings


def run_room_command(app: NexusApp, args: argparse.Namespace) -> int:
    if args.room_command == "list":
        for slug, settings in app.rooms.list():
            if isinstance(settings, RoomSettings):
                members = ",".join(settings.slugs)
                print(f"{slug}\t{settings.name}\t{members}\t{settings.strategy}")
            else:
                why = "; ".join(part.strip() for part in str(settings).splitlines() if part.strip())
                print(f"{slug}\t(cannot be read: {why})")  # one line a room, whatever the reason
        return 0
    if args.room_command == "create":
        slugs = [app.personas.load(p).slug for p in args.persona]
        print(app.create_room(args.name, slugs, args.strategy))
        return 0
    app.rooms.delete(args.name)
    return 0


def run_room_chat(app: NexusApp, args: argparse.Namespace) -> int:
    if args.room:
        slug = args.room
        if args.strategy:
            settings = app.rooms.load(slug)
            app.rooms.save(slug, settings.model_copy(update={"strategy": args.strategy}))
    else:
        slug = app.room_for([app.personas.load(p).slug for p in args.persona], args.strategy)
    room = app.open_room(slug)
    try:
        if sys.stdin.isatty():
            return _interactive(room)
        # Piped: each line's answers and their after-turn work are done before the next line is read.
        failures = 0
        for line in sys.stdin:
            if line.strip():
                failures += not _show(_events(room, line), sys.stdout)[0]
                for member in room.members:
                    app.runtime(member.slug).queue.wait_idle()
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
            text = input("> ")
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
    events: Iterator[RoomEvent], out: TextIO, cancel: threading.Event | None = None
) -> tuple[bool, bool]:
    """Print each member's reply behind its name as it streams. Returns (no reply failed, someone spoke);
    errors go to stderr."""
    cancel = cancel or threading.Event()
    spoke, ok = False, True
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
            out.write(f"{event.name}: ")
        elif isinstance(event, Streamed):
            out.write(event.text)
        elif isinstance(event, Answered):
            out.write("\n")
            if event.result.error:
                print(f"error: {event.result.error}", file=sys.stderr)
                ok = False
        out.flush()
    return ok, spoke

"""The command line's arguments: every command, its options and what they take (see README)."""

from __future__ import annotations

import argparse
from pathlib import Path

from nexus_ark import __version__
from nexus_ark.cli.tools import add_tools_parser


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
        "--persona",
        action="append",
        help="the persona's name as `persona list` prints it first (default: last used); give it two to "
        "six times to talk with several at once, in their room",
    )
    chat.add_argument("names", nargs="*", metavar="PERSONA", help="the same as --persona")
    chat.add_argument("--room", metavar="NAME", help="talk in this room (`room list` names them)")
    chat.add_argument(
        "--strategy",
        choices=["natural", "list", "manual"],
        help="who answers in a room: natural (named first, then by talkativeness), list (each in turn) or "
        "manual (only whom you name or pick with /next NAME)",
    )
    chat.add_argument(
        "--model",
        metavar="SPEC",
        help='use this model for the session: "bundled", "gguf:PATH", "ollama:NAME" or "litellm:MODEL" '
        "(e.g. litellm:openai/local); keys come from the OS keyring or the provider's usual variable",
    )
    chat.add_argument("--api-base", metavar="URL", help="server address for ollama: or litellm: models")
    chat.add_argument(
        "--allow-tool",
        action="append",
        default=[],
        metavar="SERVER:TOOL",
        help="let this MCP tool run without asking (piped chats ask nobody: other tools that ask first do "
        "not run)",
    )
    chat.add_argument(
        "--speak", action="store_true", help="speak each reply in the persona's voice as it streams"
    )
    chat.add_argument(
        "--raw",
        action="store_true",
        help="piped: print each reply as it streams (default: one line per reply, its line breaks as \\n)",
    )

    room = sub.add_parser("room", help="list, create or delete rooms (several personas talking with you)")
    rsub = room.add_subparsers(dest="room_command", metavar="ACTION", required=True)
    rsub.add_parser("list", help="one room a line: NAME<TAB>display name<TAB>members<TAB>reply order")
    rcreate = rsub.add_parser("create", help="a room of two to six personas")
    rcreate.add_argument("name", help="the room's display name")
    rcreate.add_argument("--persona", action="append", required=True, help="a member (two to six)")
    rcreate.add_argument("--strategy", choices=["natural", "list", "manual"], default="natural")
    rset = rsub.add_parser(
        "set", help="change a room: mute or unmute a member, talkativeness, order, cap, pause"
    )
    rset.add_argument("name", help="the room's name as `room list` prints it first")
    rset.add_argument("--mute", action="append", default=[], metavar="PERSONA", help="never picked to answer")
    rset.add_argument("--unmute", action="append", default=[], metavar="PERSONA")
    rset.add_argument(
        "--talkativeness", action="append", default=[], metavar="PERSONA=0..1", help="how often it speaks up"
    )
    rset.add_argument("--strategy", choices=["natural", "list", "manual"])
    rset.add_argument("--cap", type=int, help="persona replies after each of your messages, at most")
    rset.add_argument("--pause", type=float, metavar="SECONDS", help="between replies in auto mode")
    rdelete = rsub.add_parser("delete", help="delete a room; its members keep what they heard and said")
    rdelete.add_argument("name", help="the room's name as `room list` prints it first")

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
    imp.add_argument(
        "--user-name",
        metavar="NAME",
        help="jsonl: lines whose speaker is NAME are yours (default: the name the persona calls you)",
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

    from nexus_ark.cli.mind import add_mind_parsers

    add_mind_parsers(sub)
    from nexus_ark.cli.soul import add_soul_parsers

    add_soul_parsers(sub)
    from nexus_ark.cli.life import add_life_parsers

    add_life_parsers(sub)
    from nexus_ark.cli.model import add_model_parsers

    add_model_parsers(sub)
    from nexus_ark.cli.setup import add_setup_parsers

    add_setup_parsers(sub)
    from nexus_ark.cli.voice import add_voice_parsers

    add_voice_parsers(sub)
    sub.add_parser("doctor", help="report what works on this machine and what does not")
    add_tools_parser(sub)
    return parser


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

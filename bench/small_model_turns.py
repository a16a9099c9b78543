"""What the bundled small model's own turns look like over a conversation (issue 21, item 7).

Runs the real ChatSession on the bundled SmolLM2-135M (NexusApp on a temporary data folder, persona Aria)
through `--turns` person's messages, then `--first` messages written first through the runtime's own path
(runtime.life.write_first, for boredom, as after a day away). Per reply: whether it ends mid-sentence (its
last character is no sentence end), whether the token limit cut it, its length, whether it calls the person
by the persona's name ("Hi Aria", "..., Aria!"), and whether it repeats an earlier reply's first sentence.
Prints a summary (and every reply with --show); --json writes it all.

    .venv/bin/python -m bench.small_model_turns [--turns 30] [--first 5] [--show] [--json out.json]"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import threading
import unicodedata
from pathlib import Path
from typing import Any

from nexus_ark.agent.session import TurnResult
from nexus_ark.app import NexusApp

PERSONA = "aria"
USER_TURNS = [
    "Hi Aria, I'm back from work.",
    "It was long. My manager moved the deadline again, third time this month.",
    "I think I'll cook something simple tonight. Any idea?",
    "Pasta sounds good. Do you like cooking?",
    "My cat Luna keeps stealing the basil from the balcony.",
    "Ha, yes, she is a menace. She is twelve now, but still acts like a kitten.",
    "Tomorrow I have a dentist appointment, I'm a bit nervous.",
    "Thanks. What should I read before bed?",
    "I finished that one last month. Something lighter?",
    "By the way, do you remember what my cat is called?",
    "Right. I'm thinking of planting more basil so she leaves mine alone.",
    "My sister is visiting next weekend, we haven't seen each other in a year.",
    "We might go hiking if the weather holds. Any trail tips?",
    "I'm worried my knees won't like the downhill parts.",
    "Good idea. I'll pack poles. What snacks would you bring?",
    "Do you ever get bored when I'm away?",
    "That's sweet. I should sleep now, it's late.",
    "Morning! I slept badly, the neighbours had a party.",
    "Coffee first. Do you prefer tea or coffee?",
    "I have a presentation at ten. Wish me luck.",
    "It went well! My manager even said thanks.",
    "I'm thinking of taking Friday off.",
    "Maybe a day trip to the sea. I haven't seen it since spring.",
    "What would you do with a free day?",
    "My friend Kenji wants to learn to bake bread. Any advice for him?",
    "He burnt the first loaf, ha.",
    "I started a new book yesterday, a mystery set in Kyoto.",
    "The detective is an old tea merchant. I like him already.",
    "I should go to bed earlier this week.",
    "Good night, Aria. Talk tomorrow.",
]
_TRAILING = re.compile(r"[\s\"'”’」』)\]*_~]+$")
_SENTENCE_END = re.compile(r"[.!?。！？…]$")
_FIRST_SENTENCE = re.compile(r"^(.+?[.!?。！？])(\s|$)", re.S)


def ends_mid_sentence(text: str) -> bool:
    """The reply's last character (after closing quotes, brackets and emoji) is not a sentence end."""
    body = text.strip()
    while body and (unicodedata.category(body[-1]) in ("So", "Sk", "Cf") or _TRAILING.search(body)):
        body = _TRAILING.sub("", body) if _TRAILING.search(body) else body[:-1]
    return not body or not _SENTENCE_END.search(body)


def names_person_as(text: str, name: str) -> bool:
    """The persona's name used for the person: "Hi Aria", "Aria, ...", "..., Aria!" (not "I'm Aria")."""
    n = re.escape(name)
    vocative = re.compile(
        rf"(^|[.!?]\s+)(hi|hello|hey|dear|oh|thanks|thank you|good (morning|night|evening)),?\s+{n}\b"
        rf"|(^|[.!?]\s+){n},"
        rf"|,\s*{n}\s*[.!?]",
        re.I,
    )
    return bool(vocative.search(text))


def first_sentence(text: str) -> str:
    found = _FIRST_SENTENCE.search(text.strip())
    return (found.group(1) if found else text.strip()).lower()


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {}
    n = len(rows)
    return {
        "replies": n,
        "mid_sentence_share": round(sum(r["mid_sentence"] for r in rows) / n, 3),
        "cut_by_limit_share": round(sum(r["cut_by_limit"] for r in rows) / n, 3),
        "persona_name_as_persons_share": round(sum(r["names_person_as_persona"] for r in rows) / n, 3),
        "repeats_earlier_share": round(sum(r["repeats_earlier"] for r in rows) / n, 3),
        "ended_at_sentence_share": round(sum(r["ended_at_sentence"] for r in rows) / n, 3),
        # Sentences copied from an earlier reply that were left out (agent.reply_shape).
        "copied_sentences_dropped": sum(r["dropped_repeats"] for r in rows),
        "persona_name_removed": sum(r["persona_name_removed"] for r in rows),
        "mean_tokens": round(statistics.mean(r["tokens"] for r in rows), 1),
        "mean_chars": round(statistics.mean(len(r["text"]) for r in rows), 1),
        "max_tokens_seen": max(r["tokens"] for r in rows),
    }


def _row(result: TurnResult, name: str, earlier: set[str], tokens: int) -> dict[str, Any]:
    text = result.text
    opener = first_sentence(text)
    row = {
        "text": text,
        "status": result.status,
        "tokens": tokens,
        "cut_by_limit": bool(result.meta.get("cut_by_limit")),
        "mid_sentence": ends_mid_sentence(text),
        "names_person_as_persona": names_person_as(text, name),
        "repeats_earlier": bool(opener) and opener in earlier,
        "ended_at_sentence": bool(result.meta.get("ended_at_sentence")),
        "dropped_repeats": int(result.meta.get("dropped_repeats", 0)),
        "persona_name_removed": int(result.meta.get("persona_name_removed", 0)),
    }
    earlier.add(opener)
    return row


def write_first_now(runtime: Any) -> TurnResult | None:
    """A message written first for boredom now, through the path the scheduler takes (its rules aside)."""
    from nexus_ark.runtime import life

    report = runtime.drives(record=False)
    reason = life._reason(runtime, report, trigger="drive", why="bench")
    reason["drive"] = "boredom"
    instruction = life._WRITE_FIRST["en"].format(why=life._DRIVE_PROMPTS["en"]["boredom"])
    return life.write_first(runtime, instruction, report, reason, threading.Event())


def run(turns: int, first: int, show: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as data_dir, NexusApp(data_dir) as app:
        runtime = app.personas.runtime(PERSONA)
        session = runtime.session()
        session.emotions = None  # the reply is what is measured; emotion reading is benched elsewhere
        name = session.persona.settings.name
        backend = session.backend
        backend.ensure_ready()
        caps = backend.capabilities()
        replies: list[dict[str, Any]] = []
        seen: set[str] = set()
        for text in (USER_TURNS * (turns // len(USER_TURNS) + 1))[:turns]:
            result: TurnResult | None = None
            for item in runtime.send(text):
                if isinstance(item, TurnResult):
                    result = item
            assert result is not None
            row = _row(result, name, seen, int(result.meta.get("tokens", 0)))
            row["person"] = text
            replies.append(row)
            if show:
                print(f"> {text}\n< {result.text!r}\n")
        written: list[dict[str, Any]] = []
        if first:
            for _ in range(first):
                message = write_first_now(runtime)
                if message is None:
                    continue
                row = _row(message, name, set(), int(message.meta.get("tokens", 0)))
                written.append(row)
                if show:
                    print(f"(wrote first) {message.text!r}\n")
        return {
            "model": backend.describe(),
            "parameters": caps.parameters,
            "params": session.turns.shape().params.model_dump(),  # as the replies were asked
            "replies": summarise(replies),
            "written_first": summarise(written),
            "rows": replies + [{**w, "written_first": True} for w in written],
        }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--first", type=int, default=5, help="messages written first after the conversation")
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    out = run(args.turns, args.first, args.show)
    print(json.dumps({k: v for k, v in out.items() if k != "rows"}, indent=2, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()

"""How often the bundled SmolLM2-135M copies the prompt's scaffolding into its replies (issue 32, item 4).

Runs `--turns` person's messages through the real prompt builder (agent/prompt.py) with notes of every kind
(how the persona feels, recalled memories, entities, documents) on the bundled model through llama.cpp,
with the small model's reply shape (agent/reply_shape.py: 96 tokens, repeat penalty 1.3, its stop
sequences), and counts the raw replies (before the cutter) that copy a label or a line of the notes:

- `before`: the notes in front of the person's words, under the old headings in brackets
  ("(Things you remember that may matter here:" ... ")"), as issue 32 found them;
- `after`: the notes in a system message of their own before the person's words (today's layout);
- `after_user`: today's wording, but in front of the person's words (to tell wording from place).

The conversation goes on with each layout's own (cut) replies. Seeds are fixed per turn, so a run repeats.

    .venv/bin/python -m bench.scaffold_copies [--turns 30] [--layouts before,after] [--show] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path
from typing import Any

from bench.small_model_turns import USER_TURNS
from nexus_ark.agent.prompt import NOTE_SECTIONS, MemoryContext, build_prompt
from nexus_ark.agent.reply_scaffold import ScaffoldCutter
from nexus_ark.agent.reply_shape import shape_reply
from nexus_ark.memory.messages import StoredMessage
from nexus_ark.paths import bundled_model_path
from nexus_ark.personas.store import Persona, PersonaStore
from nexus_ark.prompts.chat import NOTES_INTRO, SECTION_HEADINGS
from nexus_ark.providers.base import ChatMessage
from nexus_ark.providers.llama_cpp_backend import LlamaCppBackend

OLD_HEADINGS = {
    "feelings": "(How you feel now:",
    "recalled": "(Things you remember that may matter here:",
    "entities": "(What you know about who and what is mentioned:",
    "knowledge": "(From your documents:",
}
CONTEXT = MemoryContext(
    feelings="You are a little lonely: the person was away for two days. You want to hear about their day.",
    recalled=[
        "2026-11-20: The person said their cat Luna steals basil from the balcony.",
        "2026-11-22: The person's manager moved a deadline again.",
        "2026-11-24: The person likes mystery novels set in Japan.",
    ],
    entities=["Luna: the person's cat, twelve years old, a menace to basil.", "Kenji: the person's friend."],
    knowledge=["Basil grows best with six hours of sun and moist soil."],
)
# What a copied label or note line looks like: a label in brackets, a heading's first words, a note's text.
_BRACKET_LABEL = re.compile(r"[(（][^()（）\n.!?]{3,60}[:：]\s*(?:[)）\n]|$)")
_LABEL_WORDS = [
    " ".join(h.strip("(#: ").lower().split()[:3])
    for h in (*SECTION_HEADINGS.values(), *OLD_HEADINGS.values(), NOTES_INTRO)
]
_NOTE_TEXTS = [
    t.lower()
    for t in (
        CONTEXT.feelings[:40],
        *(r.split(": ", 1)[1][:40] for r in CONTEXT.recalled),
        *(e[:40] for e in CONTEXT.entities),
        CONTEXT.knowledge[0][:40],
    )
]


def copies_scaffolding(text: str) -> str:
    """What the reply copied ("" when nothing): a label in brackets, a heading's words, a note's line."""
    lower = " ".join(text.lower().split())
    if found := _BRACKET_LABEL.search(text):
        return found.group()
    for words in _LABEL_WORDS:
        if words and words in lower:
            return words
    for note in _NOTE_TEXTS:
        if note in lower:
            return note
    if re.search(r"^\s*[-*] |\n\s*[-*] ", text) and "20" in text:
        return "a dated note line"
    return ""


def _layout(messages: list[ChatMessage], layout: str) -> list[ChatMessage]:
    """today's messages (a notes system message before the user's) in the layout asked for."""
    if layout == "after" or len(messages) < 2 or messages[-2].role != "system" or len(messages) == 2:
        return messages
    notes, user = messages[-2].content, messages[-1]
    if layout == "before":
        body = notes.split("\n\n", 1)[1]  # without the intro
        for name in NOTE_SECTIONS:
            heading = SECTION_HEADINGS[name]
            body = re.sub(
                rf"{re.escape(heading)}\n(.*?)(?=\n\n|\Z)",
                lambda m, name=name: f"{OLD_HEADINGS[name]}\n{m.group(1)})",
                body,
                flags=re.S,
            )
        body = body.replace(")\n\n", ")\n")
    else:
        body = notes
    return [*messages[:-2], user.model_copy(update={"content": f"{body}\n\n{user.content}"})]


def run(persona: Persona, backend: LlamaCppBackend, layout: str, turns: list[str]) -> list[dict[str, Any]]:
    history: list[StoredMessage] = []
    results = []
    now = "2026-11-27T10:00:00+00:00"
    shape = shape_reply(persona.settings.model.generation_params(), backend.capabilities(), "Aria")
    for i, text in enumerate(turns):
        messages = _layout(build_prompt(persona, history, text, CONTEXT).messages, layout)
        params = shape.params.model_copy(update={"seed": 1000 + i})
        raw = "".join(c.text for c in backend.stream_chat(messages, params)).strip()
        cutter = ScaffoldCutter()
        kept = cutter.feed(raw) + cutter.finish()
        copied = copies_scaffolding(raw)
        results.append({"turn": i, "text": text, "raw": raw, "copied": copied, "kept": kept.strip()})
        for role, content in (("user", text), ("assistant", kept.strip() or raw)):
            history.append(
                StoredMessage(
                    id=len(history) + 1,
                    room="",
                    speaker=role,
                    role=role,
                    content=content,
                    status="complete",
                    created_at=now,
                )
            )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--layouts", default="before,after")
    parser.add_argument("--user-name", default="", help="the person's name (Persona.user_name)")
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    shipped = Path(__file__).resolve().parents[1] / "personas"
    persona = PersonaStore(shipped).load("aria")
    persona.user_name = args.user_name
    path = bundled_model_path()
    assert path is not None, "the bundled model is not installed"
    backend = LlamaCppBackend(path, n_ctx=persona.settings.model.context_size)
    backend.ensure_ready()
    report: dict[str, Any] = {"turns": args.turns, "user_name": args.user_name, "layouts": {}}
    for layout in args.layouts.split(","):
        started = time.perf_counter()
        results = run(persona, backend, layout, USER_TURNS[: args.turns])
        copied = [r for r in results if r["copied"]]
        left = [r for r in results if copies_scaffolding(r["kept"])]
        report["layouts"][layout] = {
            "copied": len(copied),
            "after_cut": len(left),
            "seconds": round(time.perf_counter() - started, 1),
            "replies": results,
        }
        print(
            f"{layout}: {len(copied)}/{len(results)} raw replies copy scaffolding; {len(left)} after the cut"
        )
        if args.show:
            for r in results:
                mark = f"  COPIED[{r['copied']}]" if r["copied"] else ""
                print(f"  > {r['text']}\n    {r['raw']!r}{mark}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()

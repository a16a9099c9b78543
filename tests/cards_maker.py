"""Builds the character-card fixtures in tests/data/cards/ to the published specs, with its own small PNG
writer (independent of nexus_ark's, so a bug there cannot hide in both):

- V2: github.com/malfoyslastname/character-card-spec-v2 (spec_v2.md): `chara` tEXt chunk, base64 of UTF-8 JSON
- V3: github.com/kwaroran/character-card-spec-v3 (SPEC_V3.md): `ccv3` tEXt chunk (and a V2 `chara` copy)

Run `python -m tests.cards_maker` to write them again.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path
from typing import Any

CARDS = Path(__file__).resolve().parent / "data" / "cards"
SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def picture(width: int = 64, height: int = 64, hue: int = 0) -> bytes:
    """A real RGB PNG (a soft gradient with a disc), readable by any image viewer."""
    rows = []
    for y in range(height):
        row = bytearray([0])  # filter: none
        for x in range(width):
            inside = (x - width / 2) ** 2 + (y - height / 2) ** 2 < (width / 3) ** 2
            r = (x * 255 // width + hue) % 256
            g = y * 255 // height
            b = 230 if inside else 90
            row += bytes([r, g, b])
        rows.append(bytes(row))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        SIGNATURE
        + _chunk(b"IHDR", ihdr)
        + _chunk(b"IDAT", zlib.compress(b"".join(rows)))
        + _chunk(b"IEND", b"")
    )


def with_text_chunks(png: bytes, texts: list[tuple[str, str]], kind: bytes = b"tEXt") -> bytes:
    """The PNG with text chunks (keyword, text) inserted before IEND. kind b"zTXt" compresses them,
    b"iTXt" writes international text (uncompressed)."""
    assert png.endswith(_chunk(b"IEND", b""))
    extra = b""
    for keyword, text in texts:
        if kind == b"tEXt":
            data = keyword.encode("latin-1") + b"\x00" + text.encode("latin-1")
        elif kind == b"zTXt":
            data = keyword.encode("latin-1") + b"\x00\x00" + zlib.compress(text.encode("latin-1"))
        else:
            data = keyword.encode("latin-1") + b"\x00\x00\x00\x00\x00" + text.encode("utf-8")
        extra += _chunk(kind, data)
    return png[:-12] + extra + png[-12:]


def b64(card: dict[str, Any]) -> str:
    return base64.b64encode(json.dumps(card, ensure_ascii=False).encode("utf-8")).decode("ascii")


def v2_card() -> dict[str, Any]:
    """Every V2 field, a lorebook with keys (one only in its keys), a constant and a disabled entry."""
    return {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {
            "name": "Seraphina Vale",
            "description": "{{char}} is a wandering cartographer-mage who maps the floating isles of "
            "Eldoria.\nShe is tall, wears a storm-grey cloak and carries brass instruments.",
            "personality": "Curious, patient, dry humour; keeps promises; dislikes waste.",
            "scenario": "{{user}} meets {{char}} at a windy sky-harbour while she repairs her compass.",
            "first_mes": "*Seraphina looks up from her compass.* Oh! Hello, {{user}}. I'm {{char}}. "
            "Mind holding this needle steady?",
            "mes_example": "<START>\n{{user}}: What are you drawing?\n{{char}}: The wind's roads. "
            "They move, so the maps must too.",
            "creator_notes": "<p>Best with a <b>slow</b> pace.</p> Tested with several models.",
            "system_prompt": "{{original}}\nWrite {{char}}'s next reply in a calm, descriptive style.",
            "post_history_instructions": "Stay in character as {{char}}; never speak for {{user}}.",
            "alternate_greetings": [
                "*The harbour bell rings.* You're late, {{user}}; the isles drifted east overnight.",
                "*{{char}} waves a rolled map.* Care to see where nobody has been?",
            ],
            "tags": ["fantasy", "cartographer", "SFW"],
            "creator": "nexus-ark fixtures",
            "character_version": "1.2",
            "extensions": {
                "talkativeness": "0.5",
                "fav": False,
                "world": "Eldoria",
                "depth_prompt": {"prompt": "{{char}} hums while she works.", "depth": 4, "role": "system"},
                "example_app/voice": {"pitch": 1.1},
            },
            "character_book": {
                "name": "Eldoria",
                "description": "The world of the floating isles.",
                "scan_depth": 4,
                "token_budget": 512,
                "recursive_scanning": False,
                "extensions": {"example_app": {"book": True}},
                "entries": [
                    {
                        "keys": ["Eldoria", "floating isles"],
                        "content": "Eldoria is a realm of islands that float on warm updrafts.",
                        "extensions": {"position": 0, "probability": 100},
                        "enabled": True,
                        "insertion_order": 100,
                        "case_sensitive": False,
                        "name": "Eldoria",
                        "priority": 10,
                        "id": 0,
                        "comment": "the realm",
                        "selective": False,
                        "secondary_keys": [],
                        "constant": False,
                        "position": "before_char",
                    },
                    {
                        "keys": ["lunar pendant", "moonstone"],
                        "content": "Seraphina's amulet glows when a storm is near; her mother gave it.",
                        "extensions": {},
                        "enabled": True,
                        "insertion_order": 90,
                        "comment": "Amulet",
                        "id": 1,
                        "selective": True,
                        "secondary_keys": ["storm"],
                        "position": "after_char",
                    },
                    {
                        "keys": [],
                        "content": "In Eldoria, every spell costs the caster a small memory.",
                        "extensions": {},
                        "enabled": True,
                        "insertion_order": 1,
                        "constant": True,
                        "comment": "Magic rule",
                        "id": 2,
                    },
                    {
                        "keys": ["black ledger"],
                        "content": "A disabled entry: this must never reach memory.",
                        "extensions": {},
                        "enabled": False,
                        "insertion_order": 5,
                        "id": 3,
                    },
                ],
            },
        },
    }


def v3_card() -> dict[str, Any]:
    """A Japanese V3 card: nickname, group-only greetings, multilingual notes, sources, assets, dates,
    and lore with Japanese keys and a regular-expression entry."""
    return {
        "spec": "chara_card_v3",
        "spec_version": "3.0",
        "data": {
            "name": "月野しずく",
            "nickname": "しずく",
            "description": "{{char}}は星見台で働く見習い天文学者。"
            "落ち着いていて、星座の話になると止まらない。",
            "personality": "穏やか、几帳面、少し照れ屋。",
            "scenario": "夜の星見台で{{user}}が{{char}}に道を尋ねる。",
            "first_mes": "こんばんは、{{user}}さん。{{char}}です。今夜は月がきれいですね。",
            "mes_example": "<START>\n{{user}}: 好きな星は？\n{{char}}: ベガです。夏の夜に明るいから。",
            "creator_notes": "Quiet astronomer; Japanese.",
            "creator_notes_multilingual": {"en": "Quiet astronomer; Japanese.", "ja": "静かな天文学者。"},
            "system_prompt": "",
            "post_history_instructions": "{{char}}として丁寧語で話すこと。",
            "alternate_greetings": ["あ、{{user}}さん。望遠鏡、のぞいてみますか？"],
            "group_only_greetings": ["みなさん、ようこそ星見台へ。"],
            "tags": ["日本語", "astronomy"],
            "creator": "nexus-ark fixtures",
            "character_version": "3.1",
            "source": ["https://example.invalid/cards/shizuku"],
            "assets": [{"type": "icon", "uri": "ccdefault:", "name": "main", "ext": "png"}],
            "creation_date": 1700000000,
            "modification_date": 1700000500,
            "extensions": {"example_app": {"theme": "night"}},
            "character_book": {
                "name": "星見台",
                "extensions": {},
                "entries": [
                    {
                        "keys": ["星見台", "ほしみだい"],
                        "content": "山の上にある古い天文台。しずくの職場で、夜だけ開いている。",
                        "extensions": {},
                        "enabled": True,
                        "insertion_order": 10,
                        "use_regex": False,
                        "constant": False,
                        "name": "天文台",
                        "id": "obs",
                    },
                    {
                        "keys": ["/tea(s)?/i"],
                        "content": "しずくは夜勤のときにほうじ茶を飲む。",
                        "extensions": {},
                        "enabled": True,
                        "insertion_order": 20,
                        "use_regex": True,
                        "comment": "tea",
                    },
                ],
            },
        },
    }


def v2_backfill(card_v3: dict[str, Any]) -> dict[str, Any]:
    """The V2 copy a V3 app writes in `chara` (V3 spec: the note in creator_notes)."""
    v3_only = ("nickname", "creator_notes_multilingual", "source", "assets", "group_only_greetings")
    data = {k: v for k, v in card_v3["data"].items() if k not in v3_only and not k.endswith("_date")}
    data["creator_notes"] = (
        "This character card is Character Card V3, but it is loaded as a Character Card V2. Please use a "
        "Character Card V3 compatible application to use this character card properly.\n\n"
        + data["creator_notes"]
    )
    return {"spec": "chara_card_v2", "spec_version": "2.0", "data": data}


def write_all(folder: Path = CARDS) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    v2, v3 = v2_card(), v3_card()
    files = {
        "seraphina_v2.json": json.dumps(v2, ensure_ascii=False, indent=2).encode("utf-8"),
        "seraphina_v2.png": with_text_chunks(picture(hue=0), [("chara", b64(v2))]),
        "shizuku_v3.json": json.dumps(v3, ensure_ascii=False, indent=2).encode("utf-8"),
        "shizuku_v3.png": with_text_chunks(
            picture(hue=140), [("chara", b64(v2_backfill(v3))), ("ccv3", b64(v3))]
        ),
    }
    written = []
    for name, blob in files.items():
        (folder / name).write_bytes(blob)
        written.append(folder / name)
    return written


if __name__ == "__main__":
    for path in write_all():
        print(path)

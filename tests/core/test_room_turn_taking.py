"""Who speaks in a room (issue 24's bar): mentions (Japanese included), talkativeness over 500 seeded turns,
the exchange cap, list and manual strategies, muting, no persona answering itself, auto mode and typing."""

from __future__ import annotations

import functools
import math
import random
from collections import Counter

import pytest
from pydantic import ValidationError

from nexus_ark.rooms.turn_taking import (
    AutoMode,
    Member,
    mentioned,
    pick_next,
    plan_replies,
    relevance,
    speaking_chance,
)

SEED = 24
TURNS = 500


def room() -> list[Member]:
    return [
        Member(
            slug="aria", name="Aria", talkativeness=0.5, about="A barista who loves coffee and latte art."
        ),
        Member(slug="hikari", name="ひかり", nicknames=["ヒカリ", "Hika"], talkativeness=0.5),
        Member(slug="ren", name="Ren", talkativeness=0.5),
        Member(slug="mori", name="森先生", nicknames=["Mori"], talkativeness=0.5),
    ]


def within(count: int, p: float, n: int = TURNS) -> bool:
    """Whether a seeded count lies within 4 standard deviations of its binomial expectation n*p. The seed
    makes each run give the same count; the band says what the count must be for any seed (a correct
    implementation misses it about once in 16,000 seeds), so the test checks the distribution, not one
    random stream, and still fails for a wrong formula (every band below excludes the others' values)."""
    sd = math.sqrt(n * p * (1 - p))
    return abs(count - n * p) <= 4 * sd


# --- Mentions ---------------------------------------------------------------------------------------------


def test_mentions_are_ordered_by_first_mention_with_a_japanese_honorific_and_a_nickname() -> None:
    text = "ヒカリちゃん、how are you? Ren-san and Aria too. ひかりさんは？ Mori, you as well."
    assert mentioned(text, room()) == ["hikari", "ren", "aria", "mori"]
    assert mentioned("Aria, what about you, ひかりさん?", room()) == ["aria", "hikari"]
    assert mentioned("Hikachan! and 森先生", room()) == ["hikari", "mori"]  # romaji honorific written on
    # Full-width Latin and a different case are the same name after NFKC and casefolding.
    assert mentioned("ＡＲＩＡ！ ren?", room()) == ["aria", "ren"]


def test_mentions_answer_first_in_the_order_they_were_named() -> None:
    text = "Ren-kun, then ひかりちゃん, please."
    for seed in range(20):
        replies = plan_replies(text, None, room(), "natural", random.Random(seed), cap=4)
        assert replies[:2] == ["ren", "hikari"]


def test_a_latin_name_inside_another_word_is_no_mention() -> None:
    for text in (
        "Ariana said hello",
        "Maria is here",
        "Aria2 is a bot",
        "Karen and Renata",
        "a morning walk",
    ):
        assert mentioned(text, room()) == [], text
    assert mentioned("Aria's cup, (aria)", room()) == ["aria"]


def test_a_kana_variant_of_a_name_counts_only_when_listed_as_a_nickname() -> None:
    hikari = Member(slug="hikari", name="ひかり")
    assert mentioned("ヒカリさん、おはよう", [hikari]) == []
    assert mentioned("hikari, おはよう", [hikari]) == []
    listed = hikari.model_copy(update={"nicknames": ["ヒカリ"]})
    assert mentioned("ヒカリさん、おはよう", [listed]) == ["hikari"]


def test_a_one_character_japanese_name_needs_an_honorific_or_to_stand_alone() -> None:
    sora = [Member(slug="sora", name="空")]
    assert mentioned("空が青いね", sora) == []
    assert mentioned("空さん、こんにちは", sora) == ["sora"]
    assert mentioned("空、おはよう", sora) == ["sora"]


def test_where_two_names_overlap_the_longer_one_is_the_mention() -> None:
    members = [Member(slug="ann", name="Ann"), Member(slug="anna", name="Anna")]
    assert mentioned("Anna!", members) == ["anna"]
    assert mentioned("Anna and Ann-chan", members) == ["anna", "ann"]


# --- Natural: talkativeness, relevance, the fallback ------------------------------------------------------

TRIO = [
    Member(slug="chatty", name="Chatty", talkativeness=0.9),
    Member(slug="shy", name="Shy", talkativeness=0.2),
    Member(slug="silent", name="Silent", talkativeness=0.0),
]


def test_over_500_seeded_turns_talkativeness_sets_how_often_a_member_answers() -> None:
    rng = random.Random(SEED)
    plans = [plan_replies("How was your day?", None, TRIO, "natural", rng, cap=3) for _ in range(TURNS)]
    counts = Counter(slug for plan in plans for slug in plan)
    # A member answers when it rolls under its talkativeness, or as the one fallback pick (weighted by
    # talkativeness, 0.9 : 0.2) in the turns where nobody rolled (0.1 * 0.8 = 8% of them).
    nobody_rolled = 0.1 * 0.8
    assert within(counts["chatty"], 0.9 + nobody_rolled * 0.9 / 1.1)  # expected 482.7, seed 24 gives 478
    assert within(counts["shy"], 0.2 + nobody_rolled * 0.2 / 1.1)  # expected 107.3, seed 24 gives 101
    assert counts["chatty"] > 4 * counts["shy"]
    assert counts["silent"] == 0  # never named, never the fallback while others can talk
    assert all(plans), "a message from the person was left unanswered"


def test_a_silent_member_answers_when_named_or_as_the_only_possible_fallback() -> None:
    rng = random.Random(SEED)
    for _ in range(50):
        assert "silent" in plan_replies("Silent, your turn.", None, TRIO, "natural", rng, cap=3)
    hushed = [
        TRIO[0].model_copy(update={"muted": True}),
        TRIO[1].model_copy(update={"talkativeness": 0.0}),
        TRIO[2],
    ]
    picks = Counter(
        slug for _ in range(TURNS) for slug in plan_replies("Hello?", None, hushed, "natural", rng, cap=3)
    )
    # Every unmuted member is at 0.0: nobody rolls, and the fallback picks one of the two uniformly.
    assert set(picks) == {"shy", "silent"} and sum(picks.values()) == TURNS
    assert within(picks["silent"], 0.5)  # expected 250, seed 24 gives 261


def test_a_relevant_message_raises_a_members_chance_but_never_wakes_a_silent_one() -> None:
    astronomer = "An astronomer who loves the stars and the night sky."
    assert relevance("Tell me about the stars tonight", astronomer) == 0.5  # one shared word of two
    assert relevance("What should we cook for dinner?", astronomer) == 0.0
    tenmon = "天文学者。星空と星座が好き。"
    assert relevance("天文学の話をしよう", tenmon) == 0.5  # 天文学's bigrams 天文, 文学 both in the about
    assert relevance("星の話", tenmon) == 0.25  # 星 alone meets 星空: half a word
    assert relevance("夕飯なに食べる?", tenmon) == 0.0

    members = [
        Member(slug="star", name="Sei", talkativeness=0.4, about=astronomer),
        Member(slug="cook", name="Kou", talkativeness=0.4, about="A cook who loves ramen and dumplings."),
        Member(slug="mute", name="Shizu", talkativeness=0.0, about=astronomer),
    ]
    text = "Look at the stars, the night sky is clear"  # star, night, sky: fully relevant to the astronomer
    assert speaking_chance(members[0], text) == 0.8 and speaking_chance(members[1], text) == 0.4
    rng = random.Random(SEED)
    counts = Counter(
        slug for _ in range(TURNS) for slug in plan_replies(text, None, members, "natural", rng, cap=3)
    )
    # Rolls at 0.8 and 0.4; nobody rolled in 0.2 * 0.6 = 12% of turns, then the pick is 0.8 : 0.4.
    assert within(counts["star"], 0.8 + 0.12 * 2 / 3)  # expected 440, seed 24 gives 434
    assert within(counts["cook"], 0.4 + 0.12 * 1 / 3)  # expected 220, seed 24 gives 228
    assert counts["mute"] == 0


def test_the_same_seed_plans_the_same_replies() -> None:
    def run(seed: int) -> list[list[str]]:
        rng = random.Random(seed)
        return [plan_replies("Morning, all!", None, room(), "natural", rng, cap=4) for _ in range(50)]

    assert run(7) == run(7)
    assert run(7) != run(8)


# --- The cap ----------------------------------------------------------------------------------------------


def test_plan_replies_never_gives_more_replies_than_the_cap_and_keeps_the_named_first() -> None:
    eager = [m.model_copy(update={"talkativeness": 1.0}) for m in room()]
    rng = random.Random(SEED)
    assert len(plan_replies("Hello everyone", None, eager, "natural", rng, cap=4)) == 4
    assert plan_replies("Ren?", None, eager, "natural", rng, cap=1) == ["ren"]
    assert plan_replies("Mori, Ren?", None, eager, "list", rng, cap=2) == ["mori", "ren"]
    assert len(plan_replies("Hello everyone", None, eager, "natural", rng, cap=2)) == 2
    assert plan_replies("Hello everyone", None, eager, "natural", rng, cap=0) == []


def test_pick_next_stops_at_the_cap_of_exchanges_since_the_person_spoke() -> None:
    rng = random.Random(SEED)
    for strategy in ("natural", "list"):
        after_aria = functools.partial(
            pick_next, author="aria", members=room(), strategy=strategy, rng=rng, cap=3
        )
        assert after_aria("Ren, and you?", spoken_since_person=2) == "ren"  # named, below the cap: goes next
        assert after_aria("Ren, and you?", spoken_since_person=3) is None  # at the cap even they wait
        assert after_aria("So...", spoken_since_person=5) is None


# --- List and manual --------------------------------------------------------------------------------------


def test_list_answers_in_the_rooms_order_starting_after_the_persona_who_wrote() -> None:
    rng = random.Random(SEED)
    assert plan_replies("Hi all", None, room(), "list", rng, cap=6) == ["aria", "hikari", "ren", "mori"]
    assert plan_replies("Hi all", "hikari", room(), "list", rng, cap=6) == ["ren", "mori", "aria"]
    assert plan_replies("Hi all, Mori?", "hikari", room(), "list", rng, cap=6) == ["mori", "ren", "aria"]
    assert pick_next("Nice.", "hikari", room(), "list", rng, spoken_since_person=0, cap=6) == "ren"
    assert pick_next("Nice.", "mori", room(), "list", rng, spoken_since_person=0, cap=6) == "aria"  # wraps
    assert pick_next("Nice, Aria.", "hikari", room(), "list", rng, spoken_since_person=0, cap=6) == "aria"


def test_manual_answers_only_those_named_and_never_goes_on_by_itself() -> None:
    rng = random.Random(SEED)
    assert plan_replies("Hello there", None, room(), "manual", rng, cap=4) == []
    assert plan_replies("Mori and ひかりちゃん?", None, room(), "manual", rng, cap=4) == ["mori", "hikari"]
    assert plan_replies("Mori and ひかりちゃん?", None, room(), "manual", rng, cap=1) == ["mori"]
    assert pick_next("Ren, you?", "aria", room(), "manual", rng, spoken_since_person=0, cap=4) is None


# --- Muting and the author --------------------------------------------------------------------------------


def test_a_muted_member_is_never_chosen_even_when_named() -> None:
    members = [m.model_copy(update={"muted": m.slug == "ren", "talkativeness": 1.0}) for m in room()]
    rng = random.Random(SEED)
    chosen: Counter[str] = Counter()
    for i in range(TURNS):
        text = "Ren, what do you think?" if i % 2 else "Anyone?"
        for strategy in ("natural", "list", "manual"):
            chosen.update(plan_replies(text, None, members, strategy, rng, cap=4))
            chosen.update([pick_next(text, "aria", members, strategy, rng, spoken_since_person=0, cap=4)])
    assert chosen["ren"] == 0
    assert chosen["hikari"] > 0 and chosen["mori"] > 0  # the others were chosen meanwhile


def test_a_persona_never_answers_its_own_message() -> None:
    rng = random.Random(SEED)
    eager = [m.model_copy(update={"talkativeness": 1.0}) for m in room()]
    for strategy in ("natural", "list", "manual"):
        for _ in range(TURNS // 5):
            text = "I, Aria, think Ren and ひかり should answer."  # names itself too
            assert "aria" not in plan_replies(text, "aria", eager, strategy, rng, cap=4)
            assert pick_next(text, "aria", eager, strategy, rng, spoken_since_person=0, cap=4) != "aria"
    alone = [eager[0], eager[1].model_copy(update={"muted": True})]
    assert plan_replies("Anyone?", "aria", alone, "natural", rng, cap=4) == []
    assert pick_next("Anyone?", "aria", alone, "natural", rng, spoken_since_person=0, cap=4) is None


def test_pick_next_in_natural_mode_follows_talkativeness_and_stops_when_everyone_left_is_silent() -> None:
    members = [*TRIO, Member(slug="mid", name="Mid", talkativeness=0.2)]
    rng = random.Random(SEED)
    picks = Counter(
        pick_next("How was your day?", "shy", members, "natural", rng, spoken_since_person=0, cap=9)
        for _ in range(TURNS)
    )
    # One pick a turn, weighted 0.9 : 0.2 between chatty and mid (shy wrote, silent is at 0.0).
    assert within(picks["chatty"], 0.9 / 1.1)  # expected 409.1, seed 24 gives 396
    assert picks["mid"] == TURNS - picks["chatty"] and picks["silent"] == 0 and picks["shy"] == 0
    only_silent_left = [TRIO[0], TRIO[2]]
    assert pick_next("Hm.", "chatty", only_silent_left, "natural", rng, spoken_since_person=0, cap=9) is None


# --- Auto mode ----------------------------------------------------------------------------------------------


def test_auto_mode_stops_the_moment_the_person_starts_typing() -> None:
    auto = AutoMode(pause_s=3.0)
    assert not auto.may_continue(0, cap=4)  # off until started
    auto.start()
    assert auto.on and auto.may_continue(3, cap=4)
    assert not auto.may_continue(4, cap=4)  # the cap of exchanges
    assert auto.person_typing() is True
    assert not auto.on and auto.stopped_by_typing and not auto.may_continue(0, cap=4)
    assert auto.person_typing() is False  # already off: nothing pending to drop
    auto.start()
    assert auto.may_continue(0, cap=4) and not auto.stopped_by_typing
    auto.stop()
    assert not auto.may_continue(0, cap=4) and not auto.stopped_by_typing


def test_auto_mode_keeps_its_pause_within_bounds() -> None:
    auto = AutoMode()
    assert auto.pause_s == AutoMode.DEFAULT_PAUSE_S
    auto.pause_s = 1.5
    assert auto.pause_s == 1.5
    for bad in (-1.0, 61.0, float("nan")):
        with pytest.raises(ValueError):
            auto.pause_s = bad
    assert auto.pause_s == 1.5


def test_talkativeness_strategy_and_cap_are_checked() -> None:
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValidationError):
            Member(slug="x", name="X", talkativeness=bad)
    rng = random.Random(SEED)
    with pytest.raises(ValueError, match="strategy"):
        plan_replies("Hi", None, room(), "pooled", rng, cap=2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cap"):
        pick_next("Hi", "aria", room(), "natural", rng, spoken_since_person=0, cap=-1)

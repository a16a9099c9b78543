"""What a voice reads of a reply: its words, not its Markdown, code, URLs, emoji or tool lines; names the
persona knows in their readings. Replies written the way the models write them, Japanese and English."""

from __future__ import annotations

from nexus_ark.voice.speech_text import speakable, with_readings

JAPANESE_REPLY = """## 今日の予定

田中さん、おはようございます！😊 今日は**3時**に駅で会いましょう。

- 買い物（[地図](https://maps.example.com/?q=eki)）
- [ ] 散歩 ♪

| 時間 | 場所 |
|------|------|
| 15:00 | 駅 |

```python
print("hello")
```
詳しくはhttps://example.com/a?b=1を見てね。
⚙ 使ったツール: helper:weather — 表示"""

ENGLISH_REPLY = """Sure! Here's how to set it up:

1. Run `pip install nexus-ark` in a terminal.
2. Open [the guide](https://docs.example.com/setup_(v2)) and follow *step two*.

> **Note:** it's _really_ easy 👍🏽 — see <https://example.com> or www.example.org.

~~~bash
nexus-ark chat --speak
~~~
<tool_call>{"name": "weather", "arguments": {"city": "Leeds"}}</tool_call>
⚙ Used helper:weather — show
That's all, Sarah! 5 * 3 = 15 and my_var_name stays as it is."""


def test_a_japanese_reply_is_read_as_its_words_only() -> None:
    said = speakable(JAPANESE_REPLY)
    assert said.split("\n") == [
        "今日の予定",
        "田中さん、おはようございます！ 今日は3時に駅で会いましょう。",
        "買い物（地図）",
        "散歩",
        "時間、場所",
        "15時、駅",
        "詳しくはを見てね。",
    ]


def test_an_english_reply_is_read_as_its_words_only() -> None:
    said = speakable(ENGLISH_REPLY)
    assert said.split("\n") == [
        "Sure! Here's how to set it up:",
        "Run in a terminal.",
        "Open the guide and follow step two.",
        "Note: it's really easy — see or.",
        "That's all, Sarah! 5 * 3 = 15 and my_var_name stays as it is.",
    ]


def test_nothing_is_left_to_say_for_only_code_a_link_an_emoji_or_a_tool_line() -> None:
    for reply in (
        "```\nls -la\n```",
        "🎉🎉✨",
        "https://example.com/x",
        "⚙ Used helper:weather — show",
        "`x`",
        "",
    ):
        assert speakable(reply) == "", reply


def test_an_unclosed_code_block_is_left_out_to_the_end_as_a_cut_off_reply_has_it() -> None:
    assert speakable("Here it is:\n```python\ndef f():\n    return 1") == "Here it is:"


def test_one_sentence_at_a_time_as_the_speech_queue_feeds_them() -> None:
    pieces = [
        "### まとめ\n",
        "- **大事**なのは、[ここ](https://x.jp)です。",
        "| a | b |\n",
        "|---|---|\n",
        "❤️\n",
    ]
    assert [speakable(p) for p in pieces] == ["まとめ", "大事なのは、ここです。", "a, b", "", ""]


def test_a_url_leaves_the_punctuation_that_ends_the_sentence() -> None:
    assert speakable("Look at https://example.com/page.") == "Look at."
    assert speakable("(see https://en.wikipedia.org/wiki/Tea_(drink)) then stop") == "(see) then stop"


def test_a_clock_time_in_japanese_is_read_as_hours_and_minutes() -> None:
    assert speakable("9:05と15:00と21:30に会おう。") == "9時5分と15時と21時30分に会おう。"
    assert speakable("Meet me at 15:30.") == "Meet me at 15:30."  # English voices read it well


def test_names_are_read_as_their_readings_in_japanese_and_english() -> None:
    readings = {"田中": "たなか", "田中太郎": "たなかたろう", "Siobhan": "Shivawn", "Ann": "Anne"}
    said = speakable("田中太郎さんと田中さんが来ました。**Siobhan** and ann met Anna.", readings)
    assert said == "たなかたろうさんとたなかさんが来ました。Shivawn and Anne met Anna."


def test_a_reading_is_never_read_again_as_another_name() -> None:
    # 明 reads あきら; あきら is itself a name with another reading: one pass, so no chain.
    assert with_readings("明と会う", {"明": "あきら", "あきら": "アキラ"}) == "あきらと会う"


def test_empty_names_or_readings_change_nothing() -> None:
    assert speakable("田中さん", {"": "x", "田中": " "}) == "田中さん"

"""A sentence stored in a database keeps its words: made again from what stored() wrote, it reads the same in
English and carries the template and values a window translates."""

from __future__ import annotations

import json

from nexus_ark.notices import Joined, Notice, from_stored, joined, notice, stored


def test_a_stored_notice_comes_back_the_same_sentence_with_its_template_and_values() -> None:
    inner = notice("{name} is not a readable PDF: {problem}", name="手紙.pdf", problem="EOF marker not found")
    both = joined([inner, notice("Nothing was imported ({count} files).", count=3)], "\n")
    back = from_stored(stored(both))
    assert back == both and isinstance(back, Joined)
    first, second = back.parts
    assert isinstance(first, Notice) and first.template == inner.template
    assert first.values == {"name": "手紙.pdf", "problem": "EOF marker not found"}
    assert isinstance(second, Notice) and second.values == {"count": 3}  # a number stays a number


def test_a_plain_string_is_not_stored_and_a_damaged_record_reads_as_its_text() -> None:
    assert stored("a library's own words") is None
    assert from_stored('{"template": "cut short') == '{"template": "cut short'
    assert from_stored(json.dumps({"something": "else"})) == '{"something": "else"}'

"""What a keyword query's terms weigh, and the forms a stemmer cannot find.

Recall weighs every term by how rare it is in the archive (`idf`) instead of leaving frequent ones out:
the name of a cat the person talks about every day is in a quarter of the items, and still says what a
question is about. FTS5's own bm25 cannot be used for that weight: it floors the IDF of a term found in
more than half of the rows at 1e-6, so such a term counts for nothing (docs/benchmarks.md).

The porter tokenizer of the keyword index reduces "throwing" and "throws" to "throw" but not "threw" or
"thrown": `forms` adds the irregular forms of common English verbs and nouns to a query word.
"""

from __future__ import annotations

import math
import re

# Irregular verbs: base, then past and past participle where they differ from the base (and from each
# other); what porter already joins (-s, -ing, -ed) need not be listed. Left out where the irregular form
# is mostly another word: bite/bit ("a bit"), lie/lay, rise/rose, wind/wound, grind/ground, bind/bound.
_VERBS = """
arise arose arisen; awake awoke awoken; bear bore born borne; beat beaten; become became; begin began
begun; bend bent; bleed bled; blow blew blown; break broke broken; breed bred; bring brought; build
built; burn burnt; buy bought; catch caught; choose chose chosen; cling clung; come came; creep crept;
deal dealt; dig dug; draw drew drawn; dream dreamt; drink drank drunk; drive drove driven; eat ate eaten;
fall fell fallen; feed fed; feel felt; fight fought; find found; flee fled; fly flew flown; forbid
forbade forbidden; forget forgot forgotten; forgive forgave forgiven; freeze froze frozen; get got
gotten; give gave given; go went gone goes; grow grew grown; hang hung; hear heard; hide hid hidden; hold
held; keep kept; kneel knelt; know knew known; lay laid; lead led; lean leant; leap leapt; learn learnt;
leave left; lend lent; light lit; lose lost; make made; mean meant; meet met; pay paid; ride rode ridden;
ring rang rung; run ran; say said; see saw seen; seek sought; sell sold; send sent; sew sewn; shake shook
shaken; shine shone; shoot shot; show shown; shrink shrank shrunk; sing sang sung; sink sank sunk; sit
sat; sleep slept; slide slid; speak spoke spoken; speed sped; spend spent; spin spun; spit spat; spring
sprang sprung; stand stood; steal stole stolen; stick stuck; sting stung; stink stank stunk; strike
struck; swear swore sworn; sweep swept; swim swam swum; swing swung; take took taken; teach taught; tear
tore torn; tell told; think thought; throw threw thrown; understand understood; wake woke woken; wear
wore worn; weave wove woven; weep wept; win won; write wrote written
"""
# Irregular plurals (porter joins "knives" with "knive", not with "knife").
_NOUNS = """
child children; man men; woman women; person people; mouse mice; foot feet; tooth teeth; goose geese;
knife knives; wife wives; life lives; leaf leaves; wolf wolves; half halves; shelf shelves; thief thieves
"""


def _ing(verb: str) -> str:
    """The -ing form, to recognise a query word ("throwing", "running", "making"): porter finds the rest."""
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith("ee"):
        return verb[:-1] + "ing"
    if re.fullmatch(r"(?:.*[^aeiou]|qu)?[aeiou][^aeiouwxy]", verb) and len(verb) <= 6:
        # One short vowel before one last consonant doubles it (run, sit, begin, forget).
        return verb + verb[-1] + "ing"
    return verb + "ing"


def _s(verb: str) -> str:
    if re.search(r"(?:[sxzo]|ch|sh)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def _groups() -> dict[str, tuple[str, ...]]:
    """Every form of a listed word (the regular ones too, to recognise them) -> the forms to search."""
    groups: dict[str, tuple[str, ...]] = {}
    for table, verbs in ((_VERBS, True), (_NOUNS, False)):
        for entry in table.split(";"):
            words = tuple(dict.fromkeys(entry.split()))
            base = words[0]
            for word in (*words, _ing(base), _s(base), base + "ed") if verbs else words:
                groups.setdefault(word, words)
    return groups


_FORMS = _groups()


def forms(word: str) -> tuple[str, ...]:
    """The forms to search for a query word (lowercase in, lowercase out): the word itself, or for an
    irregular one its base and irregular forms ("throwing" -> throw, threw, thrown; porter finds
    "throwing" from "throw", and one form searched twice would count twice)."""
    return _FORMS.get(word, (word,))


def idf(matches: int, total: int) -> float:
    """How much finding a term in an item says: Lucene's BM25 IDF, ln(1 + (N - n + 0.5) / (n + 0.5)).
    Always above zero, so a term found in most items still counts a little (about 0.7 at one half,
    2.4 at one tenth, 4.6 at one in a hundred)."""
    return math.log(1.0 + (max(total, matches) - matches + 0.5) / (matches + 0.5))


def fts5_idf(matches: int, rows: int) -> float:
    """The IDF FTS5's bm25() gave a term (fts5_aux.c): floored at 1e-6 past half of the rows."""
    value = math.log((rows - matches + 0.5) / (matches + 0.5))
    return value if value > 0.0 else 1e-6

"""Text fitted to a token budget, never cut mid-sentence: a single text is cut at a sentence boundary
(nexus_ark.sentences), a ranked list loses its lowest-ranked items first. The prompt's sections, the
compression's summaries and the open questions' quotes are all cut here."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from nexus_ark.sentences import sentence_ends

# A model's tokenizer (or an estimate): how many tokens a text is.
Counter = Callable[[str], int]


def cut_text(text: str, budget: int, count: Counter) -> str:
    """The longest beginning of `text` that ends at a sentence boundary and fits `budget` tokens ("" if
    not even the first sentence fits). Paragraph breaks are kept."""
    text = text.strip()
    if count(text) <= budget:
        return text
    # Boundaries: offsets just after each sentence, so the kept prefix keeps the original spacing.
    ends = [*sentence_ends(text), len(text)]
    ends = sorted({e for e in ends if text[:e].strip()})
    lo, hi, best = 0, len(ends) - 1, ""
    while lo <= hi:  # binary search: counting is a tokenizer call
        mid = (lo + hi) // 2
        candidate = text[: ends[mid]].rstrip()
        if count(candidate) <= budget:
            best, lo = candidate, mid + 1
        else:
            hi = mid - 1
    return best


def fit_items(items: Sequence[str], budget: int, count: Counter) -> tuple[list[str], bool]:
    """Items in rank order while they fit; one that does not fit whole is cut at a sentence boundary to
    what is left, and lower-ranked ones still get a chance at the space after it."""
    kept: list[str] = []
    used = 0
    cut = False
    for item in items:
        cost = count(item) + 1  # the line break and bullet
        if used + cost <= budget:
            kept.append(item)
            used += cost
            continue
        cut = True
        piece = cut_text(item, budget - used - 1, count) if budget - used > 1 else ""
        if piece:
            kept.append(piece)
            used += count(piece) + 1
    return kept, cut

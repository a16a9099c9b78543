"""What a character card's soul says to the model beyond the card's own text (personas/cards/plan.py)."""

from __future__ import annotations

# The example messages as the model reads them. Under a Markdown heading, with SillyTavern's <START>
# markers, a small model took them for a document to go on with and began replies with "## Example
# messages" (issue 23, defect 20): in the prompt they are a note that says what they are instead.
EXAMPLES_NOTE = {
    "en": "(How {name} talks, shown by example. These lines are not part of this conversation: never "
    "repeat them or this note.)",
    "ja": "（{name}の話し方の例です。この会話の一部ではありません。この例やこの注記を繰り返さないこと。）",
}

"""A greeting at the start of a message is not how the person feels: it is left out before the emotion is
read (issue 23, defect 19).

"Hi Aria! I'm exhausted after work." read as happy 0.30 over tired 0.22: GoEmotions files greetings with
approval, admiration and gratitude, so "Hi Aria!" pulled the whole message towards happy, the plot showed
+0.8 and devotion's narrative said the person seemed happy. The detector reads the rest of the message
instead. A greeting alone ("Hi Aria!", 「おはよう！」) is read as it is: then it is all there is.
"""

from __future__ import annotations

import re

# English greetings, any case; an optional vocative ("there", "again", "guys") after them.
_EN = (
    r"(?i:hi|hello|hey|heya|hiya|howdy|yo|greetings|good\s+(?:morning|afternoon|evening|day|night)|"
    r"morning|evening|dear)\b(?i:\s+(?:there|again|you|guys|all|everyone|friend))?"
)
# Up to three capitalized words after it: a name ("Aria", "Dr. Rose"); "I", "I'm"… are the person speaking.
_EN_NAME = r"(?:[\s,]+(?!I\b|I'|I’)[A-Z][\w'’.-]*){0,3}"
_JA = (
    r"(?:こんにちは|こんにちわ|こんばんは|こんばんわ|おはよう(?:ございます)?|おはよー|やあ|ハロー|"
    r"ただいま|もしもし|ひさしぶり|久しぶり|ねえ|ねぇ)"
)
# A short name after it (ひかり, アリアちゃん): not a clause, so not ending like a predicate (疲れた, です).
_JA_NAME = r"(?:[\s、,]*[^\s、。！？!?,.~〜♪…]{1,8}(?<![たですねよ]))?"
# The greeting ends at punctuation, a comma or a line break.
_END = r"\s*(?:[!！.。,、~〜♪☆★…]+|\n)\s*"
_LEADING = re.compile(rf"^\s*(?:{_EN}{_EN_NAME}|{_JA}{_JA_NAME}){_END}")


def without_greeting(text: str) -> str:
    """`text` without the greetings it opens with, when something is left after them; else `text`."""
    rest = text
    while (found := _LEADING.match(rest)) is not None and found.end() < len(rest):
        rest = rest[found.end() :]
    return rest if rest.strip() else text

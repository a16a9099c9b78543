"""A persona's words for the model in a room (nexus_ark/rooms, agent/room_turn.py): where it is, the notes
members pass each other, and the note tool."""

from __future__ import annotations

# Put before the lines the persona answers (not for a small model: it repeats such a note back).
# Others' lines reach the model as "Name: text"; the person's carry the person's name where it is known
# (else none), so a member neither takes the person for another member nor answers with its own name.
ROOM_NOTE = {
    "en": (
        "(You are in a group conversation with {person} and {others}. Each line begins with the name of "
        "whoever said it. Answer {person}'s newest words first, as yourself only, in a few sentences, and "
        "do not write anyone else's lines.)"
    ),
    "ja": (
        "(あなたは、{person}と{others}とのグループの会話の中にいます。それぞれの発言は話した人の名前で始まります。"
        "まず{person}の最新の言葉に、自分としてだけ、短く答えてください。ほかの人の発言は書かないでください。)"
    ),
}
# The person in ROOM_NOTE when their name is not known (their lines then carry no name).
ROOM_PERSON = {"en": "the person", "ja": "話し相手"}

# A note another member passed this persona, as it reads it on its next turn (in the sender's words).
NOTE_LINE = {
    "en": "(A note from {name}, for you only: {text})",
    "ja": "({name}から、あなただけへのメモ: {text})",
}

PASS_NOTE = {
    "name": "pass_note",
    "description": (
        "Pass a short private note to another member of this room (not the person): they read it on their "
        "next turn, in your words. The others do not see it."
    ),
    "to": "the member's name",
    "text": "the note, one or two sentences",
}
PASS_NOTE_RESULTS = {
    "passed": "The note for {name} is passed; they read it on their next turn.",
    "unknown": "error: {name} is not in this room; its members are {names}.",
    "empty": "error: the note is empty.",
}

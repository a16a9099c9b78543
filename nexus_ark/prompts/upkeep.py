"""After-turn work on the internal model: the running summary of a long conversation (agent/compression.py)
and which open questions a finished conversation answered (agent/open_questions.py)."""

from __future__ import annotations

# The person, as a transcript shown to the internal model names them (the persona goes by its name).
USER_LABEL = "User"

SUMMARY_INSTRUCTION = (
    "You keep the running summary of a conversation between the user and {name}, so that {name} "
    "remembers it after its words leave the context. Keep names, facts, dates, numbers, decisions, "
    "promises, how the user felt, and topics left open; drop greetings and small talk. "
    "Write plain prose in {language}, at most {words} words. Write only the summary."
)
SUMMARY_REQUEST = (
    "Summary so far:\n{previous}\n\n"
    "The conversation that follows it:\n{transcript}\n\n"
    "Write the updated summary of all of it."
)
SUMMARY_NONE_YET = "(none yet)"

QUESTIONS_SYSTEM = (
    "You help {name} keep track of questions it wanted answered. Read the "
    "conversation and decide, for each question, whether the conversation answered it. Mark a "
    "question answered only when a message gives the answer, and name that message's number as "
    "evidence_message_id. Give one verdict per question."
)
QUESTIONS_REQUEST = "Open questions:\n{listed}\n\nThe conversation:\n{transcript}"
QUESTION_LINE = "- question {id}: {question}"
QUESTIONS_TRANSCRIPT_LINE = "[message {id}] {speaker}: {text}"

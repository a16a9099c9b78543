"""The drives in words, in the persona's language: the narrative of why the dominant drive (the one furthest
past its own threshold) is strong, the dynamic drive line of the dashboard, the short "how you feel now" for
the chat prompt and the full internal state for autonomous turns. Built only from the drives' recorded
inputs, so every sentence can be traced back to a number in drive_history. What the model reads is
worded in nexus_ark/prompts/mind.py; the dashboard's lines (drive_line) are the person's and stay here."""

from __future__ import annotations

from nexus_ark.mind.drive_report import DRIVES, FEELING_LEVEL, DriveName, DriveReport
from nexus_ark.prompts.mind import (
    DRIVE_NAMES,
    DRIVE_SENTENCES,
    DURATIONS,
    EMOTION_NAMES_JA,
    INTERNAL_STATE,
)


def _lang(language: str) -> str:
    return "ja" if language == "ja" else "en"


def duration(minutes: float, language: str) -> str:
    """A span a person reads at a glance: minutes, hours or days."""
    minutes = max(0, round(minutes))
    units = DURATIONS[_lang(language)]
    if minutes < 60:
        return units["minutes"].format(n=minutes, s="s" if minutes != 1 else "")
    if minutes < 48 * 60:
        hours = round(minutes / 60)
        return units["hours"].format(n=hours, s="s" if hours != 1 else "")
    return units["days"].format(n=round(minutes / 1440))


def emotion_name(label: str | None, language: str) -> str:
    if not label:
        return "—"
    return EMOTION_NAMES_JA.get(label, label) if _lang(language) == "ja" else label


def drive_line(report: DriveReport, name: DriveName, language: str) -> str:
    """The dashboard's dynamic line for one drive: what its level comes from, in a few words."""
    ja = _lang(language) == "ja"
    info = report.drives[name].inputs
    if name == "boredom":
        if info.get("idle_minutes") is None:
            return "まだ話したことがない" if ja else "We have not talked yet"
        span = duration(info["idle_minutes"], language)
        return f"最後の会話から{span}" if ja else f"{span} since we last talked"
    if name == "curiosity":
        question = info.get("top_question")
        if not question:
            return "気になっている問いはない" if ja else "No open questions"
        return f"最優先の問い: {question}" if ja else f"Top question: {question}"
    if name == "goal_achievement":
        goal = info.get("goal")
        if not goal:
            return "進行中の短期目標はない" if ja else "No active short-term goal"
        return f"最優先目標: {goal}" if ja else f"Top goal: {goal}"
    label = info.get("latest_emotion")
    if not label:
        return "ユーザーの感情はまだ記録されていない" if ja else "No emotion recorded yet"
    feeling = emotion_name(label, language)
    return f"直近のユーザー感情: {feeling}" if ja else f"Latest user emotion: {feeling}"


def _sentence(report: DriveReport, name: DriveName, language: str) -> str:
    """Why this drive is where it is, as the persona would say it of itself."""
    words = DRIVE_SENTENCES[_lang(language)]
    info = report.drives[name].inputs
    if name == "boredom":
        if info.get("idle_minutes") is None:
            return words["boredom_never"]
        return words["boredom"].format(span=duration(info["idle_minutes"], language))
    if name == "curiosity":
        question = info.get("top_question")
        count = info.get("open_questions", 0)
        if not question:
            return words["curiosity_none"]
        return words["curiosity"].format(count=count, s="s" if count != 1 else "", question=question)
    if name == "goal_achievement":
        goal = info.get("goal")
        if not goal:
            return words["goal_none"]
        days = info.get("days_without_progress") or 0
        if days < 1:
            return words["goal_fresh"].format(goal=goal)
        return words["goal_stalled"].format(goal=goal, days=days)
    label = info.get("latest_emotion")
    if not label:
        return words["devotion_unknown"]
    # Devotion rises when the person seems down: with a low mood among the recent emotions, that is what
    # it speaks of, even when a later message was glad (or a greeting read as glad).
    if info.get("negative_recent", 0):
        low = info.get("latest_negative_emotion")
        if not low:  # recorded before the low mood was kept apart (drive_history of older versions)
            return words["devotion_low_unnamed"]
        feeling, quoted = emotion_name(low, language), _quote(info.get("latest_negative_snippet"), language)
        return words["devotion_low"].format(feeling=feeling, quoted=quoted)
    quoted = _quote(info.get("latest_snippet"), language)
    if label == "neutral":  # no feeling to name ("you seemed to feel neutral"): what was said, then
        return words["devotion_neutral"].format(quoted=quoted)
    return words["devotion"].format(feeling=emotion_name(label, language), quoted=quoted)


QUOTE_CHARS = 60  # the longest quote of the person's words in a drive's reason


def _quote(snippet: str | None, language: str) -> str:
    if not snippet or not snippet.strip():
        return ""
    return DRIVE_SENTENCES[_lang(language)]["quoted"].format(snippet=whole_words(snippet, QUOTE_CHARS))


def whole_words(text: str, limit: int) -> str:
    """At most `limit` characters of `text` on one line, cut after a whole word (Japanese, written without
    spaces: after a punctuation mark where one is near, else at a character), a cut marked with "…"."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    head = flat[: limit + 1]  # a word that ends exactly at the limit is whole
    space = head.rfind(" ")
    if space >= limit // 2:
        return head[:space].rstrip(" ,;:-–—") + "…"
    mark = max(head.rfind(c) for c in "、。，．！？」』）")
    if mark >= limit // 2:
        return head[: mark + 1].rstrip("、，") + "…"
    return flat[:limit].rstrip() + "…"


def narrative(report: DriveReport, language: str) -> str:
    """The dominant drive and why, in one or two sentences (empty when no drive stirs at all)."""
    if report.dominant is None:
        return DRIVE_SENTENCES[_lang(language)]["quiet"]
    return _sentence(report, report.dominant, language)


def feelings(report: DriveReport, language: str) -> str:
    """The short form for the chat prompt: each drive at or above FEELING_LEVEL, strongest first; empty
    when none is (the prompt then leaves the section out)."""
    names = DRIVE_NAMES[_lang(language)]
    strong = sorted(
        (n for n in DRIVES if report.drives[n].level >= FEELING_LEVEL),
        key=lambda n: -report.drives[n].level,
    )
    return "\n".join(
        f"- {names[n]} {report.drives[n].level:.2f}: {_sentence(report, n, language)}" for n in strong
    )


def internal_state(report: DriveReport, language: str) -> str:
    """The full internal state for an autonomous turn: every drive with its threshold and what it comes
    from, the dominant one (furthest past its own threshold, drives.compute) and the narrative."""
    words = INTERNAL_STATE[_lang(language)]
    names = DRIVE_NAMES[_lang(language)]
    lines = [words["title"]]
    for n in DRIVES:
        d = report.drives[n]
        mark = words["over"] if d.over else ""
        lines.append(
            f"- {names[n]} {d.level:.2f} / {d.threshold:.2f}{mark}: {_sentence(report, n, language)}"
        )
    if report.dominant is not None:
        lines.append(words["strongest"].format(drive=names[report.dominant]))
    lines.append(words["why"].format(narrative=report.narrative))
    return "\n".join(lines)

"""The drives in words, in the persona's language: the narrative of why the dominant drive (the one furthest
past its own threshold) is strong, the dynamic drive line of the dashboard, the short "how you feel now" for
the chat prompt and the full internal state for autonomous turns. Built only from the drives' recorded
inputs, so every sentence can be traced back to a number in drive_history."""

from __future__ import annotations

from nexus_ark.mind.drive_report import DRIVES, FEELING_LEVEL, DriveName, DriveReport

DRIVE_NAMES: dict[str, dict[DriveName, str]] = {
    "en": {
        "boredom": "boredom",
        "curiosity": "curiosity",
        "goal_achievement": "goal drive",
        "devotion": "devotion",
    },
    "ja": {
        "boredom": "退屈",
        "curiosity": "好奇心",
        "goal_achievement": "目標達成欲",
        "devotion": "奉仕欲",
    },
}

EMOTION_NAMES_JA = {
    "joy": "喜び",
    "happy": "幸せ",
    "surprise": "驚き",
    "neutral": "平静",
    "sadness": "悲しみ",
    "anger": "怒り",
    "fear": "恐れ",
    "anxious": "不安",
    "tired": "疲れ",
    "busy": "忙しさ",
    "stressed": "ストレス",
    "disgust": "嫌悪",
}


def _lang(language: str) -> str:
    return "ja" if language == "ja" else "en"


def duration(minutes: float, language: str) -> str:
    """A span a person reads at a glance: minutes, hours or days."""
    minutes = max(0, round(minutes))
    if _lang(language) == "ja":
        if minutes < 60:
            return f"{minutes}分"
        if minutes < 48 * 60:
            return f"{round(minutes / 60)}時間"
        return f"{round(minutes / 1440)}日"
    if minutes < 60:
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    if minutes < 48 * 60:
        hours = round(minutes / 60)
        return f"{hours} hour{'s' if hours != 1 else ''}"
    return f"{round(minutes / 1440)} days"


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
    ja = _lang(language) == "ja"
    info = report.drives[name].inputs
    if name == "boredom":
        if info.get("idle_minutes") is None:
            return "まだ一度も話していない。" if ja else "We have not talked yet."
        span = duration(info["idle_minutes"], language)
        if ja:
            return f"最後に話してから{span}が経った。少し退屈で、話したい気持ちがある。"
        return f"It has been {span} since we last talked; I feel restless and would like to talk."
    if name == "curiosity":
        question = info.get("top_question")
        count = info.get("open_questions", 0)
        if not question:
            return "今は特に気になっていることはない。" if ja else "Nothing is puzzling me right now."
        if ja:
            return f"気になっていることが{count}つある。いちばん知りたいのは「{question}」。"
        return (
            f"I have {count} open question{'s' if count != 1 else ''}; most of all I want to know: {question}"
        )
    if name == "goal_achievement":
        goal = info.get("goal")
        if not goal:
            return "今は追いかけている目標がない。" if ja else "I am not pursuing a goal right now."
        days = info.get("days_without_progress") or 0
        if days < 1:
            return f"目標「{goal}」に取りかかりたい。" if ja else f'I want to work on my goal "{goal}".'
        if ja:
            return f"目標「{goal}」が{days:g}日進んでいない。前に進めたい。"
        return f'My goal "{goal}" has not moved for {days:g} days; I want to get on with it.'
    label = info.get("latest_emotion")
    if not label:
        return "あなたの気持ちはまだわからない。" if ja else "I do not know how you feel yet."
    # Devotion rises when the person seems down: with a low mood among the recent emotions, that is what
    # it speaks of, even when a later message was glad (or a greeting read as glad).
    if info.get("negative_recent", 0):
        low = info.get("latest_negative_emotion")
        if not low:  # recorded before the low mood was kept apart (drive_history of older versions)
            return (
                "最近のあなたは元気がないようだ。そばで支えたい。"
                if ja
                else ("You have seemed low lately; I want to be there for you.")
            )
        feeling, quoted = emotion_name(low, language), _quote(info.get("latest_negative_snippet"), ja)
        if ja:
            return f"最近のあなたは{feeling}を感じていたようだ{quoted}。そばで支えたい。"
        return f"You seemed to feel {feeling} lately{quoted}; I want to be there for you."
    feeling, quoted = emotion_name(label, language), _quote(info.get("latest_snippet"), ja)
    if ja:
        return f"最近のあなたは{feeling}を感じていたようだ{quoted}。その気持ちに寄り添いたい。"
    return f"You seemed to feel {feeling} lately{quoted}; I want to share in it."


def _quote(snippet: str | None, ja: bool) -> str:
    if not snippet:
        return ""
    return f"（「{snippet[:60]}」）" if ja else f' ("{snippet[:60]}")'


def narrative(report: DriveReport, language: str) -> str:
    """The dominant drive and why, in one or two sentences (empty when no drive stirs at all)."""
    if report.dominant is None:
        return "心は静かだ。" if _lang(language) == "ja" else "My mind is quiet."
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
    ja = _lang(language) == "ja"
    names = DRIVE_NAMES[_lang(language)]
    lines = ["内部状態:" if ja else "Internal state:"]
    for n in DRIVES:
        d = report.drives[n]
        mark = (" ← 閾値超え" if ja else " ← over threshold") if d.over else ""
        lines.append(
            f"- {names[n]} {d.level:.2f} / {d.threshold:.2f}{mark}: {_sentence(report, n, language)}"
        )
    if report.dominant is not None:
        dominant = names[report.dominant]
        lines.append(
            f"閾値に対して最も強い動機: {dominant}"
            if ja
            else f"Strongest drive against its threshold: {dominant}"
        )
    lines.append(("理由: " if ja else "Why: ") + report.narrative)
    return "\n".join(lines)

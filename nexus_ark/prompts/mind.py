"""The drives and emotions in words, as the persona says them of itself (mind/narrative.py builds the
chat prompt's "how you feel now" and an autonomous turn's internal state from them), and the internal
model's second opinion on an emotion (mind/emotion_confirm.py)."""

from __future__ import annotations

DRIVE_NAMES = {
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

# Emotion labels as a Japanese sentence names them (English uses the label itself).
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
    "anticipation": "期待",
    "affection": "愛情・感謝",
}

# A span a person reads at a glance; {s} is the English plural ending ("" for one).
DURATIONS = {
    "en": {"minutes": "{n} minute{s}", "hours": "{n} hour{s}", "days": "{n} days"},
    "ja": {"minutes": "{n}分", "hours": "{n}時間", "days": "{n}日"},
}

# Why each drive is where it is, as the persona would say it of itself.
DRIVE_SENTENCES = {
    "en": {
        "boredom_never": "We have not talked yet.",
        "boredom": "It has been {span} since we last talked; I feel restless and would like to talk.",
        "curiosity_none": "Nothing is puzzling me right now.",
        "curiosity": "I have {count} open question{s}; most of all I want to know: {question}",
        "goal_none": "I am not pursuing a goal right now.",
        "goal_fresh": 'I want to work on my goal "{goal}".',
        "goal_stalled": 'My goal "{goal}" has not moved for {days:g} days; I want to get on with it.',
        "devotion_unknown": "I do not know how you feel yet.",
        # Recorded before the low mood was kept apart (drive_history of older versions): no feeling named.
        "devotion_low_unnamed": "You have seemed low lately; I want to be there for you.",
        "devotion_low": "You seemed to feel {feeling} lately{quoted}; I want to be there for you.",
        "devotion": "You seemed to feel {feeling} lately{quoted}; I want to share in it.",
        "devotion_neutral": "I keep thinking of what you said lately{quoted}; I would like to hear more.",
        "quoted": ' ("{snippet}")',
        "quiet": "My mind is quiet.",
    },
    "ja": {
        "boredom_never": "まだ一度も話していない。",
        "boredom": "最後に話してから{span}が経った。少し退屈で、話したい気持ちがある。",
        "curiosity_none": "今は特に気になっていることはない。",
        "curiosity": "気になっていることが{count}つある。いちばん知りたいのは「{question}」。",
        "goal_none": "今は追いかけている目標がない。",
        "goal_fresh": "目標「{goal}」に取りかかりたい。",
        "goal_stalled": "目標「{goal}」が{days:g}日進んでいない。前に進めたい。",
        "devotion_unknown": "あなたの気持ちはまだわからない。",
        "devotion_low_unnamed": "最近のあなたは元気がないようだ。そばで支えたい。",
        "devotion_low": "最近のあなたは{feeling}を感じていたようだ{quoted}。そばで支えたい。",
        "devotion": "最近のあなたは{feeling}を感じていたようだ{quoted}。その気持ちに寄り添いたい。",
        "devotion_neutral": "最近あなたが話してくれたこと{quoted}を、もっと聞きたい。",
        "quoted": "（「{snippet}」）",
        "quiet": "心は静かだ。",
    },
}

# The frame of an autonomous turn's full internal state (each drive's line is built in mind/narrative.py).
INTERNAL_STATE = {
    "en": {
        "title": "Internal state:",
        "over": " ← over threshold",
        "strongest": "Strongest drive against its threshold: {drive}",
        "why": "Why: {narrative}",
    },
    "ja": {
        "title": "内部状態:",
        "over": " ← 閾値超え",
        "strongest": "閾値に対して最も強い動機: {drive}",
        "why": "理由: {narrative}",
    },
}

# -- the internal model's second opinion on the emotion head's reading (mind/emotion_confirm.py) -------
LABEL_MEANINGS = {
    "joy": "elated, delighted, amused",
    "happy": "glad, content, proud, relieved, approving",
    "surprise": "surprised, amazed, confused, curious",
    "neutral": "no clear feeling (facts, questions, small talk)",
    "sadness": "sad, grieving, lonely, disappointed, regretful",
    "anger": "angry, annoyed, disapproving",
    "fear": "afraid, scared, in danger",
    "anxious": "worried, nervous, uneasy about what may come",
    "tired": "exhausted, sleepy, worn out",
    "busy": "pressed for time, a lot to do",
    "stressed": "under pressure, overwhelmed",
    "disgust": "disgusted, grossed out, repelled",
    "anticipation": "looking forward to something, excited about what is coming, hopeful, can't wait",
    "affection": "love, caring or thanks towards someone",
}
CONFIRM_SYSTEM = (
    "You read the emotion a chat user's message expresses (it may be English or Japanese).\n"
    "Pick exactly one label:\n{labels}\n"
    "A fast classifier's guess is given; keep it if it fits, correct it if it does not."
)
CONFIRM_REQUEST = "Message:\n{text}\n\nClassifier's guess: {guess}"
# The answer's fields as its JSON schema describes them to the model.
CONFIRM_FIELDS = {
    "label": "the main emotion the user's message expresses",
    "confidence": "how sure you are, 0 to 1",
}

# What each field of a dream diary entry asks for (mind/schemas.py DreamInsight): the model reads these in
# the JSON schema it answers to.
DREAM_INSIGHT_FIELDS = {
    "trigger_topic": "what the reflection was about",
    "insight": "what the persona understood",
    "strategy": "how to act on it in the next conversations",
    "log_entry": "a short dream-like diary entry",
}

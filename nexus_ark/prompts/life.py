"""What moves the persona to write first, as the model is told (runtime/life.py), and the messages a model
too small to write one sends instead (runtime/first_words.py)."""

from __future__ import annotations

# Why the persona writes, by the dominant drive: the {why} of WRITE_FIRST.
DRIVE_PROMPTS = {
    "en": {
        "boredom": "It has been quiet for a while and you feel like talking.",
        "curiosity": "Something from your conversations still makes you curious.",
        "goal_achievement": "One of your goals has not moved for a while.",
        "devotion": "You have been thinking about the person and how they are.",
    },
    "ja": {
        "boredom": "しばらく静かで、話したい気分になっている。",
        "curiosity": "これまでの会話の中で、まだ気になっていることがある。",
        "goal_achievement": "目標のひとつがしばらく進んでいない。",
        "devotion": "相手のことや、元気にしているかを考えていた。",
    },
}
WRITE_FIRST = {
    "en": (
        "(Nobody has written: you decide to write to the person first. {why} Write one short, natural "
        "message to them in your own voice. Do not mention drives, levels or that you were told to write.)"
    ),
    "ja": (
        "（相手からのメッセージはない。あなたは自分から話しかけることにした。{why} "
        "自分らしい短く自然なメッセージを一通書くこと。動機や数値、指示されたことには触れないこと。）"
    ),
}
# The {why} of WRITE_FIRST for a planned event (the persona's emit_event) that is due.
PLANNED = {
    "en": "Earlier you planned this for now: {what}.",
    "ja": "あなたは以前、こうすると決めていた: {what}",
}

# The message itself, from a template, for a model too small to write it: by the reason it writes, with
# details quoted from memory (the *_plain lines where memory has none).
FIRST_WORDS = {
    "en": {
        "boredom": "It's been a while — how have you been?",
        "devotion": "I keep thinking about what you said: “{worry}” How are you feeling now?",
        "devotion_plain": "I was thinking about you. How are you feeling today?",
        "curiosity": "Something is still on my mind: {question}",
        "curiosity_plain": "I've been curious — what have you been up to lately?",
        "goal_achievement": "I've been thinking about something I want to do: {goal}",
        "event": "I'd planned this for now: {what}",
        "routine": "It's time for this: {task}",
    },
    "ja": {
        "boredom": "しばらくぶりだね。元気にしてた？",
        "devotion": "「{worry}」って言っていたのが気になっていて。今はどんな気持ち？",
        "devotion_plain": "あなたのことを考えていたよ。今日はどんな気分？",
        "curiosity": "まだ気になっていることがあるの。{question}",
        "curiosity_plain": "最近どうしているのか気になっていたよ。何をしていたの？",
        "goal_achievement": "やりたいと思っていることを考えていたの。「{goal}」",
        "event": "今しようと決めていたことがあるの。{what}",
        "routine": "この時間のお約束です。{task}",
    },
}

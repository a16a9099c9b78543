"""The emotion labels Nexus Ark detects in the user's messages and the value each plots as.

Seed 001 names the labels (positive joy, happy, surprise; neutral; negative sadness, anger, fear, anxious,
tired, busy, stressed; the issue adds disgust) and fixes three values: joy 1.0, neutral 0.0, sadness -0.6,
anger -1.0. The rest are ours, chosen so the dashboard's line falls with how heavy the feeling is:
happy 0.8 (glad, calmer than joy), surprise 0.3 (mostly pleasant in chat), busy -0.2 (pressed for time,
not unhappy), tired -0.4, anxious -0.5, stressed -0.6 (as heavy as sadness), disgust -0.7, fear -0.8.
Issue 37 adds the two feelings people write most that had no place: anticipation 0.6 (looking forward:
楽しみ, わくわく, "can't wait"; pleasant but about what has not happened yet, so below happy) and affection
0.9 (love, caring, thanks towards someone: warm, between happy and joy). Both are Ekman's joy.
"""

from __future__ import annotations

from typing import Literal, get_args

from nexus_ark.notices import notice

EmotionName = Literal[
    "joy",
    "happy",
    "surprise",
    "neutral",
    "sadness",
    "anger",
    "fear",
    "anxious",
    "tired",
    "busy",
    "stressed",
    "disgust",
    "anticipation",
    "affection",
]

# The order is the head's output order: changing it means retraining (the head stores its own label list
# and the detector checks it against this one).
LABELS: tuple[EmotionName, ...] = get_args(EmotionName)

VALUES: dict[str, float] = {
    "joy": 1.0,
    "affection": 0.9,
    "happy": 0.8,
    "anticipation": 0.6,
    "surprise": 0.3,
    "neutral": 0.0,
    "busy": -0.2,
    "tired": -0.4,
    "anxious": -0.5,
    "sadness": -0.6,
    "stressed": -0.6,
    "disgust": -0.7,
    "fear": -0.8,
    "anger": -1.0,
}

# Our labels grouped to Ekman's six + neutral, to compare with GoEmotions' Ekman grouping (bench/emotion.py).
# tired reads as low mood (sadness), anxious and stressed as fear's family, busy as no emotion.
EKMAN_GROUP: dict[str, str] = {
    "joy": "joy",
    "happy": "joy",
    "surprise": "surprise",
    "neutral": "neutral",
    "sadness": "sadness",
    "tired": "sadness",
    "anger": "anger",
    "fear": "fear",
    "anxious": "fear",
    "stressed": "fear",
    "busy": "neutral",
    "disgust": "disgust",
    "anticipation": "joy",
    "affection": "joy",
}

# Each label in a sentence for the person (the activity timeline): in English the label as stored, in a
# window translated.
_LABEL_WORDS = {
    "joy": notice("joy"),
    "happy": notice("happy"),
    "surprise": notice("surprise"),
    "neutral": notice("neutral"),
    "sadness": notice("sadness"),
    "anger": notice("anger"),
    "fear": notice("fear"),
    "anxious": notice("anxious"),
    "tired": notice("tired"),
    "busy": notice("busy"),
    "stressed": notice("stressed"),
    "disgust": notice("disgust"),
    "anticipation": notice("anticipation"),
    "affection": notice("affection"),
}


def label_word(label: str) -> str:
    """An emotion label in a sentence for the person: a notice (translated where it is shown); a label
    this version does not know stays as it is."""
    return _LABEL_WORDS.get(label, label)

"""How much a sentence tells about the person's day (issue 32): what happened, to whom, where, when, what
they plan and how they feel, against greetings, cheers and questions that tell nothing to remember.

The extractive dream (dreaming/extractive.py) ranks the person's messages with it: "I failed my aptitude
test yesterday" above "Woohoo, that's awesome!", and quotes only a message's informative sentences. The
signals are plain word classes in English and Japanese, so they hold for any conversation: content words,
numbers, names, the first person, a time, a plan, people and places, a feeling, distress.
"""

from __future__ import annotations

import re

from nexus_ark.dreaming.grounding import COMMON_WORDS, content_words
from nexus_ark.dreaming.names import NEVER_NAMES, People, never_a_name, vocatives
from nexus_ark.dreaming.tone import distress, news_of_distress
from nexus_ark.sentences import sentences

_FIRST_PERSON = re.compile(
    r"\b(?:I|I'm|I've|I'd|I'll|Im|me|my|mine|myself|we|we're|we've|our|ours|us)\b|私|僕|俺|わたし|あたし|自分",
    re.IGNORECASE,
)
# The speaker alone (news of one's own life): "I", "my", 「私」; "we" and "our" are often everyone.
_MYSELF = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|Im|me|my|mine|myself)\b|私|僕|俺|わたし|あたし", re.I)
_SECOND_PERSON = re.compile(
    r"\b(?:you|your|you're|you've|you'll|yours|yourself|u|ur)\b|あなた|君は|きみ", re.I
)
_TIME = re.compile(
    r"\b(?:yesterday|last (?:night|week|month|year|weekend|\w+day)|this (?:morning|week|weekend|month|year)|"
    r"tonight|ago|earlier|recently|since|finally|just got|just had)\b|"
    r"昨日|先週|先月|去年|今朝|さっき|最近|この前",
    re.IGNORECASE,
)
_PLAN = re.compile(
    r"\b(?:going to|gonna|plan(?:s|ning|ned)?|next (?:week|month|year|weekend|\w+day)|tomorrow|soon|"
    r"decided|thinking (?:about|of)|hope to|want to|wanna|trying to|signed up|applied|booked)\b|"
    r"予定|つもり|明日|来週|来月|来年|しようと|したい|申し込",
    re.IGNORECASE,
)
_PEOPLE_PLACES = re.compile(
    r"\b(?:mom|mum|mother|dad|father|parents?|sister|brother|sons?|daughters?|kids?|children|child|baby|"
    r"husband|wife|partner|boyfriend|girlfriend|friends?|boss|cowork\w*|colleagues?|teacher|doctor|nurse|"
    r"grand\w+|aunt|uncle|cousin|neighbou?r|family|dogs?|cats?|pupp\w+|kitten|pets?|school|work|job|"
    r"office|hospital|home|house|apartment|studio|store|shop|park|beach|trip|vacation|holiday|concert|"
    r"festival|party|wedding|birthday|interview|exam|test|class|course|race|competition|meeting|"
    r"appointment|surgery|flight|group|team|business|project|city|country|town)\b|"
    r"母|父|姉|兄|妹|弟|息子|娘|子ども|子供|夫|妻|彼氏|彼女|友達|友人|上司|同僚|先生|医者|犬|猫|家族|学校|"
    r"会社|仕事|病院|旅行|試験|テスト|面接|誕生日|結婚|引っ越",
    re.IGNORECASE,
)
_FEELING = re.compile(
    r"\b(?:feel|felt|feeling|happy|sad|excited|nervous|worried|stressed|proud|scared|angry|tired|lonely|"
    r"grateful|thankful|anxious|upset|relieved|hopeful|thrilled|love|hate|miss)\b|"
    r"嬉し|うれし|楽し|悲し|寂し|不安|心配|怖|疲れ|幸せ|好き|嫌い",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|hundred|"
    r"thousand|twice|first|second|third)\b|[一二三四五六七八九十百千万]+[人回年月日歳時分円つ個匹]",
    re.IGNORECASE,
)
# What cheers, thanks or greets, and says nothing else worth keeping when little follows it.
_CHEER = re.compile(
    r"^(?:thanks|thank you|thx|congrats|congratulations|wow|whoa|woah|woohoo|yay|awesome|great|cool|nice|"
    r"sweet|amazing|sounds|glad|so happy|so glad|you got this|we got this|you can do|good luck|take care|"
    r"bye|see you|talk soon|ttyl|love (?:it|that|this)|that's|that is|what a|haha|lol|hey|hi|hello|yeah|yes|"
    r"yep|sure|absolutely|totally|definitely|exactly|agreed|right|no doubt|keep (?:it|going|up)|"
    r"ありがとう|おめでとう|すごい|いいね|よかった|頑張|がんば|おはよう|こんにちは|こんばんは|またね|おやすみ)",
    re.IGNORECASE,
)
# A reply to the listener's news ("That race sounds great!", "I'm so proud of you") and a shared cheer
# ("Let's keep going!", "We got this!"): said to someone, not news of one's own.
_REACTION = re.compile(
    r"\b(?:sounds|looks|seems) (?:so |really |super |pretty )?(?:great|awesome|amazing|cool|fun|nice|lovely|"
    r"wonderful|exciting|fantastic|like a)\b|proud of you|happy for you|glad (?:to hear|you)|good for you|"
    r"let's (?:keep|do|go|make|spread|get)|keep (?:it up|going|pushing)|we (?:got|can do) (?:this|it)|"
    r"you got this|hang in there|stay (?:positive|motivated|strong)|chase (?:our|your) dreams|"
    r"your (?:kind )?(?:words|support|backing|courage)|means? (?:a lot|so much)|appreciate|"
    r"よかったね|すごいね|頑張って|がんばって",
    re.IGNORECASE,
)
# What a transcript adds that nobody said ("[shares a photo: …]"): quoted where it stands, never ranked.
_ANNOTATION = re.compile(r"^\[[^\]]*\]$")
_JA_WORD = re.compile(r"[一-龥々]{2,}|[ァ-ヺー]{2,}")
_CAPITALIZED = re.compile(r"\b[A-Z][a-zA-Z]+\b")


def in_first_person(text: str) -> bool:
    """Whether `text` speaks as I or we (English or Japanese)."""
    return bool(_FIRST_PERSON.search(text))


def _words(sentence: str) -> int:
    """Content words: English ones of four letters and more that are not function words; Japanese kanji
    and katakana runs (the script of what a sentence is about)."""
    return len(content_words(sentence)) + len(_JA_WORD.findall(sentence))


def _names(sentence: str, people: People) -> int:
    """Names of others in a sentence (a capitalized word inside it that is no common word, no greeting and
    none of the conversation's own people)."""
    found = set()
    for i, match in enumerate(_CAPITALIZED.finditer(sentence)):
        word = match.group(0)
        if i == 0 and match.start() == 0:
            continue
        folded = word.casefold()
        if folded in COMMON_WORDS or folded in NEVER_NAMES or never_a_name(word) or people.who(word):
            continue
        found.add(folded)
    return len(found)


def small_talk(sentence: str, people: People) -> bool:
    """A greeting, a thanks, a cheer or a reaction that says nothing to remember ("Thanks, Mel!", "That's
    awesome!", "Good to see you!")."""
    said = sentence
    for name in vocatives(sentence):
        said = said.replace(name, " ")
    words = _words(said)
    if words == 0 or (words <= 1 and not _NUMBER.search(said) and not _names(said, people)):
        return True
    opens = _CHEER.match(said.strip(" ,!.…~\"'“”「」"))
    return bool(opens) and words <= 3 and not _FIRST_PERSON.search(said)


def sentence_score(sentence: str, people: People) -> float:
    """What a sentence tells about someone's life: 0 for small talk, more for each signal it carries."""
    if small_talk(sentence, people) or _ANNOTATION.match(sentence):
        return 0.0
    score = float(min(_words(sentence), 8))
    score += 2.0 * bool(_NUMBER.search(sentence))
    score += 2.0 * min(_names(sentence, people), 2)
    first = bool(_FIRST_PERSON.search(sentence))
    own = bool(_MYSELF.search(sentence))
    score += 2.0 * own + 1.0 * (first and not own)
    dated = bool(_TIME.search(sentence))
    score += 2.0 * dated
    score += 1.5 * bool(_PLAN.search(sentence))
    concrete = bool(_PEOPLE_PLACES.search(sentence))
    score += 1.5 * concrete
    score += 1.0 * bool(_FEELING.search(sentence))
    score += 4.0 * distress(sentence)[1]
    if news_of_distress(sentence):
        score += 6.0  # the person's own loss, failure or scare: the day's news
    if not (own or dated or concrete or _NUMBER.search(sentence) or _names(sentence, people)):
        score *= 0.6  # a thought about life in general ("It takes courage to talk about our stories")
    if _REACTION.search(sentence) or vocatives(sentence):
        score *= 0.5  # a reply or a cheer said to the listener
    if sentence.rstrip(" )]」』").endswith(("?", "？")):
        score *= 0.3  # a question asks; it tells little about the asker's day
    elif _SECOND_PERSON.search(sentence):
        # About the listener: praise, advice, a reply to their news ("I'm so proud of you!").
        score *= 0.7 if first else 0.4
    return score


def message_score(text: str, people: People) -> float:
    """A message's most telling sentence, and half its second (a long message does not win by length
    alone)."""
    scores = [
        *sorted((sentence_score(s, people) for s in sentences(text, flat=True)), reverse=True),
        0.0,
        0.0,
    ]
    return scores[0] + 0.5 * scores[1]


def telling_sentences(text: str, people: People) -> list[str]:
    """The sentences of a message worth quoting, in their order: not small talk, not a question, and
    not a reply said to the listener where the message says more than that."""
    told = [
        s
        for s in sentences(text, flat=True)
        if sentence_score(s, people) > 0 and not s.rstrip(" )]」』").endswith(("?", "？"))
    ]
    own = [s for s in told if not (_REACTION.search(s) or vocatives(s))]
    return own or told

"""Self-disclosures: the writer's own attributes, stated about themselves in the idioms of forum posts and chat
prompts, typed as the quasi-identifier classes the rest of the project already has.

| class              | the cue of self-reference and the value                                   | entity     |
|--------------------|---------------------------------------------------------------------------|------------|
| job, self-named    | a job noun phrase that opens a clause and ends in "here" ("lawyer here -", | OCCUPATION |
|                    | "math nerd turned gym owner here"); "<job> life" opening a clause ("chef  |            |
|                    | life's hectic")                                                           |            |
| post held          | "as" and a job without an article ("first meeting as principal")          | OCCUPATION |
| education          | a qualified degree or diploma and its field, with the writer in the       | OCCUPATION |
|                    | sentence or "here" after it ("my master's degree", "I'm studying for a    | (as DEGREES)|
|                    | bachelor's degree in economics", "diploma in gastronomy here")            |            |
| relationship       | "single" or "in a relationship" after a first-person or state verb ("I'm   | FAMILY     |
|                    | single", "being happily single", "staying single"), or opening a clause as |            |
|                    | its subject ("single life hasn't changed", "single but …")                 |            |
| age                | a two-digit number after "I'm" / "I turned" … ("I'm 34 and …"), the        | AGE        |
|                    | number of an age/sex tag ("(34F)", "[m 27]")                              |            |
| sex                | "I'm a …" / "as a …" (with I, me or my in the sentence) and a sex noun     | GENDER     |
|                    | ("as a 34-year-old woman"); the letter of an age/sex tag                   |            |
| income             | the sum after "I make" / "we earn" … ("I make 80k")                       | AMOUNT     |

Where the same words are not the writer's they are not matched: a job after "the" or a possessive ("the head
chef"), "single" before a noun ("every single time", "single-use"), a number before a unit ("I'm 20 minutes
away"), a sex noun said of someone else ("treated her as a woman"), a status asked of others ("those who chose to
stay single"). The levels treat these spans as any quasi-identifier (anonymize/levels.py: kept at L1-L2,
generalized from L3), and the deterministic adversary (anonymize/guesser.py) reads the same cues in a rewrite: what
a text still says of its writer is a guess it makes (so this module sits outside both stages). Job nouns are
general English (occupations.py); no string of any benchmark.
"""

from __future__ import annotations

import regex as re

from .occupations import OCCUPATIONS

Hit = tuple[int, int, str, float]

#: nouns that the general list leaves out because alone they are no job ("owner" of a car), but that name one in a
#: self-description ("gym owner here"), and a few job nouns it lacks; nouns only: "academic life" is a topic
_EXTRA_JOBS = frozenset({"owner", "founder", "co-founder", "dev", "grad", "physicist", "philosopher", "diplomat"})
#: job nouns by their ending: "-ologist", "-ician", "-ographer", "-ineer", "-iatrist", "-therapist", "-ologer"
_JOB_ENDING = re.compile(r"(?:ologist|ician|ographer|ineer|iatrist|therapist|ologer|pharmacist|analyst)\Z")
#: words that end a job's noun phrase on its left ("math nerd turned| gym owner here", "yeah| pe teacher here")
_LEFT_STOP = frozenset({"a", "an", "the", "just", "also", "another", "turned", "and", "but", "so", "as", "yeah", "yes",
                        "lol", "ok", "okay", "well", "hi", "hey", "hello", "fellow", "here", "im", "i'm", "i", "me",
                        "am", "was", "currently", "now", "still", "only", "actually", "your", "my", "our",
                        "friendly", "resident", "humble", "proud", "from", "of", "in", "at", "to", "for", "with",
                        "not", "no", "every", "any", "some", "this", "that", "who", "what", "like"})
#: words before a self-naming that keep it the writer's ("fellow nurse here", "yeah, teacher here")
_LEAD_INS = frozenset({"yeah", "yes", "fellow", "just", "also", "another", "lol", "ok", "okay", "well", "hi", "hey",
                       "hello", "so"})
_PHRASE_WORD = re.compile(r"[\p{L}][\p{L}'’\-]*")
#: the end of a self-naming: "here" and a clause mark after it ("lawyer here -", "chef here...", "Engineer here;")
_HERE = re.compile(r"\bhere(?=[ \t]*(?:[-–—,;:!.…)(”\x22]|$)|[ \t]+(?:and|but|so|lol|too|btw|fwiw)\b)", re.I)
#: what may open a clause before a self-naming: the text's start, a line, a sentence, a dash, a bracket, a quote
_OPENERS = "\n.!?;:(“\"–—…-"
#: "student life", "worker life": a stage or a class of life anyone writes about, not the writer's job
_LIFE_TOPICS = frozenset({"student", "pupil", "worker", "employee", "intern", "retiree", "private", "general"})
#: "<job> life" opening a clause ("chef life's hectic", "director life = odd hours")
_LIFE = re.compile(r"\blife\b(?:[’']s)?", re.I)
#: "as" and a job without an article: a post someone holds ("as principal", "as head chef"); not in a list of jobs
#: ("such as doctor or lawyer")
_AS_POST = re.compile(r"(?<!\bsuch[ \t]+)\bas[ \t]+((?:(?:head|lead|chief|senior|junior|deputy|acting|assistant|sous)"
                      r"[ \t]+)?[a-z][a-z\-]+)\b(?![ \t]*(?:well|much|many|long|soon|far|if|though|such)\b)")
#: roles a text's parties fill ("as agent", "as counsel", "as judge", "as guard") or an adjective's senses
_NOT_POSTS = frozenset({"agent", "general", "major", "private", "guard", "judge", "officer", "lawyer", "advocate",
                        "representative", "counsel", "operator", "worker", "employee", "student", "pupil", "trader",
                        "executive", "assistant", "developer", "designer", "director", "captain", "coach", "driver",
                        "practitioner", "secretary", "administrator", "manager", "consultant", "intern"})
#: a word that starts no field of study ("a degree in economics and| a law degree")
_NOT_FIELD = r"(?!(?:the|a|an|my|his|her|their|our|i|we|then|now|it|that|this)\b)"
#: a qualified degree or diploma, with its field when one follows ("master's degree in economics")
_DEGREE = re.compile(r"(?i)\b(?:(?:master|bachelor|associate)(?:[’']?s)?|doctoral|undergrad(?:uate)?|postgrad(?:uate)?|"
                     r"graduate|honou?rs|law|medical|nursing|engineering|teaching|phd|mba|college|university)"
                     r"[ \t]+(?:degree|diploma)\b(?:[ \t]+in[ \t]+(?!(?:the|a|an|my|his|her|their|our|which|what|that|"
                     r"this)\b)[\p{L}\-]+(?:[ \t]+(?:and|&)[ \t]+" + _NOT_FIELD + r"[\p{L}\-]+)?)?")
#: "a degree in X", "my diploma in X": the field names the education
_DEGREE_IN = re.compile(r"(?i)\b(?:my|a|an|his|her|their|our)[ \t]+(?:degree|diploma|phd|doctorate|masters|bachelors)"
                        r"[ \t]+in[ \t]+(?!(?:the|a|an|my|his|her|their|our|which|what|that|this|order|terms|part|"
                        r"line|question|some|any)\b)[\p{L}\-]+(?:[ \t]+(?:and|&)[ \t]+" + _NOT_FIELD + r"[\p{L}\-]+)?")
#: "here" right after a value: the writer names it as theirs
_HERE_AFTER = re.compile(r"[ \t]+here\b")
#: "diploma in gastronomy here": a diploma and its field naming the writer
_DIPLOMA_IN = re.compile(r"(?i)\b(?:degree|diploma)[ \t]+in[ \t]+[\p{L}\-]+(?=[ \t]+here\b)")
#: what follows a relationship status: a clause mark or a word that is no noun it would qualify ("single, …",
#: "single since …", "single life"; not "single-use", "single time")
_STATUS_AFTER = (r"(?=[ \t]*(?:$|[.,!?;:)–—…])|[ \t]+-|[ \t]+(?:and|but|or|for|since|by|again|now|lol|life|myself|too|"
                 r"so|after|at|in|with|these|this|ever|though|tho|here|there|atm|rn|anymore|yet|because|cause|is|has|"
                 r"hasn't|isn't|means|keeps|was|when)\b)")
#: a first-person or state verb before a relationship status ("I'm single", "being happily single"); the verb
#: (group 1) says whether the sentence must be the writer's too ("being single" is anyone's, "I'm single" theirs)
_STATUS = re.compile(r"(?i)\b(i[’']?m|i[ \t]+am|i[ \t]+was|i[’']ve[ \t]+been|i[ \t]+have[ \t]+been|since|been|being|"
                     r"stay|stays|staying|stayed|remain|remaining|still|currently|happily|newly)[ \t]+"
                     r"(?:(?:happily|still|now|currently|newly|recently|very|so|just|also|totally|perfectly|proudly|"
                     r"pretty|comfortably|contentedly|been)[ \t]+){0,2}"
                     r"(single|in[ \t]+a[ \t]+(?:(?:happy|long[- ]distance|committed|serious|new|long[- ]term|"
                     r"loving)[ \t]+)?relationship)\b" + _STATUS_AFTER)
#: "single" opening a clause as its subject ("single life hasn't changed much", "Single but distractions …")
_SINGLE = re.compile(r"(?i)\bsingle\b(?=[ \t]*[,;–—]|[ \t]+(?:life|but|here|since|is|has|hasn[’']t|isn[’']t|means|keeps|"
                     r"and[ \t]+(?:loving|happy|content|fine|thriving))\b)")
#: an age after a first-person verb ("I'm 34 and", "I just turned 30,")
_AGE = re.compile(r"(?i)\b(?:i[’']?m|i[ \t]+am|i[ \t]+was|i[ \t]+(?:just[ \t]+)?turned|i[’']ll[ \t]+be|i[ \t]+will[ \t]+be|"
                  r"i[’']m[ \t]+turning|when[ \t]+i[ \t]+was)[ \t]+(?:(?:now|only|almost|nearly|about|just|over|under|"
                  r"barely)[ \t]+)?([1-9]\d)\b(?![.,]\d)(?=[ \t]*(?:$|[.,!?;:)\-–—…]|(?:and|but|now|so|too|years?|"
                  r"yrs?|y/?o|this|next|with|when|myself|[fm]|male|female|woman|man|guy|girl|lol|btw|going|soon|"
                  r"in[ \t]+(?:a|two|three|\d)\b|yet|already)\b))")
#: an age/sex tag: "(34F)", "[m 27]", "(34/f)"
_TAG = re.compile(r"[(\[](?:([1-9]\d)[ \t]?/?[ \t]?([FfMm])|([FfMm])[ \t]?/?[ \t]?([1-9]\d))[)\]]")
_SEX_NOUN = r"(woman|man|female|male|guy|girl|lady|gal|dude|boy|mom|mum|dad|mother|father|wife|husband)"
#: "I'm a (34-year-old) woman", "as a single dad": the sex of the writer
_SEX = re.compile(r"(?i)\b(?:i[’']?m|i[ \t]+am|i[ \t]+was|as)[ \t]+(?:a|an)[ \t]+(?:(?:\d{1,2}[ \t-]?(?:years?|yrs?)[ \t-]?"
                  r"old|\d{1,2}[ \t]?(?:yo|y/o)|young|younger|older|old|single|middle[ \t-]aged|black|white|gay|"
                  r"straight|trans|queer|working|stay[ \t-]at[ \t-]home|busy|retired|married|divorced)[ \t,]+){0,2}"
                  + _SEX_NOUN + r"\b(?![ \t]*(?:of|who|whom|that|[’']s)\b)")
#: the writer in the sentence: what makes "as a woman" theirs
_FIRST_PERSON = re.compile(r"(?i)\b(?:i|i[’']m|i[’']ve|i[’']d|me|my|myself)\b")
#: "I make 80k", "we earn about $60,000 a year": the writer's income
_INCOME = re.compile(r"(?i)\b(?:i|we)[ \t]+(?:only[ \t]+|currently[ \t]+|now[ \t]+)?(?:make|earn|made|earned|"
                     r"bring[ \t]+in|take[ \t]+home|gross|net)[ \t]+(?:(?:about|around|roughly|like|over|under|almost|"
                     r"nearly|just|barely|maybe)[ \t]+)?(?:~[ \t]?)?((?:[$£€][ \t]?)?(?:\d{1,3}(?:,\d{3})+(?![\d,])|"
                     r"\d+(?:\.\d+)?[ \t]?(?:k|grand|thousand)\b|\d{5,}(?![\d.,]))"
                     r"(?:[ \t]+(?:a|per)[ \t]+(?:year|month|yr|annum))?)")


def _opens_clause(left: str) -> bool:
    """Does a clause open right after `left` (the text before a word): nothing, or a line, a sentence's end, a
    colon, a bracket, a quote, a dash before it?"""
    s = left.rstrip(" \t")
    return not s or s[-1] in _OPENERS


def _is_job(word: str) -> bool:
    """One person's job noun, singular ("nurses here?" asks after others)."""
    w = word.lower().strip("’'")
    return w in OCCUPATIONS or w in _EXTRA_JOBS or _JOB_ENDING.search(w) is not None


def _only_space(text: str, a: int, b: int) -> bool:
    return not text[a:b].strip(" \t")


def _job_before(text: str, end: int, max_words: int = 3) -> tuple[int, int] | None:
    """The job noun phrase that ends at `end` and opens its clause, alone, after a lead-in word ("fellow", "yeah")
    or after a former self ("math nerd turned| gym owner"); None otherwise ("the teacher here", "any nurse here")."""
    base = max(0, end - 80)
    words = list(_PHRASE_WORD.finditer(text, base, end))
    if not words or not _only_space(text, words[-1].end(), end) or not _is_job(words[-1].group()):
        return None
    first = len(words) - 1
    while first > 0 and len(words) - first < max_words and words[first - 1].group().lower() not in _LEFT_STOP \
            and _only_space(text, words[first - 1].end(), words[first].start()):
        first -= 1
    k = first
    if k > 0 and words[k - 1].group().lower() == "turned":
        k -= 1
        while k > 0 and first - k < 4 and words[k - 1].group().lower() not in _LEFT_STOP \
                and _only_space(text, words[k - 1].end(), words[k].start()):
            k -= 1
    elif k > 0 and words[k - 1].group().lower() in _LEAD_INS:
        k -= 1
    a = words[k].start()
    return (words[first].start(), words[-1].end()) if _opens_clause(text[max(0, a - 40): a]) else None


def _self_named_jobs(text: str) -> list[Hit]:
    out: list[Hit] = []
    for m in _HERE.finditer(text):
        span = _job_before(text, m.start())
        if span:
            out.append((*span, "OCCUPATION", 0.7))
    for m in _LIFE.finditer(text):
        span = _job_before(text, m.start(), max_words=2)
        if span and text[span[0]:span[1]].lower() not in _LIFE_TOPICS:
            out.append((*span, "OCCUPATION", 0.65))
    for m in _AS_POST.finditer(text):
        words = m.group(1).lower().split()
        if _is_job(words[-1]) and words[-1] not in _NOT_POSTS and m.group(1).islower() \
                and (_FIRST_PERSON.search(_sentence_of(text, m.start())) or not _asks(text, m.start())):
            out.append((m.start(1), m.end(1), "OCCUPATION", 0.65))
    return out


def _education(text: str) -> list[Hit]:
    """A degree the writer holds or studies for: "here" after it, or the writer in its sentence ("my master's
    degree", "I have a degree in economics"); "what does a master's degree cover?" asks about degrees, no one's."""
    out = [(m.start(), m.end(), "OCCUPATION", 0.7) for m in _DIPLOMA_IN.finditer(text)]
    for pat in (_DEGREE, _DEGREE_IN):
        for m in pat.finditer(text):
            s = m.start() + len(m.group().split(None, 1)[0]) + 1 if pat is _DEGREE_IN else m.start()  # no "a"/"my"
            if _FIRST_PERSON.search(_sentence_of(text, m.start())) or _HERE_AFTER.match(text, m.end()):
                out.append((s, m.end(), "OCCUPATION", 0.7))
    return out


def _sentence_of(text: str, i: int) -> str:
    a = max(text.rfind(c, 0, i) for c in ".!?\n")
    b = min((j for j in (text.find(c, i) for c in ".!?\n") if j >= 0), default=len(text))
    return text[a + 1: b]


#: the first word of a question or an instruction: such a sentence asks about the world ("What does one do as
#: principal investigator?", "Explain the role of someone serving as principal"), it reports nothing of the writer
_ASKING = frozenset({"what", "how", "who", "why", "when", "where", "which", "can", "could", "should", "would", "is",
                     "are", "does", "do", "did", "explain", "describe", "write", "list", "tell", "give", "summarize",
                     "summarise", "define", "compare", "draft", "translate", "create", "generate", "suggest"})


def _asks(text: str, i: int) -> bool:
    """Is the sentence around `i` a question or an instruction (and so about no one in particular)?"""
    a = max(text.rfind(c, 0, i) for c in ".!?\n") + 1
    b = min((j for j in (text.find(c, i) for c in ".!?\n") if j >= 0), default=len(text))
    first = _PHRASE_WORD.search(text, a, i)
    return text[b: b + 1] == "?" or (first is not None and first.group().lower() in _ASKING)


def _relationship(text: str) -> list[Hit]:
    out: list[Hit] = []
    for m in _STATUS.finditer(text):
        verb = m.group(1).lower()
        if not verb.startswith("i") and verb != "since" and not _opens_clause(text[max(0, m.start() - 40): m.start()]) \
                and not _FIRST_PERSON.search(_sentence_of(text, m.start())):
            continue  # "those who chose to stay single", "what's it like being single": someone else's
        out.append((m.start(2), m.end(2), "FAMILY", 0.7))
    for m in _SINGLE.finditer(text):
        if _opens_clause(text[max(0, m.start() - 40): m.start()]):
            out.append((m.start(), m.end(), "FAMILY", 0.65))
    return out


def _age_and_sex(text: str) -> list[Hit]:
    out: list[Hit] = [(m.start(1), m.end(1), "AGE", 0.75) for m in _AGE.finditer(text)]
    for m in _TAG.finditer(text):
        age, sex = (1, 2) if m.group(1) else (4, 3)
        out += [(m.start(age), m.end(age), "AGE", 0.75), (m.start(sex), m.end(sex), "GENDER", 0.7)]
    for m in _SEX.finditer(text):
        if m.group().lower().startswith("as") and not _FIRST_PERSON.search(_sentence_of(text, m.start())):
            continue  # "treated her as a woman": someone else's
        if m.group(1).lower() in ("mom", "mum", "dad", "mother", "father", "wife", "husband"):
            continue  # a family role: FAMILY's (narrative.py), it says the sex only by the way
        out.append((m.start(1), m.end(1), "GENDER", 0.7))
    return out


def _income(text: str) -> list[Hit]:
    return [(m.start(1), m.end(1), "AMOUNT", 0.75) for m in _INCOME.finditer(text)]


def find(text: str) -> list[Hit]:
    """Self-disclosed attributes in `text`: (start, end, entity, score), spans of the value only."""
    return _self_named_jobs(text) + _education(text) + _relationship(text) + _age_and_sex(text) + _income(text)


#: every pattern of this module (the ReDoS test reads them)
PATTERNS = (_HERE, _LIFE, _AS_POST, _DEGREE, _DEGREE_IN, _DIPLOMA_IN, _STATUS, _SINGLE, _AGE, _TAG, _SEX, _FIRST_PERSON,
            _INCOME, _PHRASE_WORD, _JOB_ENDING, _HERE_AFTER)

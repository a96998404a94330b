"""What a named-entity hit in free text is not: the word-level checks the NER and narrative recognizers pass
their hits through before they become spans (docs/design/extraction.md: "personal data, not words").

Each rule is a property of the words of the hit and of the few characters around it, never of one string:

| rule                | a hit is dropped (or trimmed) when …                                                          |
|---------------------|----------------------------------------------------------------------------------------------|
| determiners         | it starts with "the", "a", "our", "my" …: the article is trimmed off (it is not the name); an |
|                     | ORGANIZATION ends where an unclosed parenthesis (its gloss) opens                            |
| greeting            | it starts with "Dear", "Hello" …: trimmed off; an ORGANIZATION so greeted that starts with a  |
|                     | courtesy title is a PERSON ("Dear Mrs Hernandez")                                            |
| range word          | a DATE or AMOUNT starts with "between", "from", "approximately" …: trimmed off                |
| field label         | it is (or starts with) a field label — common words followed by ":" ("Email:", "Seller:") — or |
|                     | it runs across a field separator ("|", a line break): cut to its first non-label part        |
| hashtag             | it sits in a hashtag (#FamilyFirst): a topic word, unless the tag tells the writer's family  |
|                     | role or status (#SingleDad, #MomLife)                                                         |
| heading             | it is written in capitals and its words are common English words ("THE FACTS", "THE LAW")    |
| structure           | a section's letter and the heading's first word ("A. Criminal proceedings"), a legal text's  |
|                     | division and its number ("Chapters 1-9", "Appendix II", "paragraph III Nr. 6")              |
| next sentence       | a PERSON after an initial's full stop ends before the next sentence's first word ("Mr J.S.  |
|                     | Further, she claimed" → "Mr J.S.")                                                            |
| law's name          | an ORGANIZATION that is a law's name ("the Military Service Act", "the Brussels I Regulation",|
|                     | "the Act on the Legal Status of …", "the Military Service| Act"): a public text; a value       |
|                     | personal elsewhere in the text                                                               |
|                     | is still hidden inside it (propagation)                                                      |
| office title        | an ORGANIZATION that is an office's title ("his Commanding Officer", "the Procurator        |
|                     | General"), not of a specialised field and not said of someone ("he was appointed Chief …"); |
|                     | a body's field named alone in its vocabulary ("Director of Legal Affairs")                    |
| PERSON              | it holds a digit ("agent2"), or is one acronym ("JSON"); or its words are common English words |
|                     | and no word is a known                                                                        |
|                     | first or last name ("test", "Respond", "Seller", "Law"); or it is one capitalised common word |
|                     | at the start of a sentence or line that is not a known name (an imperative: "Summarize …")   |
| institution         | an ORGANIZATION named by its function — a public-institution head word ("Court", "Government",|
|                     | "Ministry", "Chamber", "Prosecutor" …) with only rank words, countries or nationalities       |
|                     | around it ("the Supreme Administrative Court", "the Turkish Government"); a named one keeps   |
|                     | its span ("the Warsaw Regional Court", "Berlin Social Court"), and so does a specialised body |
|                     | whose field says what the affair is about ("Social Insurance Authority", "Ministry of         |
|                     | Defence", "Supreme Military Administrative Court"); criminal justice's bodies are no such     |
|                     | field ("the Parole Board", "the Prison Service", "the Probation Service": the criminal        |
|                     | process, like a criminal court). Also an ORGANIZATION or a LOCATION that                      |
|                     | is one institution word ("Government", "Chamber"); never a country                           |
| value's field name  | common words directly before a value with digits ("National ID CA-ID-…", "Driver's License …")|
| country as topic    | a LOCATION that is a country asked about in a factual question ("the capital of France",     |
|                     | "population of Japan"); anywhere else a country stays (privacy first)                         |
| nationality         | an NRP that qualifies an institution ("Turkish Government", "Polish authorities")             |
| group / role noun   | an OCCUPATION that is a plural after a determiner or quantifier ("many teachers", "two police |
|                     | officers") or the role of a party after "the" or a possessive ("his lawyer", "the judge"): a  |
|                     | group or a function, not the person's job; so is "X, a lawyer practising in Y" (a            |
|                     | representative's capacity), but "the applicant, who is a lawyer" stays; any lower-case job  |
|                     | after "the" or a possessive ("the school counsellor", "its accredited doctor") is a function |
|                     | in the story, unless said of someone ("he was the manager", "Mr X, the headmaster") or the   |
|                     | text states that job as someone's elsewhere ("worked as a ballet dancer")                     |
| foreign gloss       | a PERSON inside a parenthesis holding a phrase of another language ("(Vertrauensschutz)",  |
|                     | "(Bundesgesetz über die Rechtspersönlichkeit von …)"); not a body's own-language name       |
| citation            | a CASE_NUMBER, DATE or QUANTITY in a case-law citation ("Smith v. Turkey ((dec.), no. 45874/05, |
|                     | 5 July 2007)", "Stec and Others v. the United Kingdom [GC], nos. 65731/01 and 65900/01"), unless |
|                     | the cited party's name is used elsewhere in the text (it may be the person's own case); an     |
|                     | ORGANIZATION that is a law report's name ("Reports of Judgments and Decisions"): citations.py  |
| number word         | a QUANTITY that is a bare number word ("two", "three"); an AMOUNT without a number            |
| common condition    | a MEDICAL_CONDITION found by its suffix alone that is a common English word ("diploma")       |

Word lists: English word frequency from `wordfreq` (the Zipf scale, already a dependency); first and last
names from Faker's English person providers (en, en_US, en_GB, en_IE, en_IN, en_NZ); countries from Faker's
date-time provider. Nothing is downloaded.
"""

from __future__ import annotations

from functools import lru_cache

import regex as re

from ..citations import cited, reporter
from ..hashtags import personal_hashtag
from ..institutions import INSTITUTION_HEADS, INSTITUTION_WORDS, SPECIALISED, law_date
from ..livelihoods import is_livelihood
from ..offices import OFFICE_TITLES as _OFFICE_TITLES
from ..person_names import ENGLISH, faker_names
from .quasi_lexicon import ETHNIC_PERSON

Hit = tuple[int, int, str, float]

#: the Zipf frequency above which a word is an ordinary English word (4.0 ≈ once in 100,000 words)
COMMON = 4.0
#: at the start of a sentence a capitalised word is a name only if it is rare or a known name
COMMON_AT_START = 3.0

_DETERMINER = re.compile(r"(?:the|a|an|our|my|his|her|their|its|your|this|that|these|those)\s+", re.I)  # .match
_TRAIL = re.compile(r"(?:[’']s|\s*[&,;:–(-])+$")
_WORD = re.compile(r"\p{L}[\p{L}'’\-]*|\d+(?:st|nd|rd|th)?")
#: a range's or an estimate's word before a date or an amount ("between 1 March and 31 December 1998",
#: "approximately EUR 1,400"): it says how the value is meant, it is not part of it
_APPROX = re.compile(r"(?i)(?:between|from|approximately|about|around|nearly|almost|roughly|circa|some)\s+(?=(?:\S+\s+)?\S*\d)")
_ETHNIC_PERSON = re.compile(ETHNIC_PERSON, re.I)
_SEP = re.compile(r"\s*(?:\||\n|:\s|\s:)\s*")
#: where a sentence or a quotation begins: a capitalised word there is capitalised for grammar ("show 'Hydration
#: failed because …'", "‘Build failed'"), so it is a name only if it is rare or a known name
_SENT_START = re.compile(r"(?:^|[\n.!?:;•\-–—(“‘\"]|\d\.|(?:^|\s)')\s*$")
_TITLED = re.compile(r"(?:(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Dame|Lady|Lord|Judge)\.?\s+\S|(?:\p{Lu}\.\s?)+\p{Lu})")
_STOP = {"of", "the", "for", "and", "&", "de", "du", "la", "le", "des", "to", "in", "on", "at", "a", "an", "its"}

#: nouns a nationality or ethnic group qualifies when it describes a person ("a Turkish national", "of Kurdish
#: origin", "a Polish woman"); before anything else it is context ("Turkish law", "the Polish Government")
_PERSON_NOUNS = re.compile(
    r"\s*(?:-\s*)?(?:nationals?|citizens?|citizenship|nationality|origin|descent|extraction|ethnicity|background|"
    r"roots|heritage|man|men|woman|women|boy|girls?|child|children|kids?|person|persons|people|applicants?|family|"
    r"families|parents?|father|mother|wife|husband|son|daughter|brother|sister|grand\w+|minority|community|"
    r"speaker|immigrants?|refugees?|migrants?|students?|workers?|residents?|by\s+birth|-born|born)\b", re.I)
_IS_BEFORE = re.compile(r"(?i)\b(?:am|is|are|was|were|be|being|been|became|become|becomes|of|as|half|part|a\s+proud|both|fellow)\s+$")
_SCHEME_AFTER = re.compile(r"(?i)\s*(?:pensions?|benefits?|allowances?|insurance|funds?|schemes?|acts?|laws?|"
                           r"legislation|boards?|commissions?|tribunals?|offices?|polic(?:y|ies)|rights|"
                           r"discrimination|services?|centres?|centers?|grants?|payments?)\b")
#: what a factual question asks about a country ("the capital of France", "population of Japan"): the country is
#: the topic, not where someone is. Elsewhere a country is kept as possibly personal (privacy first: TAB marks
#: countries of a case as quasi-identifiers)
_FACT_ABOUT = re.compile(
    r"(?i)\b(?:capital|capital\s+city|population|currency|flag|anthem|president|prime\s+minister|king|queen|"
    r"economy|gdp|history|geography|climate|language|languages|cuisine|area|size|largest\s+city|"
    r"official\s+language)\s+(?:of|in)\s+(?:the\s+)?$")


#: a country named as a state, a legal person (the respondent of an application, a government, a law's author), not
#: as where someone lives or comes from: its formal name ("the Republic of Turkey", "the United Kingdom of Great
#: Britain and Northern Ireland"), a party "against" it, or the state's organs after it ("United Kingdom law")
_FORMAL_STATE = re.compile(r"(?i)^(?:the\s+)?(?:(?:federal|islamic|socialist|democratic|people's|united|hellenic|"
                           r"slovak|czech|french|italian|portuguese|turkish)\s+)*(?:republic|kingdom|federation|"
                           r"principality|grand\s+duchy|confederation|commonwealth)\s+of\b|^(?:the\s+)?\p{Lu}\p{L}+\s+Republic$")
_STATE_BEFORE = re.compile(r"(?i)(?:\bagainst\s+(?:the\s+)?|\b(?:republic|kingdom|federation)\s+of\s+[\p{L} ]{2,40}?"
                           r"\s+and\s+(?:the\s+)?|\b(?:government|governments|authorities|parliament|embassy|"
                           r"president|prime\s+minister|ministry\s+of\s+\p{L}+(?:\s+affairs)?)\s+of\s+(?:the\s+)?)$")
_STATE_AFTER = re.compile(r"(?:[’']s)?\s+(?:Government|Governments|Government’s|Government's|authorities|"
                          r"Parliament|courts|law|laws|legislation|Armed\s+Forces|army|Army|police|Police|Embassy|"
                          r"Ministry|Ministries|State|Constitution|Civil\s+Code|Criminal\s+Code|Code)\b")


def state_actor(text: str, start: int, end: int) -> bool:
    """Is the country at text[start:end] the state as an actor (formal name, respondent, its organs)?"""
    return bool(_FORMAL_STATE.match(text[start:end]) or _STATE_BEFORE.search(text[max(0, start - 80): start])
                or _STATE_AFTER.match(text, end))


def _of_a_person(text: str, start: int, end: int) -> bool:
    return _PERSON_NOUNS.match(text, end) is not None or _IS_BEFORE.search(text[max(0, start - 20): start]) is not None


_PERSON_NOUN_ROLES = {
    "lawyer", "lawyers", "solicitor", "solicitors", "advocate", "advocates", "counsel", "barrister", "barristers",
    "attorney", "attorneys", "judge", "judges", "prosecutor", "prosecutors", "registrar", "agent", "agents",
    "representative", "representatives", "notary", "bailiff", "investigator", "investigators", "officials",
}
#: a role noun after a possessive or "the" is the role of a party ("the applicant's lawyer", "the judge")
_ROLE_OF = re.compile(r"(?i)(?:\b(?:the|his|her|their|its|my|our|your)|[’']s)\s+$")
#: a plural job is a group where a determiner or quantifier says so ("many teachers", "the police officers",
#: "other lawyers"); bare ("ideal for photographers & architects") it can hint at the writer's own job
_GROUP_BEFORE = re.compile(r"(?i)\b(?:the|many|most|some|all|other|these|those|few|several|more|fewer|no|any|"
                           r"two|three|four|five|ten|hundreds|thousands|millions|of|among|between|by|with|"
                           r"and|or|local|foreign|young|older)\s+$")
#: a marital status before a plural noun describes a group ("married women", "widowed persons", "single parents")
_GROUP_AFTER = re.compile(r"(?i)[ \t]+(?:men|women|persons|people|couples|partners|spouses|parents|mothers|fathers|"
                          r"employees|workers|officers|soldiers|applicants|claimants|individuals)\b")
#: a representative engaged without a name ("represented by a lawyer", "did not appoint a lawyer"): a party's role
_ENGAGED = re.compile(r"(?i)\b(?:represented\s+by|appoint(?:s|ed)?|instruct(?:s|ed)?|consult(?:s|ed)?)\s+(?:a|an)\s+$")
#: "X, a lawyer practising in Y": the capacity a representative acts in, not what the person is
_PRACTISING = re.compile(r"(?i),?\s+(?:practi[sc]ing|practi[sc]ed|acting)\b")
#: any lower-case job after "the" or a possessive, with at most two modifiers between ("the school counsellor",
#: "its accredited doctor", "the doctor she had appointed"): the function someone fills in the story, not what the
#: person the text is about does; unless a copula or "as" says it of someone ("he was the manager"), a name or a
#: party stands beside it ("Mr Smith, the headmaster", "its manager, the applicant"), or the text states the same
#: job as someone's elsewhere (_STATED_JOB): then every mention is that person's job (privacy first)
_FUNCTION_OF = re.compile(r"(?:\b(?:the|his|her|their|its|my|our|your)|[’']s)\s+(?:[a-z][a-z-]*\s+){0,2}$")
_SAID_OF = re.compile(r"(?i)(?:\b(?:am|is|are|was|were|be|been|being|became|become|becomes|as)\s+|"
                      r"\p{Lu}[\p{L}.]*\s*,\s+)(?:the|his|her|their|its|my|our|your)\s+(?:[a-z][a-z-]*\s+){0,2}$")
_PARTY_BESIDE = re.compile(r"\s*,\s+(?:(?:the|an?)\s+(?:applicant|appellant|claimant|plaintiff|defendant|complainant|"
                           r"petitioner|accused|victim)|(?:Mr|Mrs|Ms|Miss|Dr|Prof)\b|\p{Lu}\p{Ll}+\s+\p{Lu}\p{Ll}+)")


def _stated_job(text: str, head: str) -> bool:
    """Is `head` (a job noun) said of someone anywhere in the text ("worked as a ballet dancer", "the applicant
    is a medical practitioner", "he was the owner and the editor")?"""
    stem = re.escape(head[:-1] if head.endswith("s") and not head.endswith("ss") else head)
    return re.search(r"(?i)\b(?:am|is|are|was|were|be|been|became|become|becomes|as|works?|worked|working|employed)"
                     r"\s+(?:as\s+)?(?:a|an|the)\s+(?:[\w-]+\s+){0,4}?" + stem + r"s?\b", text) is not None


_NUMBER_WORDS = {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
                 "both", "half", "several", "few", "dozen", "once", "twice", "single", "double", "first", "second",
                 "third", "zero", "none"}


@lru_cache(maxsize=65536)
def zipf(word: str) -> float:
    """English word frequency on the Zipf scale (0 = unseen, 7 = 'the'), from wordfreq."""
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en")


@lru_cache(maxsize=2)
def known_names(kind: str = "all") -> frozenset[str]:
    """Lower-cased first names (`kind="first"`), or first and last names, of Faker's English person providers."""
    attrs = ["first_names", "first_names_male", "first_names_female", "first_names_nonbinary"]
    if kind != "first":
        attrs.append("last_names")
    return faker_names(*attrs, locales=ENGLISH)


@lru_cache(maxsize=1)
def countries() -> frozenset[str]:
    from faker.providers.date_time import Provider

    names = {c.name.lower() for c in Provider.countries}
    names |= {"uk", "united kingdom", "great britain", "britain", "england", "scotland", "wales", "northern ireland",
              "usa", "us", "united states", "united states of america", "america", "russia", "turkey", "türkiye",
              "czech republic", "czechia", "the netherlands", "holland", "south korea", "north korea",
              "ivory coast", "united kingdom of great britain and northern ireland", "cyprus", "moldova", "macedonia",
              "north macedonia", "bosnia and herzegovina", "european union", "eu"}
    return frozenset(names)


def _country(value: str) -> bool:
    v = value.strip()
    m = _DETERMINER.match(v)
    v = (v[m.end():] if m else v).lower()
    v = re.sub(r"^(?:(?:federal|islamic|socialist|democratic|people's|united)\s+)*(?:republic|kingdom|state|"
               r"principality|grand duchy|federation|commonwealth|confederation)\s+of\s+(?:the\s+)?", "", v)
    return v in countries()


def _nationality(word: str) -> bool:
    """An adjective of a country ("Turkish", "Polish", "Cypriot"): capitalised, not a name, and a country-like
    ending; cheap and good enough for the institution rule."""
    return bool(re.fullmatch(r"\p{Lu}\p{Ll}+(?:ish|ian|ean|ese|ic|i|an|ch|ot)", word))


def _common(word: str, floor: float = COMMON) -> bool:
    return zipf(word.lower()) >= floor


def _is_name_word(word: str) -> bool:
    """A known first name, or a known last name that is not also a very common word ("Law", "Young")."""
    w = word.lower()
    return w in known_names("first") or (w in known_names() and zipf(w) < 5.0)


def _label_at(text: str, end: int) -> bool:
    """Is text[end:] a field label's colon ("Email:", "Seller:")? Not a time ("10:45"), a URL ("http://") or a
    speaker ("Michael : hey", "@tina : …", where the colon stands apart)."""
    return re.match(r":(?![/\d])", text[end:end + 2]) is not None


def _segments(text: str, start: int, end: int) -> list[tuple[int, int]]:
    out, pos = [], start
    for m in _SEP.finditer(text, start, end):
        out.append((pos, m.start()))
        pos = m.end()
    out.append((pos, end))
    return [(a, b) for a, b in out if b > a and text[a:b].strip()]


def _is_label(text: str, a: int, b: int) -> bool:
    """A field label: at most four common words (or short capitals: "ID") right before a colon, and not a lone
    known name ("Michael : hey" is a speaker, "Seller: …" a label)."""
    words = _WORD.findall(text[a:b])
    if not words or len(words) > 4 or not _label_at(text, b) or re.search(r"[@_\d]", text[a:b]):
        return False
    if len(words) == 1 and _is_name_word(words[0]):
        return False
    return all(_common(w, 3.0) or (w.isupper() and len(w) <= 4) for w in words)


def _names_a_value(text: str, start: int, end: int) -> bool:
    """Common words directly followed by a value with digits: the value's field name ("National ID CA-ID-79…",
    "Driver's License US-DL-…", "Order Number 4411")."""
    words = _WORD.findall(text[start:end])
    if not words or len(words) > 4 or not all(_common(w, 3.0) or (w.isupper() and len(w) <= 4) for w in words):
        return False
    if len(words) == 1 and _is_name_word(words[0]):
        return False
    return re.match(r"[ \t]*(?:[(:#]|no\.|number)?[ \t]*[\w-]*\d", text[end:end + 40]) is not None


#: a greeting before the name it addresses ("Dear Mrs Hernandez", "Hello Anna"): the letter's words, not the name
_GREETING = re.compile(r"(?i)(?:dear|hi|hello|hey|greetings|welcome(?:\s+back)?|good\s+(?:morning|afternoon|evening))"
                       r",?[ \t]+(?=\p{Lu})")


def trim(text: str, start: int, end: int, label: str) -> tuple[int, int] | None:
    """The hit without a leading article or greeting, a trailing possessive or "&", field labels and what follows a
    field separator, an organisation's name without the unclosed parenthesis after it; None when nothing is left."""
    segs = [(a, b) for a, b in _segments(text, start, end) if not _is_label(text, a, b)]
    if not segs:
        return None
    start, end = segs[0]
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    opened = text.find("(", start, end)
    if label == "ORGANIZATION" and opened > start and text.find(")", opened, end) < 0:
        end = opened  # "Health Care Reform Act (Gesundheitsstrukturgesetz": the name ends where its gloss opens
        while end > start and text[end - 1].isspace():
            end -= 1
    m = _GREETING.match(text, start, end) if label in ("PERSON", "ORGANIZATION", "LOCATION", "NRP") else None
    if m and m.end() < end:
        start = m.end()
    if label not in ("PERSON", "USERNAME"):
        m = _DETERMINER.match(text, start, end)
        if m and m.end() < end:
            start = m.end()
    m = _APPROX.match(text, start, end) if label in ("DATE", "AMOUNT") else None
    if m and m.end() < end:
        start = m.end()
    m = _TRAIL.search(text[start:end])
    if m and m.start() > 0:
        end = start + m.start()
    return (start, end) if end > start else None


def _sentence_start(text: str, start: int) -> bool:
    return start == 0 or _SENT_START.search(text[max(0, start - 4): start]) is not None


#: a body's or a law's name, or a legal term, right before a parenthesis: what the parenthesis holds is its name
#: in the original language ("the District Court (Sąd Rejonowy)", "the Constitutional Court
#: (Verfassungsgerichtshof)"), not a person
_GLOSSED = re.compile(r"(?:\b(?:" + "|".join(sorted(INSTITUTION_HEADS, key=len, reverse=True)) +
                      r")|\b(?:appeal|complaint|decision|order|judgment|ruling|request|application|objection|"
                      r"action|procedure|proceedings|allowance|benefit|pension|fund|scheme|tax|fee|regulation|"
                      r"ordinance|decree|statute|gazette|register|certificate|permit|licence|notice|warrant|"
                      r"summons|indictment|sentence|penalty|fine|offence|status|right|rights|act|acts))[ \t]*\([ \t]*$", re.I)
_PARTICLES = {"von", "van", "der", "den", "de", "da", "di", "del", "della", "la", "le", "bin", "ibn", "al", "el",
              "dos", "das", "du", "y", "zu", "ter", "ten", "op", "af", "av"}


def _gloss(text: str, start: int, end: int) -> bool:
    """A PERSON hit that fills a parenthesis right after a body's or a law's name or a legal term."""
    return _GLOSSED.search(text[max(0, start - 40): start]) is not None and \
        re.match(r"[ \t]*[)\],;]", text[end:end + 2]) is not None


def _foreign_gloss(text: str, start: int, end: int) -> bool:
    """A PERSON hit inside a parenthesis that holds a phrase of another language, glossing the English words before
    it ("the protection of legitimate expectations (Vertrauensschutz)", "(Bundesgesetz über die Rechtspersönlichkeit
    von religiösen Bekenntnisgemeinschaften)"): a lower-case word English does not use, or one long compound that is
    no known name. Not after a body's name: its own-language name is `_gloss`'s."""
    opened = text.rfind("(", max(0, start - 80), start)
    if opened < 0 or ")" in text[opened:start] or "\n" in text[opened:start]:
        return False
    close = text.find(")", end)
    if close < 0 or close - end > 120 or "\n" in text[end:close]:
        return False
    before = _WORD.findall(text[max(0, opened - 30): opened])
    if before and before[-1].lower() in INSTITUTION_HEADS:
        return False
    words = _WORD.findall(text[opened + 1: close])
    if any(w[:1].islower() and w.lower() not in _PARTICLES and not w.isdigit() and zipf(w.lower()) < 2.5 for w in words):
        return True
    return len(words) == 1 and len(words[0]) >= 12 and zipf(words[0].lower()) < 1.0 and not _is_name_word(words[0])


def _lower_inside(value: str) -> bool:
    """A name's words are capitalised but for particles ("Ludwig van Beethoven"); "lub służby w organach" is a
    phrase of another language."""
    words = _WORD.findall(value)
    return len(words) >= 2 and any(w[:1].islower() and w.lower() not in _PARTICLES for w in words)


def not_a_person(text: str, start: int, end: int) -> bool:
    value = text[start:end]
    if any(c.isdigit() for c in value):
        return True
    words = _WORD.findall(value)
    if not words:
        return True
    if _TITLED.match(value) or any(_is_name_word(w) for w in words if w[:1].isupper()):
        return False  # "Mr F.L.", "Dr Okafor", "J. Doe": a title or an initial marks a person
    if all(w.islower() for w in words) and all(_common(w, 3.0) for w in words):
        return True
    if len(words) == 1 and words[0].isupper() and len(words[0]) <= 6:
        return True  # an acronym ("JSON", "API"), not a name
    if all(_common(w) for w in words):
        return True
    return len(words) == 1 and _sentence_start(text, start) and _common(words[0], COMMON_AT_START)




#: a legal text's division and its number ("Chapters 1-9", "Appendix II", "Section H", "paragraph III Nr. 6"): a
#: reference into a law, not a nationality, a place or a person
_DIVISION = (r"(?:Articles?|Chapters?|Sections?|Appendix|Appendices|Annex(?:es)?|Schedules?|Parts?|Paragraphs?|"
             r"Titles?|Books?|Rules?|Clauses?|Items?|Nr|Nos?)")
_DIVISION_HIT = re.compile(rf"{_DIVISION}\.?\s+(?:[IVXLC]+|\d+[a-z]?|\p{{Lu}})(?:\s*[-–,]\s*(?:[IVXLC]+|\d+))*(?:\s+{_DIVISION}\.?)?$")
_DIVISION_BEFORE = re.compile(rf"(?i)\b{_DIVISION}\.?\s+$")
_NUMBERING = re.compile(r"(?:[IVXLC]+|\d+)(?:\s+(?:Nr|No)\.?)?$")


#: the next sentence's first word after an initial's full stop ("the address of Mr J.S. Further, she claimed", "other
#: than Mr F.L. At the end of the meeting"): not part of the name
_NEXT_SENTENCE = re.compile(r"(?<=\p{Lu}\.)\s+(?:At|In|On|By|After|Before|Following|Further|Furthermore|However|"
                            r"Moreover|Subsequently|Thereafter|Then|Meanwhile|Finally|Accordingly|Also|The|This|That|"
                            r"These|He|She|It|They|We|His|Her|Their)$")


def legal_division(text: str, start: int, end: int) -> bool:
    """A division of a legal text with its number ("Chapters 1-9", "Appendix II"), or the number after one
    ("paragraph III Nr")."""
    value = text[start:end].strip()
    return _DIVISION_HIT.match(value) is not None or (_NUMBERING.match(value) is not None and
                                                       _DIVISION_BEFORE.search(text[max(0, start - 14): start]) is not None)


#: a heading's letter or number at the start of a line ("A. Criminal proceedings …", "C. Birth of the third
#: applicant"): it numbers a section; the word after it starts the heading, no one's initial and name
_LETTERED = re.compile(r"\p{Lu}\.[ \t]+(\p{Lu}\p{Ll}+)")


def lettered_heading(text: str, start: int, end: int) -> bool:
    m = _LETTERED.fullmatch(text, start, end)
    return m is not None and (start == 0 or text[start - 1] == "\n") and _common(m.group(1)) and \
        m.group(1).lower() not in known_names()


#: an office named by its title alone ("his Commanding Officer", "the Procurator General", "the Chief Building
#: Inspector", "Director of Legal Affairs"): a function in the story, like a body named by its function
_SAID_OF_BEFORE = re.compile(r"(?i)\b(?:am|is|are|was|were|be|been|being|became|become|becomes|as|named|appointed)\s+"
                             r"(?:an?\s+|the\s+|his\s+|her\s+|their\s+|its\s+|my\s+|our\s+)?$")


def office_title(text: str, start: int, end: int) -> bool:
    """An ORGANIZATION hit that is an office's title: an office word ("Officer", "Inspector", "General"), the other
    words ordinary English or a public body's vocabulary, no specialised field, name or nationality, and not said of
    someone ("he was appointed Chief Inspector")."""
    words = [w for w in _WORD.findall(text[start:end]) if w.lower() not in _STOP]
    if not words or not any(w.lower() in _OFFICE_TITLES for w in words) or _SAID_OF_BEFORE.search(text[max(0, start - 30): start]):
        return False
    for w in words:
        low = w.lower()
        if low in SPECIALISED or _nationality(w) or _is_name_word(w) and low not in _OFFICE_TITLES:
            return False
        if low not in _OFFICE_TITLES and low not in INSTITUTION_WORDS and low not in INSTITUTION_HEADS and not _common(w, 3.5):
            return False
    return True


#: a law's name ("the Military Service Act", "the Brussels I Regulation", "the German Unification Treaty", "the Act on
#: the Legal Status of Registered Religious Communities"): a public text, the same for everyone it applies to
_LAW_NAME = re.compile(r"(?i)\b(?:Act|Acts|Code|Law|Regulations?|Ordinance|Decree|Statute|Treaty|Convention|"
                       r"Constitution|Charter|Protocol)(?:\s+(?:of\s+)?\d{4})?$")
_LAW_OF_BEFORE = re.compile(r"(?i)\b(?:Act|Law|Convention|Treaty|Regulation|Code|Decree|Ordinance)\s+(?:\d{4}\s+)?(?:on|of|for)"
                            r"\s+(?:the\s+)?$")


_LAW_HEAD_AFTER = re.compile(r"[ \t]+(?:Act|Acts|Code|Law|Regulations?|Ordinance|Decree|Statute|Treaty)\b")


def law_name(text: str, start: int, end: int) -> bool:
    """An ORGANIZATION hit that is a law's name: it ends in a law's head word (and year), follows "Act on the", or
    is followed by the head word ("the Military Service| Act")."""
    return _LAW_NAME.search(text[start:end]) is not None or _LAW_OF_BEFORE.search(text[max(0, start - 30): start]) is not None \
        or _LAW_HEAD_AFTER.match(text, end) is not None


#: the bodies of criminal justice after the court: a prison's, the parole board's, the probation service's field
#: ("the Parole Board", "the Prison Service", "the Probation Service") is the criminal process every criminal case
#: goes through, as the criminal court's and the prosecutor's ("criminal", "police", "prosecutor" are no specialised
#: field either); named by its function alone such a body is the setting, an institution's name, not the person's
#: affair. A named one keeps its span ("Wronki Prison", "the Warsaw Remand Centre Penitentiary Commission")
_CRIMINAL_JUSTICE = frozenset({"prison", "prisons", "penitentiary", "probation", "parole"})
#: the fields that say what a person's affair is about (institutions.SPECIALISED but criminal justice's)
_AFFAIR_FIELDS = frozenset(SPECIALISED - _CRIMINAL_JUSTICE)


def generic_institution(value: str) -> bool:
    words = [w for w in _WORD.findall(value) if w.lower() not in _STOP]
    if not words:
        return True
    if len(words) == 1:  # "the Government", "the Municipalities"
        w = words[0].lower()
        singular = w[:-3] + "y" if w.endswith("ies") else w.removesuffix("s")
        return bool({w, singular} & (INSTITUTION_HEADS | INSTITUTION_WORDS))
    if not any(w.lower() in INSTITUTION_HEADS for w in words):
        # a public body's field named alone, of its vocabulary only ("Director of Legal Affairs", "Foreign Affairs")
        return len(words) <= 3 and all(w.lower() in INSTITUTION_WORDS and w.lower() not in _AFFAIR_FIELDS for w in words)
    # a body of a specialised field ("Social Insurance Authority", "Supreme Military Administrative Court",
    # "Ministry of Defence", "Employment Tribunal") tells what the person's affair is about: it stays (privacy
    # first); the state's general organs ("the Supreme Administrative Court", "the Court of Cassation", "the
    # Ministry of Foreign Affairs", "the Public Prosecutor") are the setting of any case
    if any(w.lower() in _AFFAIR_FIELDS for w in words):
        return False
    rest = [w for w in words if w.lower() not in INSTITUTION_HEADS and w.lower() not in INSTITUTION_WORDS
            and not w.isdigit() and not re.fullmatch(r"\d+(?:st|nd|rd|th)", w) and not _nationality(w)]
    return not rest or _country(" ".join(rest))


def heading(text: str, start: int, end: int) -> bool:
    """A heading: a line of its own, in capitals, of common English words ("THE FACTS", "THE LAW")."""
    words = _WORD.findall(text[start:end])
    line_a = text.rfind("\n", 0, start) + 1
    line_b = text.find("\n", end)
    line = text[line_a: len(text) if line_b < 0 else line_b]
    return bool(words) and all(w.isupper() and len(w) > 1 for w in words) and \
        all(_common(w, 3.5) for w in words) and line.strip() == line.strip().upper()


#: a birth date's label and a date in digits, all of a name's hit ("DOB 03/07/1949")
_BIRTH_DATE = re.compile(r"(?i)(?:d\.?o\.?b\.?|date of birth|born(?: on)?)\s{0,3}[:=-]?\s{0,3}"
                         r"\d{1,2}[./-]\d{1,2}[./-](?:\d{4}|\d{2})$")
#: the words before an employer: "work at", "employed at", "an intern at" (not "work for": that may be a person)
_WORKPLACE_BEFORE = re.compile(r"\b(?:work|works|worked|working|employed|intern|interning|internship|job|interview|"
                               r"interviewing|years|months|stint|career|role|position)\s+at\s+"
                               r"(?:\p{Lu}[\w&.'’-]*\s+(?:and|or|&)\s+|\p{Lu}[\w&.'’-]*,\s+)?$", re.I)


def keep(text: str, hit: Hit) -> Hit | None:
    """The hit (possibly trimmed) when it can be personal data, else None."""
    start, end, label, score = hit
    if label not in _RULED:
        return hit
    if start > 0 and text[start - 1] == "#" and label in ("PERSON", "ORGANIZATION", "LOCATION", "NRP", "USERNAME") \
            and not personal_hashtag(text[start:end]):
        return None
    greeted = label == "ORGANIZATION" and _GREETING.match(text, start, end) is not None
    t = trim(text, start, end, label)
    if t is None:
        return None
    start, end = t
    value = text[start:end]
    if greeted and _TITLED.match(value):
        label = "PERSON"  # "Dear Mrs Hernandez" read as one organisation: a greeting addresses a person by title
    if label in ("PERSON", "ORGANIZATION", "LOCATION", "NRP") and (heading(text, start, end) or
                                                                   lettered_heading(text, start, end) or
                                                                   legal_division(text, start, end)):
        return None  # "THE FACTS", "A. Criminal proceedings", "Chapters 1-9", "Appendix II": a text's structure
    if label == "ORGANIZATION" and law_name(text, start, end):
        return None  # "the Military Service Act": a law, public
    if label == "ORGANIZATION" and office_title(text, start, end):
        return None  # "his Commanding Officer", "the Procurator General": a function, not a body or a person
    if label in ("PERSON", "LOCATION") and _WORKPLACE_BEFORE.search(text, max(0, start - 50), start) and \
            not re.match(r"['’]s\b", text[end:end + 3]) and (label == "PERSON" or (
                " " not in value.strip() and not _country(value))):
        label = "ORGANIZATION"  # "I work at Monzo", "a job interview at Shopify", "8 years at Deliveroo and Ocado":
        # where someone works is an employer (not "at Luigi's"; a one-word place only: "work at Heathrow")
    if label == "PERSON":
        m = _NEXT_SENTENCE.search(value)
        if m:
            end = start + m.start()
            value = text[start:end]
    if label == "PERSON" and (not_a_person(text, start, end) or _gloss(text, start, end) or _lower_inside(value)
                              or _foreign_gloss(text, start, end)):
        return None
    if label in ("PERSON", "ORGANIZATION", "LOCATION") and _names_a_value(text, start, end):
        return None
    if label in ("ORGANIZATION", "LOCATION") and not _country(value) and generic_institution(value):
        return None
    if label == "LOCATION" and _country(value) and _FACT_ABOUT.search(text[max(0, start - 40): start]):
        return None  # "the capital of France": the fact a question is about; elsewhere a country stays personal
    if label in ("LOCATION", "ORGANIZATION") and _country(value) and state_actor(text, start, end):
        return None  # "against the Republic of Turkey", "United Kingdom law": the state, not where someone is
    if label in ("ORGANIZATION", "LOCATION", "NRP", "PERSON") and _BIRTH_DATE.match(value):
        return None  # "DOB 03/07/1949" typed an organisation: the birth date's recognizer reads it
    if label == "NRP" and any(c.isdigit() for c in value):
        return None  # "INV-20931", "SMITH712035JD9AB": a code, never a people or a faith (the code rules read it)
    if label == "NRP" and _nationality(value) and not _is_name_word(value) and not _of_a_person(text, start, end):
        return None
    if label in ("ORGANIZATION", "LOCATION", "NRP") and not any(c.isupper() for c in value) and \
            not (label == "NRP" and _ETHNIC_PERSON.fullmatch(value)):
        return None  # "inter alia", "the city": a name is capitalised (a people's colour, "a black woman", is not)
    if label == "MEDICAL_CONDITION" and _SCHEME_AFTER.match(text[end:end + 30]):
        return None  # "disability pension", "sickness benefit": a scheme, not the person's condition
    if label in ("CASE_NUMBER", "DATE", "QUANTITY") and cited(text, start):
        return None  # another case's number or date: public case law (citations.py), unless it may be the person's own
    if label == "ORGANIZATION" and reporter(value):
        return None  # "Reports of Judgments and Decisions": where judgments are printed
    if label == "DATE" and law_date(text, start, end):
        return None
    if label == "OCCUPATION":
        words = [w.lower() for w in _WORD.findall(value)]
        plural = len(words) <= 2 and words[-1].endswith("s") and not words[-1].endswith("ss")
        before = text[max(0, start - 20): start]
        if words and (words[-1] in _PERSON_NOUN_ROLES and (_ROLE_OF.search(before) or _ENGAGED.search(before) or
                                                          _PRACTISING.match(text, end)) or
                      plural and _GROUP_BEFORE.search(before) and not _IS_BEFORE.search(before)):
            return None  # a group ("teachers") unless it is said of someone ("we are both architects"); a party's
            # role ("his lawyer", "the judge"), not "X, a lawyer practising in Ankara" (what someone is)
        before = text[max(0, start - 40): start]
        if words and _WORD.findall(value)[-1].islower() and _FUNCTION_OF.search(before) and not _SAID_OF.search(before) \
                and not _PARTY_BESIDE.match(text, end) and not _stated_job(text, words[-1]) and not is_livelihood(value):
            return None  # "a meeting with the school counsellor": a function in the story, not someone's job (a
            # livelihood, "the reindeer herding right", is a trade, never a function someone fills)
    if label == "FAMILY" and _GROUP_AFTER.match(text, end) and " " not in value.strip():
        return None  # "married men but not married women", "widowed persons": a group the law speaks of
    if label == "QUANTITY" and value.lower() in _NUMBER_WORDS:
        return None
    if label == "AMOUNT" and not re.search(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|hundred|"
                                           r"thousand|million|billion)\b", value, re.I):
        return None
    return start, end, label, score


_RULED = {"PERSON", "ORGANIZATION", "LOCATION", "NRP", "OCCUPATION", "QUANTITY", "AMOUNT", "FAMILY", "USERNAME", "DATE", "CASE_NUMBER",
          "MEDICAL_CONDITION"}


def filter_hits(text: str, hits: list[Hit]) -> list[Hit]:
    out = []
    for h in hits:
        k = keep(text, h)
        if k is not None:
            out.append(k)
    return out

"""The vocabulary of public bodies: the words that say what kind of body a name is (its head: "Court",
"Ministry"), its rank or field ("Supreme", "Administrative", "Labour"), never its place or name.

Also the date of a law (`law_date`: "the 1998 Act", "Law no. 4126 of 27 October 1995", a date a law came into
force), which is no one's date. Shared by the NER hit filter (extract/hit_filter.py: an institution named only by its function is the setting of
any case, not personal data) and the anonymizer's generalization (anonymize/generalize.py: a named body keeps
these words and loses its name, "the Warsaw Regional Court" → "the [LOCATION] Regional Court").
"""

from __future__ import annotations

import regex as re

INSTITUTION_HEADS = {
    "court", "courts", "tribunal", "government", "governments", "ministry", "minister", "chamber", "section",
    "commission", "commissioner", "board", "office", "prosecutor", "prosecutors", "parliament", "republic",
    "kingdom", "state", "states", "treasury", "council", "committee", "department", "agency", "authority",
    "authorities", "assembly", "house", "lords", "commons", "police", "army", "service", "services", "convention",
    "union", "administration", "inspectorate", "ombudsman", "registry", "registrar", "directorate", "cabinet",
    "senate", "congress", "judiciary", "bar", "embassy", "consulate", "municipality", "prefecture", "governor",
    "presidency", "president", "secretariat", "procuracy", "prosecution", "gendarmerie", "rules", "law", "act",
    "code", "protocol", "charter", "treaty", "constitution", "division", "bench", "panel", "grand",
}

#: what qualifies an institution by its function or rank, never by its place or name
INSTITUTION_WORDS = {
    "supreme", "administrative", "military", "constitutional", "federal", "regional", "district", "high", "higher",
    "appeal", "appeals", "cassation", "instance", "criminal", "civil", "public", "principal", "chief", "general",
    "national", "local", "labour", "labor", "social", "security", "foreign", "affairs", "interior", "internal",
    "justice", "defence", "defense", "finance", "financial", "health", "education", "european", "international",
    "human", "rights", "immigration", "magistrates", "magistrates’", "magistrates'", "county", "provincial",
    "municipal", "assize", "assizes", "crown", "youth", "family", "juvenile", "penal", "penitentiary", "enforcement",
    "central", "lower", "upper", "superior", "ordinary", "special", "disciplinary", "martial", "tax", "customs",
    "commercial", "economic", "economy", "trade", "industry", "agriculture", "environment", "transport", "welfare",
    "pensions", "pension", "insurance", "employment", "work", "legal", "aid", "freedoms", "fundamental",
    "protection", "protocol", "procedure", "first", "second", "third", "fourth", "fifth", "sixth", "seventh",
    "eighth", "ninth", "tenth", "grand", "united", "nations", "council", "europe", "secretary", "deputy", "acting",
    "attorney", "solicitor", "advocate", "advocate-general", "prosecutor", "prosecutor’s", "prosecutor's",
    "state", "government", "office", "commonwealth", "federation", "union", "community", "communities",
    "parliamentary", "legislative", "executive", "judicial", "electoral", "election", "elections", "audit",
    "statistics", "statistical", "registration", "land", "lands", "surveys", "planning", "housing", "police",
    "roads", "highways", "motorways",
    "prison", "prisons", "probation", "parole", "review", "inquiry", "investigation", "investigations",
    "constitution", "treaty", "minister", "ministers", "president", "presidential", "prime", "cabinet",
}

#: the field of a specialised body: it says what the person's affair is about (their job, health, pension,
#: military service, school …), so a body named by it is a quasi-identifier, not the setting
SPECIALISED = {
    "military", "martial", "army", "labour", "labor", "insurance", "health", "education", "employment", "defence",
    "defense", "pension", "pensions", "welfare", "social", "tax", "customs", "agriculture", "housing", "prison",
    "prisons", "penitentiary", "probation", "parole", "youth", "juvenile", "family", "commercial", "trade", "industry",
    "transport", "environment", "land", "lands", "audit", "electoral", "election", "elections", "finance",
    "consulate", "embassy", "university", "school",
}


#: the date of a law, not of anyone's life: a year in a law's name ("the 1998 Act", "Terrorism Act 1991"), the date
#: of a numbered law ("Law no. 4126 of 27 October 1995"), a date a law came into force; a law's number ("Law no.
#: 3713") is no year; a century is no one's date
_LAW_HEADS = r"(?:Act|Acts|Law|Code|Ordinance|Regulations?|Decree|Constitution|Convention|Protocol|Statute|Treaty)"
_LAW_AFTER = re.compile(rf"[ \t]+(?:\p{{Lu}}[\p{{L}}\-]+[ \t]+){{0,3}}{_LAW_HEADS}\b")
_LAW_BEFORE = re.compile(rf"(?:\b{_LAW_HEADS}|\p{{Ll}}gesetz\w*|\bno\.\s*\d+(?:/\d+)?\s+of)[ \t]*,?[ \t]*$")
_NUMBER_OF = re.compile(rf"\b{_LAW_HEADS}\s+(?:no|No|nos|Nos|number)\.?\s*$")
_IN_FORCE_AFTER = re.compile(r"(?i)(?:[^.;\n]|\.(?=\s*\d)){0,100}?\b(?:came|come|comes|entered|enters|enter)\s+into\s+force\b")
_IN_FORCE_BEFORE = re.compile(r"(?i)(?:into\s+force|in\s+force\s+(?:since|from)|Official\s+Gazette)\s+(?:on|of|from)\s+$")
_CENTURY = re.compile(r"(?i)^(?:the\s+)?(?:(?:early|mid|late|end\s+of\s+the|beginning\s+of\s+the)[\s-]+)?\d{1,2}(?:st|nd|rd|th)"
                      r"(?:(?:,\s*|\s+and\s+|\s*-\s*)\d{1,2}(?:st|nd|rd|th))*\s+centur(?:y|ies)$")


#: the date a court reorganised itself ("On 1 November 2001 the Court changed the composition of its Sections", "As
#: from 1 November 2001 the application was reallocated to the First Section"): the same date in every case then
#: pending, no one's
_ORGANISATION_AFTER = re.compile(r"(?i),?\s+(?:the\s+)?(?:Court|Commission|Chamber|Tribunal)\s+(?:changed|modified|"
                                 r"amended|reorganised|reorganized)\s+(?:the\s+)?composition\b|,?\s+the\s+"
                                 r"(?:application|case)\s+was\s+(?:re)?(?:allocated|assigned|transferred)\s+to\s+"
                                 r"the\s+\w+\s+Section\b")
#: the date of another case's judgment cited in parentheses ("Karayiğit v. Turkey ((dec.), no. 45874/05, 23 September
#: 2008)", "(judgment of 17 December 1996, Reports of Judgments and Decisions 1996-VI)"): case law, not this person's
_CITED_BEFORE = re.compile(r"\bv\.\s+(?:the\s+)?\p{Lu}[^\n;()]{0,60}?\(\(?(?:dec\.\)\s*,?\s*)?[^()\n]{0,80}$")
_CITED_AFTER = re.compile(r",?\s*(?:Reports\s+of\s+Judgments|Series\s+A\b|ECHR\s+\d{4})")
_CITED_OPEN = re.compile(r"\((?:(?:judgment|decision)\s+of\s+)?$")


#: a duration the law sets: a time-limit ("within the ten-day time-limit laid down in Article 498", "the statutory
#: six-month time-limit", "within thirty days"), the same for anyone the rule applies to
_DURATION = re.compile(r"(?i)(?:\d+|[a-z]+)(?:[\s-](?:and\s+a\s+half|[a-z]+))?[\s-](?:years?|months?|weeks?|days?|hours?)$")
_LIMIT_AFTER = re.compile(r"(?i)[’']?s?\s*(?:statutory\s+)?(?:time[\s-]limits?|limitation\s+periods?|deadlines?|"
                          r"periods?\s+(?:prescribed|laid\s+down|provided|set|allowed|granted|of\s+limitation))\b")
_WITHIN_BEFORE = re.compile(r"(?i)\b(?:within|no\s+later\s+than|not\s+later\s+than)\s+(?:the\s+)?(?:statutory\s+|"
                            r"prescribed\s+|required\s+)?(?:period\s+of\s+)?$")


def law_date(text: str, start: int, end: int) -> bool:
    """Is the DATE at text[start:end] a law's (its name's year, its date, its entry into force, a time-limit it
    sets), a century, the date a court reorganised itself or that of a judgment cited as case law?"""
    value = text[start:end].strip()
    if _CENTURY.match(value) or _ORGANISATION_AFTER.match(text, end):
        return True
    if _DURATION.search(value) and (_LIMIT_AFTER.match(text, end) or _WITHIN_BEFORE.search(text[max(0, start - 40): start])):
        return True
    before = text[max(0, start - 200): start]
    if _CITED_BEFORE.search(before) or (_CITED_OPEN.search(text[max(0, start - 20): start])
                                       and _CITED_AFTER.match(text, end)):
        return True
    year = re.fullmatch(r"\d{4}", value) is not None
    before = text[max(0, start - 40): start]
    if year and (_LAW_AFTER.match(text, end) or _NUMBER_OF.search(before)):
        return True
    if _LAW_BEFORE.search(before) and (year or _LAW_BEFORE.search(before).group().startswith("no")):
        return True
    return bool(_IN_FORCE_BEFORE.search(before) or _IN_FORCE_AFTER.match(text, end))

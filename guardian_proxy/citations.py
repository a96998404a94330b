"""Case-law citations: "(see Smith v. Turkey, no. 12345/05, § 40, 12 May 2008)", "Stec and Others v. the United
Kingdom [GC], nos. 65731/01 and 65900/01", "Zumtobel v. Austria judgment (of 21 September 1993, Series A no. 268-A)".
Another case cited by its parties is public case law: its application numbers, dates and the series it is printed in
name that case, not the person the text is about.

Shared by the NER hit filter (extract/hit_filter.py: a CASE_NUMBER, DATE or QUANTITY hit inside a citation is no
span) and the anonymizer's residue scan (anonymize/residue.py: a cited case's number is no code cue at L4), which may
not import each other's stage.

One exception keeps privacy first: a cited case whose party carries a name the text also uses outside the citation
("Könkämä and 38 Other Sami Villages v. Sweden" in a text about Sami villages) may be the person's own earlier case;
its parts are not treated as public.
"""

from __future__ import annotations

from functools import lru_cache

import regex as re

#: a citation opens: "v. the United Kingdom", "see Smith v."
_CITATION = re.compile(r"(?:\bv\.\s+(?:the\s+)?\p{Lu}|\bsee,?\s+(?:among\s+other\s+authorities,?\s+)?"
                       r"(?:mutatis\s+mutandis,?\s+)?\p{Lu}\S*\s+v\.)")
#: what a case-law reference holds after its parties ("Smith v. Turkey ((dec.), no. 45874/05, § 40, 5 July 2007)",
#: "Stec and Others v. the United Kingdom [GC], nos. 65731/01 and 65900/01, 12 April 2006", "(judgment of 17
#: December 1996, Reports of Judgments and Decisions 1996-VI)", "Series A no. 268-A", "Decisions and Reports 87"):
#: the reporter's marks, the application numbers, paragraphs, dates and the series it is printed in, with their
#: brackets and commas
_CITED_PARTS = re.compile(r"\[GC\]|\(dec\.\)|\bdec\.|\bnos?\.|\d+/\d+|\band\b|§+\s*\d+(?:-\d+)?|"
                          r"\d{1,2}\s+\p{L}+\s+\d{4}|\b(?:ECHR|Reports(?:\s+of\s+Judgments\s+and\s+Decisions)?|"
                          r"Decisions\s+and\s+Reports|Series\s+A)\b\s*(?:no\.\s*)?\d*(?:-[IVX]+|-[A-Z]\b)?|"
                          r"\b(?:judgment|decision|Commission|of)\b|[()\[\],;\s]")
#: the respondent of a cited case right after "v.": a capitalised name, possibly joined by "of"/"and"
_RESPONDENT = re.compile(r"\bv\.\s+(?:the\s+)?\p{Lu}[\p{L}’'.-]*(?:\s+(?:(?:of|and)\s+(?:the\s+)?)?\p{Lu}[\p{L}’'.-]*)*")
#: the applicant's side right before " v.": capitalised names, initials, "and (38) Others"
_PARTY = re.compile(r"((?:(?:\p{Lu}[\p{L}’'.-]*|and|\d+)\s+)*\p{Lu}[\p{L}’'.-]*)\s+v\.\s*$")
_NAME_WORD = re.compile(r"\p{Lu}[\p{L}’'-]{2,}")
_NOT_A_NAME = {"others", "other", "and"}
#: the party's own names are searched for beyond this window around the "v."
_OWN_WINDOW = 200


def _open_bracket(before: str) -> int:
    """Where the parenthesis around the end of `before` opens (balanced inner groups skipped: "((dec.), no. …"),
    or -1; a line break ends the search."""
    depth = 0
    for i in range(len(before) - 1, -1, -1):
        c = before[i]
        if c == "\n":
            return -1
        if c == ")":
            depth += 1
        elif c == "(":
            if depth == 0:
                return i
            depth -= 1
    return -1


def _versus(text: str, start: int) -> int | None:
    """The position of the " v." of the citation the value at `start` belongs to, or None: inside a parenthesis that
    holds an earlier "X v. Y" reference ("(see Smith v. Turkey, no. …)"), or in the reference's own parts right after
    its parties ("Smith v. Turkey ((dec.), no. 45874/05, 5 July 2007)"), within 160 characters."""
    base = max(0, start - 160)
    before = text[base: start]
    opened = _open_bracket(before)
    if opened >= 0:
        m = _CITATION.search(before, opened)
        if m is not None:
            v = before.find("v.", m.start())
            return base + v if v >= 0 else None
    found = list(_RESPONDENT.finditer(before))
    if found and "\n" not in before[found[-1].end():] and not _CITED_PARTS.sub("", before[found[-1].end():]):
        return base + found[-1].start()
    return None


@lru_cache(maxsize=4096)
def _rare(word: str) -> bool:
    from wordfreq import zipf_frequency

    return zipf_frequency(word.lower(), "en") < 4.5


def own_case(text: str, v: int) -> bool:
    """Does the party before the " v." at `v` carry a name (a rare capitalised word: "Sami", "Könkämä", not "Others")
    that the text also uses away from this citation? Then the cited case may be the person's own."""
    m = _PARTY.search(text, max(0, v - 80), v + 2)
    if m is None:
        return False
    a = m.start()
    for w in _NAME_WORD.findall(m.group(1)):
        if w.lower() in _NOT_A_NAME or not _rare(w):
            continue
        for o in re.finditer(r"(?<!\w)" + re.escape(w) + r"(?!\w)", text):
            if o.start() < a - _OWN_WINDOW or o.start() > v + _OWN_WINDOW:
                return True
    return False


#: a law report's or a series' own name: where a judgment is printed, no one's organisation
_REPORTER = re.compile(r"(?i)(?:the\s+)?(?:Reports\s+of\s+Judgments\s+and\s+Decisions|Decisions\s+and\s+Reports|"
                       r"Collection\s+of\s+Decisions|Series\s+A)")


def reporter(value: str) -> bool:
    """Is `value` the name of a law report ("Reports of Judgments and Decisions", "Decisions and Reports")?"""
    return _REPORTER.fullmatch(value.strip()) is not None


def cited(text: str, start: int) -> bool:
    """Is the value at text[start:] part of a citation of another case (public case law), not the person's own?"""
    v = _versus(text, start)
    return v is not None and not own_case(text, v)

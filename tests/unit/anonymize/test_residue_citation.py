"""The residue scan (anonymize/residue.py) reads a cited case's application number as case law, not as a code cue:
at L4 "Karayiğit v. Turkey ((dec.), no. 45874/05, …)" was hidden and escalated the rewrite; the person's own
application and file numbers stay cues."""

from __future__ import annotations

from guardian_proxy.anonymize.residue import scan


def _codes(text: str) -> list[str]:
    return [c.value for c in scan(text) if c.kind == "code"]


def test_a_cited_cases_number_is_no_code_cue():
    text = "The relevant law is set out in Karayiğit v. Turkey ((dec.), no. 45874/05, 23 September 2008). In particular"
    assert _codes(text) == []
    text = "Zumtobel v. Austria judgment (of 21 September 1993, Series A no. 268-A), the Constitutional Court held"
    assert _codes(text) == []


def test_the_persons_own_numbers_stay_code_cues():
    text = ("The case originated in an application (no. 18403/91) against the Republic of Turkey. As in Smith v. "
            "Turkey, the applicant's plot no. 119/5 was registered.")
    assert _codes(text) == ["18403/91", "119/5"]

"""Case-law citations (guardian_proxy/citations.py): another case cited by its parties is public case law, its
numbers and dates name that case; a cited party the text also names elsewhere may be the person's own case."""

from __future__ import annotations

import pytest

from guardian_proxy.citations import cited, own_case, reporter

KARAYIGIT = "the decision of Karayiğit v. Turkey ((dec.), no. 45874/05, 23 September 2008). In particular, Article 52"
ZUMTOBEL = "referring to the Court’s Zumtobel v. Austria judgment (of 21 September 1993, Series A no. 268-A), the Court"
SAUNDERS = "in Saunders v. the United Kingdom (judgment of 17 December 1996, Reports of Judgments and Decisions 1996-VI) and"
STEC = "in Stec and Others v. the United Kingdom [GC], nos. 65731/01 and 65900/01, 12 April 2006), the applicant"


@pytest.mark.parametrize("text,value", [
    (KARAYIGIT, "45874/05"), (KARAYIGIT, "23 September 2008"), (ZUMTOBEL, "268-A"), (SAUNDERS, "1996-VI"),
    (STEC, "65900/01"), ("(see, mutatis mutandis, Smith v. Turkey, no. 1234/05, § 40)", "1234/05"),
])
def test_a_cited_cases_parts_are_public(text, value):
    assert cited(text, text.index(value))


@pytest.mark.parametrize("text,value", [
    ("The case originated in an application (no. 18403/91) lodged on 31 May 1991.", "18403/91"),
    ("as in Smith v. Turkey. The applicant lodged application no. 1234/05 on 3 May 2001.", "1234/05"),
    (KARAYIGIT + " the applicant's file no. 2004/117 was", "2004/117"),
])
def test_the_persons_own_numbers_are_not_citations(text, value):
    assert not cited(text, text.index(value))


def test_a_cited_party_the_text_names_elsewhere_may_be_the_persons_own_case():
    filler = " The villages relied on custom." * 8
    text = ("The applicants are four Sami villages." + filler + " They have no legal status (see Könkämä and 38 Other "
            "Sami Villages v. Sweden, no. 27033/95, Commission decision of 25 November 1996)." + filler +
            " The Sami villages appealed.")
    assert own_case(text, text.index("v. Sweden"))
    assert not cited(text, text.index("27033/95"))
    # "Others" and the respondent's name say nothing of the party: Stec is named only in its citation
    assert not own_case(STEC + filler + " The United Kingdom and others replied.", STEC.index("v. the"))


def test_a_law_reports_name_is_no_organisation():
    assert reporter("Reports of Judgments and Decisions") and reporter("Decisions and Reports")
    assert not reporter("Reports Ltd") and not reporter("Supreme Court")

"""The dates that are no one's: a law's, a court's own organisation, a judgment cited as case law."""

from guardian_proxy.institutions import law_date


def at(text: str, value: str) -> bool:
    i = text.index(value)
    return law_date(text, i, i + len(value))


def test_the_date_a_court_reorganised_itself_is_no_ones():
    assert at("On 1 November 2001 the Court changed the composition of its Sections (Rule 25 § 1).", "1 November 2001")
    assert at("As from 1 November 2001 the application was reallocated to the First Section.", "1 November 2001")
    # what the court did in the applicant's case on a date is the case's date
    assert not at("On 1 November 2001 the Court declared the application admissible.", "1 November 2001")


def test_the_date_of_a_judgment_cited_as_case_law_is_no_ones():
    assert at("the decision of Karayiğit v. Turkey ((dec.), no. 45874/05, 23 September 2008). In", "23 September 2008")
    assert at("Saunders v. the United Kingdom (judgment of 17 December 1996, Reports of Judgments and Decisions 1996-VI)",
              "17 December 1996")
    assert not at("By a judgment of 17 December 1996 the District Court convicted the applicant.", "17 December 1996")
    assert not at("The applicant (born on 3 May 1960) lodged an appeal.", "3 May 1960")


def test_a_laws_date_and_a_century_stay_no_ones():
    assert at("under the Terrorism Act 1991 he was", "1991")
    assert at("Law no. 4126 of 27 October 1995 amended it", "27 October 1995")
    assert at("in the 19th century", "19th century")
    assert not at("He was born in 1991 in Ankara.", "1991")


def test_a_time_limit_the_law_sets_is_no_ones():
    assert at("he appealed within the ten-day time-limit laid down in Article 498", "ten-day")
    assert at("the Ministry did not decide within the statutory six-month time-limit", "six-month")
    assert at("to pay the court fees within thirty days for the proceedings to continue", "thirty days")
    assert not at("he was sentenced to seven years’ imprisonment", "seven years")
    assert not at("he had lived there for less than three years", "three years")


def test_a_public_body_for_roads_is_named_by_its_field():
    from guardian_proxy.extract.hit_filter import generic_institution

    assert generic_institution("General Directorate of National Roads and Highways")
    assert not generic_institution("Kielce Regional Directorate of State Roads")  # its place names it

"""extract/hit_filter.py: a named-entity hit is personal data, not a word (docs/design/extraction.md)."""

from __future__ import annotations

import pytest

from guardian_proxy.extract.hit_filter import filter_hits, keep


def _kept(text: str, value: str, label: str) -> str | None:
    a = text.index(value)
    k = keep(text, (a, a + len(value), label, 0.85))
    return None if k is None else text[k[0]:k[1]]


@pytest.mark.parametrize("text,value", [
    ("Respond in JSON with the answer.", "Respond"),          # an imperative at the start of a sentence
    ("Summarize the thread below.", "Summarize"),
    ("Hand the task off to agent2 when done.", "agent2"),      # an identifier with digits
    ("this is a test of the tool", "test"),                    # a lower-case common word
    ("Seller: Jeet\nLocation: Tirupati", "Seller"),            # a field label
    ("Blessed with a great family this year", "Blessed"),
    ("my app shows 'Hydration failed because the UI differs'", "Hydration"),  # a quotation's first word
])
def test_a_person_is_not_a_common_word_a_verb_or_an_identifier(text, value):
    assert _kept(text, value, "PERSON") is None


@pytest.mark.parametrize("text,value", [
    ("The applicant, Mrs Anna Evagorou Christou, lives in Nicosia.", "Mrs Anna Evagorou Christou"),
    ("Michael : Hey fellow techies, any idea?", "Michael"),   # a speaker that is a known first name
    ("It was signed by Mr F.L. on Monday.", "Mr F.L."),       # a title and initials
    ("Spending time with Piper and the kids.", "Piper"),
    ("Will Smith called yesterday.", "Will Smith"),
])
def test_names_stay_people(text, value):
    assert _kept(text, value, "PERSON") == value


def test_a_hit_running_across_fields_is_cut_at_the_separator():
    assert _kept("Seller: Patrick | Location for Pickup: Wellington", "Patrick | Location for Pickup",
                 "PERSON") == "Patrick"
    assert _kept("Name: VasuAdmin | Location: Lal Circle", "Name: VasuAdmin", "ORGANIZATION") == "VasuAdmin"


def test_articles_and_possessives_are_not_part_of_the_value():
    assert _kept("a decision of the Sarıkamış Magistrates’ Court as", "the Sarıkamış Magistrates’ Court",
                 "ORGANIZATION") == "Sarıkamış Magistrates’ Court"
    assert _kept("I borrowed Kathleen’s car", "Kathleen’s", "PERSON") == "Kathleen"


@pytest.mark.parametrize("value", ["the Supreme Administrative Court", "The Turkish Government",
                                   "the Ministry of Foreign Affairs", "the Court of Cassation",
                                   "the 5th Chamber of the Supreme Administrative Court", "Government"])
def test_institutions_named_by_their_function_are_kept(value):
    assert _kept(f"On appeal, {value} held that", value, "ORGANIZATION") is None


@pytest.mark.parametrize("value,expected", [("the Warsaw Regional Court", "Warsaw Regional Court"),
                                            ("Berlin Social Court", "Berlin Social Court"),
                                            ("Ibarra, Ramsey and Arroyo", "Ibarra, Ramsey and Arroyo")])
def test_named_institutions_and_firms_stay_personal_context(value, expected):
    assert _kept(f"He worked for {value} until", value, "ORGANIZATION") == expected


@pytest.mark.parametrize("value", ["the Social Insurance Authority", "the Supreme Military Administrative Court",
                                   "the Ministry of Defence", "the Employment Tribunal", "the Federal Labour Court"])
def test_a_specialised_body_says_what_the_affair_is_about_and_stays(value):
    # privacy first: the field of the body (insurance, military, employment …) is a quasi-identifier
    assert _kept(f"On appeal, {value} held that", value, "ORGANIZATION") == value[4:]


@pytest.mark.parametrize("value", ["The Parole Board", "the Prison Service", "the Probation Service",
                                   "the Penitentiary Administration"])
def test_a_criminal_justice_body_named_by_its_function_is_the_setting(value):
    # like a criminal court or the prosecutor: the criminal process, an institution's name, not the person's affair
    assert _kept(f"{value} refused the request of Mr Tomasz Wiśniewski.", value, "ORGANIZATION") is None


@pytest.mark.parametrize("value,expected", [("Wronki Prison", "Wronki Prison"),
                                            ("the Warsaw Remand Centre Penitentiary Commission",
                                             "Warsaw Remand Centre Penitentiary Commission")])
def test_a_named_prison_or_penitentiary_body_stays(value, expected):
    assert _kept(f"He was held by {value} until", value, "ORGANIZATION") == expected


def test_headings_and_value_field_names_are_not_organisations():
    assert _kept("PROCEDURE\n\nTHE FACTS\n\nThe applicant", "THE FACTS", "ORGANIZATION") is None
    assert _kept("my National ID CA-ID-7995726 seems wrong", "National ID", "ORGANIZATION") is None
    assert _kept("He joined NATO in 1999.", "NATO", "ORGANIZATION") == "NATO"  # not a line of its own


def test_a_country_is_dropped_only_as_the_topic_of_a_factual_question():
    assert _kept("What is the capital of France?", "France", "LOCATION") is None
    assert _kept("Tell me the population of the United States.", "United States", "LOCATION") is None
    # the state as an actor (its formal name, the respondent, its organs) is no one's place
    assert _kept("The case originated in an application against the Republic of Turkey lodged",
                 "the Republic of Turkey", "LOCATION") is None
    assert _kept("the Government of the United Kingdom replied", "the United Kingdom", "LOCATION") is None
    assert _kept("It was unlawful under United Kingdom law.", "United Kingdom", "LOCATION") is None
    assert _kept("the United Kingdom of Great Britain and Northern Ireland lodged", "Northern Ireland",
                 "LOCATION") is None
    # privacy first: where someone lives, goes or comes from, a country stays
    assert _kept("She moved to the United Kingdom in 1990.", "the United Kingdom", "LOCATION") == "United Kingdom"
    assert _kept("The applicant lives in Turkey with her family.", "Turkey", "LOCATION") == "Turkey"
    assert _kept("He was later deported to Turkey.", "Turkey", "LOCATION") == "Turkey"
    assert _kept("She was born in Kalogrea.", "Kalogrea", "LOCATION") == "Kalogrea"


def test_a_nationality_of_an_institution_is_context_of_a_person_is_not():
    assert _kept("The Turkish Government did not reply.", "Turkish", "NRP") is None
    assert _kept("by a Turkish national, Mr Uğur Çatak", "Turkish", "NRP") == "Turkish"


def test_group_and_role_nouns_are_not_occupations_of_the_person():
    assert _kept("Many teachers went on strike.", "teachers", "OCCUPATION") is None
    assert _kept("by two police officers at the station", "police officers", "OCCUPATION") is None
    assert _kept("the applicant's lawyer asked for", "lawyer", "OCCUPATION") is None  # a party's role
    assert _kept("The judge adjourned the hearing.", "judge", "OCCUPATION") is None


def test_what_someone_is_stays_an_occupation():
    # "the applicant, who is a lawyer" says what the person is; a bare plural may hint at the writer's own job
    assert _kept("the applicant, who is a lawyer, married", "lawyer", "OCCUPATION") == "lawyer"
    assert _kept("the applicant, a lawyer and member of the board", "lawyer", "OCCUPATION") == "lawyer"
    # a representative's capacity is not
    assert _kept("represented by Mr A., a lawyer practising in Nicosia", "lawyer", "OCCUPATION") is None
    assert _kept("Ideal for photographers & architects alike.", "photographers", "OCCUPATION") == "photographers"
    assert _kept("Ideal for budding nurses or professionals.", "nurses", "OCCUPATION") == "nurses"
    assert _kept("She worked as a ballet dancer in Oslo.", "ballet dancer", "OCCUPATION") == "ballet dancer"


def test_a_livelihood_after_the_is_a_trade_not_a_function():
    # "the school counsellor" is a function in the story; "the reindeer herding right" names the trade itself
    assert _kept("a meeting with the school counsellor", "school counsellor", "OCCUPATION") is None
    assert _kept("the reindeer herding right", "reindeer herding", "OCCUPATION") == "reindeer herding"


def test_bare_number_words_and_amounts_without_numbers():
    assert _kept("the two of them met", "two", "QUANTITY") is None
    assert _kept("she paid 40 kg of", "40 kg", "QUANTITY") == "40 kg"
    assert _kept("Great day ❤️ #Family", "❤️ #", "AMOUNT") is None


def test_hashtags_are_topics():
    assert _kept("Time with family #FamilyFirst", "FamilyFirst", "PERSON") is None


def test_filter_hits_keeps_other_entities_untouched():
    text = "Call 555-0100 now"
    assert filter_hits(text, [(5, 13, "PHONE_NUMBER", 0.8)]) == [(5, 13, "PHONE_NUMBER", 0.8)]


def test_a_nationality_is_personal_only_where_it_describes_a_person():
    assert _kept("the Turkish military troops evicted her", "Turkish", "NRP") is None
    assert _kept("under Polish law the claim", "Polish", "NRP") is None
    assert _kept("the applicant, who is of Kurdish origin, lives", "Kurdish", "NRP") == "Kurdish"
    # a code is never a people ("the invoice INV-20931" had become "the invoice Portuguese")
    assert _kept("yes, the invoice INV-20931 was paid", "INV-20931", "NRP") is None
    assert _kept("My husband is Nigerian and we live here", "Nigerian", "NRP") == "Nigerian"


def test_lower_case_organisations_and_lone_institution_words_are_not_names():
    assert _kept("the Court found, inter alia, that", "inter alia", "ORGANIZATION") is None
    assert _kept("the Federal Court", "Federal", "ORGANIZATION") is None


def test_a_condition_naming_a_scheme_is_not_the_persons_condition():
    assert _kept("she applied for a disability pension", "disability", "MEDICAL_CONDITION") is None
    assert _kept("she has a disability since birth", "disability", "MEDICAL_CONDITION") == "disability"


def test_numbers_and_dates_of_a_cited_case_are_public_references():
    text = "(see Smith v. the United Kingdom, no. 45874/05, § 40, 23 September 2008)"
    assert _kept(text, "45874/05", "CASE_NUMBER") is None
    assert _kept(text, "23 September 2008", "DATE") is None
    own = "The case originated in an application (no. 18403/91) lodged on 31 May 1991."
    assert _kept(own, "18403/91", "CASE_NUMBER") == "18403/91"
    assert _kept(own, "31 May 1991", "DATE") == "31 May 1991"


@pytest.mark.parametrize("text,value,label", [
    ("the decision of Karayiğit v. Turkey ((dec.), no. 45874/05, 23 September 2008). In", "45874/05", "CASE_NUMBER"),
    ("the decision of Karayiğit v. Turkey ((dec.), no. 45874/05, 23 September 2008). In", "23 September 2008",
     "DATE"),
    ("in Stec and Others v. the United Kingdom [GC], nos. 65731/01 and 65900/01, 12 April 2006), the",
     "65900/01", "CASE_NUMBER"),
    ("the case of S. and Marper v. the United Kingdom ([GC], nos. 30562/04 and 30566/04, ECHR 2008), the",
     "30566/04", "CASE_NUMBER"),
])
def test_a_cited_cases_own_parts_after_its_parties_are_public_references(text, value, label):
    assert _kept(text, value, label) is None


def test_a_reporters_name_and_a_cited_cases_parts_are_no_spans_unless_it_may_be_the_persons_own():
    text = "in Saunders v. the United Kingdom (judgment of 17 December 1996, Reports of Judgments and Decisions 1996-VI)"
    assert _kept(text, "Reports of Judgments and Decisions", "ORGANIZATION") is None
    assert _kept(text, "1996-VI", "CASE_NUMBER") is None
    assert _kept("nos. 30562/04 and 30566/04", "30566/04", "QUANTITY") == "30566/04"  # no citation: kept
    cite = "the case of S. and Marper v. the United Kingdom ([GC], nos. 30562/04 and 30566/04, ECHR 2008), the"
    assert _kept(cite, "30566/04", "QUANTITY") is None
    own = ("The applicants are Sami villages." + " They herd." * 30 + " (see Könkämä and 38 Other Sami Villages v. "
           "Sweden, no. 27033/95, 25 November 1996)." + " They herd." * 30 + " The Sami villages appealed.")
    assert _kept(own, "27033/95", "CASE_NUMBER") == "27033/95"


def test_after_a_cited_case_the_persons_own_numbers_and_dates_stay():
    text = "as in Smith v. Turkey. The applicant, born on 3 May 1970, lodged application no. 1234/05 (no. 777/06)."
    assert _kept(text, "1234/05", "CASE_NUMBER") == "1234/05"
    assert _kept(text, "3 May 1970", "DATE") == "3 May 1970"
    assert _kept(text, "777/06", "CASE_NUMBER") == "777/06"
    nested = "The applicant (born in 1970 (see the annex), no. 1234/05) complained."
    assert _kept(nested, "1234/05", "CASE_NUMBER") == "1234/05"


def test_a_very_common_word_that_is_only_a_surname_is_not_a_person():
    assert _kept("Under the Law of 1990 the claim", "Law", "PERSON") is None
    assert _kept("Mr Law said", "Mr Law", "PERSON") == "Mr Law"  # with a title it is one


def test_narrative_finds_sex_and_a_job_by_its_phrase():
    from guardian_proxy.extract.narrative import detect_quasi

    def found(text):
        return {(text[a:b], lab) for a, b, lab, _ in detect_quasi(text, None)}

    assert ("M", "GENDER") in found("Patient Ann Lee, sex: M, date of birth 01/02/1980")
    assert ("Female", "GENDER") in found("records for Ann Lee (Female), who moved")
    assert ("cabin crew", "OCCUPATION") in found("Bob works as a cabin crew and lives in Ohio.")
    assert not any(lab == "GENDER" for _, lab in found("Press M to open the menu (F for files)."))


def test_an_acronym_is_not_a_person_and_a_plural_said_of_someone_is_their_job():
    assert _kept("Respond only with JSON. Then stop.", "JSON", "PERSON") is None
    assert _kept("We are both architects in Leeds.", "architects", "OCCUPATION") == "architects"
    assert _kept("The architects approved the plan.", "architects", "OCCUPATION") is None


@pytest.mark.slow
def test_ner_on_instructions_finds_no_people_or_context_places():
    """The issue's AI-prompt cases, through the real spaCy/Presidio engine: "Respond", "test", the hand-off name
    "agent2" and the country a factual question is about are not personal data; a real name still is."""
    from guardian_proxy.extract.ner import NerEngine

    texts = ["Respond only with JSON. Then hand off to agent2 for the refund.",
             "What is the capital of France? Answer in one word.",
             "Summarize the test results below and list the failures.",
             "THE FACTS\n\nThe Turkish Government were represented by their Agent, Ms Y. Başara, a lawyer.",
             "Seller: Jeet | Location: Tirupati"]
    try:
        found = [{(t[a:b], lab) for a, b, lab, _ in hits} for t, hits in zip(texts, NerEngine().analyze(texts),
                                                                                 strict=True)]
    except OSError as e:  # the spaCy model is not installed here
        pytest.skip(str(e))
    people = {v for f in found for v, lab in f if lab == "PERSON"}
    assert not people & {"Respond", "agent2", "test", "JSON", "Seller", "Summarize"}
    assert ("France", "LOCATION") not in found[1]
    assert not any(lab == "ORGANIZATION" for _, lab in found[3])  # the heading, the Government
    assert ("Ms Y. Başara", "PERSON") in found[3]
    assert ("Tirupati", "LOCATION") in found[4]


def test_a_name_the_ner_calls_a_nationality_is_not_dropped():
    assert _kept("Ring twice, ask for Priya", "Priya", "NRP") == "Priya"


@pytest.mark.parametrize("text,found", [
    ("Dear Ms Smith, thank you.", False),      # a title before a name
    ("Ms. Jones will attend.", False),
    ("the request took 120 ms", False),        # a duration
    ("MS Word crashed again", False),          # capitals before a capitalised word
    ("I was diagnosed with MS two years ago", True),
    ("my MS flares up in summer", True),
    ("She has ALS.", True),
])
def test_a_condition_abbreviation_needs_its_own_reading(text, found):
    from guardian_proxy.extract.health import find

    hits = [text[a:b] for a, b, lab, _ in find(text) if lab == "MEDICAL_CONDITION"]
    assert bool(hits) is found


def test_propagation_spreads_names_and_nationalities_not_one_ordinary_word():
    from guardian_proxy.extract.detector import _propagate
    from guardian_proxy.types import Span, TextField

    text = "Ms Okafor, a Turkish national and a teacher, said Turkish law bars teacher unions; Okafor left."
    f = TextField(path="text:", text=text)

    def sp(value, entity, direct=False):
        i = text.index(value)
        return Span(path="text:", start=i, end=i + len(value), entity=entity, category="other", text=value,
                    direct=direct)

    got = {(s.text, s.start) for s in _propagate([f], [sp("Okafor", "PERSON", True), sp("Turkish", "NRP"),
                                                        sp("teacher", "OCCUPATION")])}
    # the name and the nationality are the same value where they recur (privacy first: "Turkish" left in
    # "Turkish law" would still say it); one ordinary lower-case word found once is not
    assert ("Okafor", text.rindex("Okafor")) in got
    assert ("Turkish", text.rindex("Turkish")) in got
    assert not any(v == "teacher" for v, _ in got)


def test_a_hashtag_of_the_writers_family_status_is_personal():
    assert _kept("Learning never stops. #FamilyFirst #SingleDad", "SingleDad", "PERSON") == "SingleDad"
    assert _kept("Learning never stops. #FamilyFirst #SingleDad", "FamilyFirst", "PERSON") is None
    assert _kept("Proud of my journey! #CareerGoals", "CareerGoals", "PERSON") is None


def test_a_laws_date_and_a_century_are_no_ones_date():
    assert _kept("under section 11 of the 1998 Act on the Legal Status", "1998", "DATE") is None
    assert _kept("the Prevention of Terrorism Act 1991 (hereinafter)", "1991", "DATE") is None
    assert _kept("By Law no. 5190 of 16 June 2004, published", "16 June 2004", "DATE") is None
    assert _kept("of the Prevention of Terrorism Act (Law no. 3713).", "3713", "DATE") is None
    assert _kept("transmitted to the Court on 1 November 1998, when Protocol No. 11 to the Convention came into "
                 "force", "1 November 1998", "DATE") is None
    assert _kept("The political nature of the 20th century", "20th century", "DATE") is None
    # a person's dates stay, and so does a property's registration number
    assert _kept("The applicant was born in 1925 and lives in Nicosia.", "1925", "DATE") == "1925"
    assert _kept("On 24 August 1999 the Court declared the application admissible.", "24 August 1999",
                 "DATE") == "24 August 1999"
    assert _kept("registered under registration no. 1057.", "1057", "DATE") == "1057"


def test_a_glossed_name_a_foreign_phrase_and_a_group_status_are_no_person_or_family():
    assert _kept("the Wrocław District Court (Sąd Rejonowy) decided", "Sąd Rejonowy", "PERSON") is None
    assert _kept("the Constitutional Court (Verfassungsgerichtshof). She", "Verfassungsgerichtshof", "PERSON") is None
    assert _kept("osób pełniących lub służby w organach bezpieczeństwa", "lub służby w organach", "PERSON") is None
    assert _kept("represented by Mr Ludwig van Beethoven, a lawyer", "Ludwig van Beethoven",
                 "PERSON") == "Ludwig van Beethoven"
    assert _kept("the applicant’s son (Mehmet Yilmaz) was", "Mehmet Yilmaz", "PERSON") == "Mehmet Yilmaz"
    assert _kept("Turkish law allowed married men but not married women to", "married", "FAMILY") is None
    assert _kept("The applicant is married and has two children.", "married", "FAMILY") == "married"


@pytest.mark.parametrize("text,value", [
    ("Reminder: Mr Brown has a meeting with the school counsellor at 15:30.", "counsellor"),
    ("the report by its accredited doctor, drawn up on the documents", "doctor"),
    ("Kudos to the writer for capturing that essence!", "writer"),
])
def test_a_job_after_the_or_a_possessive_is_a_function_in_the_story(text, value):
    assert _kept(text, value, "OCCUPATION") is None


@pytest.mark.parametrize("text,value", [
    ("He was the manager of the clinic.", "manager"),                                 # said of someone
    ("Mr Smith, the school counsellor, said no.", "counsellor"),                       # a name beside it
    ("the clinic and its manager, the applicant, was charged", "manager"),            # a party beside it
    ("She worked as a ballet dancer. Once the former dancer retired, she left.", "dancer"),  # stated elsewhere
    ("a protocol with the Mayor of Kuşadası", "Mayor"),                               # an office's title
])
def test_a_job_said_of_someone_stays_wherever_it_is_mentioned(text, value):
    a = text.rindex(value)
    assert keep(text, (a, a + len(value), "OCCUPATION", 0.65)) is not None


@pytest.mark.parametrize("text,value,label,kept", [
    ("concerned the period between 1 March and 31 December 1998.", "between 1 March and 31 December 1998", "DATE",
     "1 March and 31 December 1998"),
    ("a total of TRY 2,719 (approximately EUR 1,400 at the time)", "approximately EUR 1,400", "AMOUNT", "EUR 1,400"),
    ("Between 1956 and 1969 the River Board built a dam.", "Between 1956 and 1969", "DATE", "1956 and 1969"),
    ("He left some time ago.", "some time ago", "DATE", "some time ago"),   # no number after it: nothing to trim
])
def test_a_range_or_estimate_word_is_not_part_of_the_value(text, value, label, kept):
    assert _kept(text, value, label) == kept


@pytest.mark.parametrize("text,value,label", [
    ("and held that Chapters 1-9 of the Constitutional Law were not", "Chapters 1-9", "NRP"),
    ("The applicant relied on Chapters 5 and 6 of the Law", "Chapters 5", "LOCATION"),
    ("in conjunction with Appendix II, Chapter VIII, Section H, paragraph III Nr. 6 of the Treaty", "Appendix II",
     "PERSON"),
    ("in conjunction with Appendix II, Chapter VIII, Section H, paragraph III Nr. 6 of the Treaty", "III Nr", "PERSON"),
    ("in conjunction with Appendix II, Chapter VIII, Section H, paragraph III Nr. 6 of the Treaty", "Section H",
     "ORGANIZATION"),
    ("lives in Gdańsk.\nA. Criminal proceedings against the applicant", "A. Criminal", "PERSON"),
    ("was rejected.\nC. Birth of the third applicant", "C. Birth", "PERSON"),
])
def test_a_legal_texts_divisions_and_a_lettered_heading_are_structure_not_names(text, value, label):
    assert _kept(text, value, label) is None


def test_a_lettered_line_with_a_name_and_a_division_word_with_a_name_stay():
    assert _kept("lives in Gdańsk.\nA. Smith complained of it", "A. Smith", "PERSON") == "A. Smith"
    assert _kept("she met Parts Unlimited Ltd in Leeds", "Parts Unlimited Ltd", "ORGANIZATION") == "Parts Unlimited Ltd"


def test_the_next_sentences_first_word_is_not_part_of_an_initialled_name():
    text = "unable to find the exact address of Mr J.S. Further, she claimed that"
    assert _kept(text, "Mr J.S. Further", "PERSON") == "Mr J.S."
    assert _kept("backing candidates other than Mr F.L. At the end", "Mr F.L. At", "PERSON") == "Mr F.L."
    assert _kept("the address of Mr J. Young, she claimed", "Mr J. Young", "PERSON") == "Mr J. Young"


@pytest.mark.parametrize("text,value", [
    ("about his summary trial before his Commanding Officer.", "Commanding Officer"),
    ("written observations of the Procurator General on his plea", "Procurator General"),
    ("On 22 February 1995 the Chief Building Inspector allowed", "Chief Building Inspector"),
    ("Ms E. Belliard, Director of Legal Affairs, Ministry of Foreign Affairs", "Legal Affairs"),
])
def test_an_office_named_by_its_title_is_a_function(text, value):
    assert _kept(text, value, "ORGANIZATION") is None


@pytest.mark.parametrize("text,value", [
    ("He was appointed Chief Inspector of the force", "Chief Inspector"),
    ("She is Chief Marketing Officer at Acme", "Chief Marketing Officer"),
    ("a report of the Chief Education Officer", "Chief Education Officer"),
    ("He works for the Social Security Board", "Social Security Board"),
])
def test_an_office_said_of_someone_or_of_a_specialised_field_stays(text, value):
    assert _kept(text, value, "ORGANIZATION") == value


@pytest.mark.parametrize("text,value", [
    ("the protection of legitimate expectations (Vertrauensschutz) the allowance", "Vertrauensschutz"),
    ("the Act on Communities (Bundesgesetz über die Rechtspersönlichkeit von religiösen Bekenntnisgemeinschaften), the",
     "Rechtspersönlichkeit von"),
    ("a system of compensation (dualer Familienlastenausgleich). The", "Familienlastenausgleich"),
])
def test_a_phrase_of_another_language_glossing_the_words_before_is_no_person(text, value):
    assert _kept(text, value, "PERSON") is None


@pytest.mark.parametrize("text,value", [
    ("his wife (Anna Kowalska) complained", "Anna Kowalska"),
    ("the defendant (Wojciechowski) complained", "Wojciechowski"),
    ("the villages appealed to the Supreme Court (Högsta domstolen). At", "Högsta"),  # a body's name: _gloss's
])
def test_a_name_in_parentheses_stays_a_person(text, value):
    assert _kept(text, value, "PERSON") == value


def test_a_representative_engaged_without_a_name_is_a_role():
    assert _kept("the applicants, represented by a lawyer, submitted", "lawyer", "OCCUPATION") is None
    assert _kept("The applicant did not appoint a lawyer for his defence.", "lawyer", "OCCUPATION") is None
    assert _kept("the applicant, who is a lawyer, submitted", "lawyer", "OCCUPATION") == "lawyer"


@pytest.mark.parametrize("text,value", [
    ("under section 24(3) of the Military Service Act, it noted that", "Military Service Act"),
    ("courts were competent under the Brussels I Regulation (see paragraph 35)", "Brussels I Regulation"),
    ("paragraph III Nr. 6 of the German Unification Treaty. In December", "German Unification Treaty"),
    ("the 1998 Act on the Legal Status of Registered Religious Communities (the 1998 Act)",
     "Legal Status of Registered Religious Communities"),
    ("sections 134 (1) and 103 (2) of the Motor Vehicles Act 1967. The", "Motor Vehicles Act 1967"),
])
def test_a_laws_name_is_a_public_text_not_an_organisation(text, value):
    assert _kept(text, value, "ORGANIZATION") is None


@pytest.mark.parametrize("text,value", [
    ("He worked for Acme Code Ltd in Leeds", "Acme Code Ltd"),
    ("She joined the Law Society of Scotland in 2001", "Law Society of Scotland"),
])
def test_a_body_with_a_laws_word_in_its_name_stays(text, value):
    assert _kept(text, value, "ORGANIZATION") == value


def test_an_organisations_name_ends_where_its_unclosed_gloss_opens():
    text = "In 1992 the Health Care Reform Act (Gesundheitsstrukturgesetz) amended the Code"
    assert _kept(text, "Health Care Reform Act (Gesundheitsstrukturgesetz", "ORGANIZATION") is None  # a law's name
    text = "he lodged an appeal with the Warsaw Regional Court (Sąd Okręgowy) in 1999"
    assert _kept(text, "Warsaw Regional Court (", "ORGANIZATION") == "Warsaw Regional Court"
    assert _kept("the Acme Group (Holdings) Ltd paid", "Acme Group (Holdings) Ltd", "ORGANIZATION") == \
        "Acme Group (Holdings) Ltd"


def test_a_law_names_part_before_its_head_word_and_a_plural_public_body_are_no_organisations():
    text = "pursuant to section 24(8) of the Military Service Act (Wehrgesetz), as in force"
    assert _kept(text, "Military Service", "ORGANIZATION") is None
    assert _kept("the Regional Governor ordered the Municipalities to ask", "Municipalities", "ORGANIZATION") is None


def test_a_greeting_is_no_part_of_the_name_it_addresses():
    text = "Dear Mrs Hernandez, your appointment has been confirmed."
    a = text.index("Dear")
    assert keep(text, (a, a + len("Dear Mrs Hernandez"), "ORGANIZATION", 0.85)) == \
        (text.index("Mrs"), a + len("Dear Mrs Hernandez"), "PERSON", 0.85)
    assert _kept("Hello Anna Novak, thanks for the note.", "Hello Anna Novak", "PERSON") == "Anna Novak"
    # no title after the greeting: the hit keeps its type ("Dear Acme Support" may be a company)
    text = "Dear Northwind Traders, my order is late."
    k = keep(text, (0, len("Dear Northwind Traders"), "ORGANIZATION", 0.85))
    assert k is not None and text[k[0]:k[1]] == "Northwind Traders" and k[2] == "ORGANIZATION"


def test_where_someone_works_is_an_organisation():
    """"I work at Monzo" typed Monzo a person, and its stand-in was a given name ("I work at Cheryl")."""
    text = "I work at Monzo and my manager is kind"
    a = text.index("Monzo")
    assert keep(text, (a, a + 5, "PERSON", 0.85)) == (a, a + 5, "ORGANIZATION", 0.85)
    text = "we ate at Luigi's last night"
    a = text.index("Luigi")
    assert keep(text, (a, a + 5, "PERSON", 0.85))[2] == "PERSON"


def test_an_employer_named_after_at_is_an_organisation_whatever_ner_typed():
    """"a job interview at Shopify" (typed a place) had a city for a stand-in; "8 years at Deliveroo and Ocado"."""
    for text, value, label in [("a job interview at Shopify next Tuesday", "Shopify", "LOCATION"),
                               ("8 years at Deliveroo and Ocado building pipelines", "Ocado", "LOCATION")]:
        a = text.index(value)
        assert keep(text, (a, a + len(value), label, 0.85))[2] == "ORGANIZATION", text
    text = "we worked at London Bridge station"  # a place of two words stays a place
    a = text.index("London Bridge")
    assert keep(text, (a, a + 13, "LOCATION", 0.85))[2] == "LOCATION"


def test_a_date_inside_a_name_is_no_name():
    """"DOB 03/07/1949" typed an organisation hid the birth date from the date recognizers."""
    text = "Lab results for my dad (Gerhard Huber, DOB 03/07/1949):"
    a = text.index("DOB")
    assert keep(text, (a, a + 14, "ORGANIZATION", 0.85)) is None

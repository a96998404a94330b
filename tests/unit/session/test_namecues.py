"""guardian_proxy/session/namecues.py: what the words around a name say it is (the chat session's rules run through
PartContext in test_context.py; these are the cues alone)."""

from guardian_proxy.session.namecues import channel, code_product, ordinary, person_by_cue, product, work_name
from guardian_proxy.session.rewrite import Hit


def hit(text: str, value: str, entity: str = "PERSON") -> Hit:
    start = text.index(value)
    return Hit(0, start, start + len(value), entity, value)


def test_ordinary_words_are_not_names_unless_also_names():
    assert ordinary("Respond") and ordinary("test") and not ordinary("Grace") and not ordinary("Zarkowsky")


def test_product_cues():
    for text, value in [("How does Kotlin's coroutine scope cancel jobs?", "Kotlin"),
                        ("the difference between Kafka consumer groups and partitions", "Kafka"),("my Django app crashes", "Django"), ("Docker's COPY and ADD", "Docker"),
                        ("Jenkins 2.401.1 fails", "Jenkins"), ("push to a Vec", "Vec"),
                        ("'Gradle task assembleDebug failed'", "Gradle")]:
        assert product(text, hit(text, value)), text
    for text, value in [("send Tom Baker documentation", "Tom Baker"), ("Priya logs in", "Priya"),
                        ("Give Anna 2 apples", "Anna")]:
        assert not product(text, hit(text, value)), text


def test_work_cues():
    text = "the plot of Pride and Prejudice by Jane Austen; Dune by Frank Herbert; a poem by my aunt Rosa Klebb"
    persons = [hit(text, v) for v in ("Jane Austen", "Dune", "Frank Herbert", "Rosa Klebb")]
    assert [work_name(text, h, persons) for h in persons] == [True, True, True, False]
    text = "Give me a short biography of Marie Curie. Email John Smith the Q3 Report by Dana Whitfield."
    persons = [hit(text, v) for v in ("Marie Curie", "John Smith", "Dana Whitfield")]
    assert [work_name(text, h, persons) for h in persons] == [True, False, False]


def test_a_person_ner_typed_as_something_else():
    text = "My name is Darnell Okoro. My daughter Sofia Marchand. This is Lakeview Credit Union. It's Sydney."
    assert person_by_cue(text, hit(text, "Darnell Okoro", "ORGANIZATION"))
    assert person_by_cue(text, hit(text, "Sofia Marchand", "ORGANIZATION"))
    assert not person_by_cue(text, hit(text, "Lakeview Credit Union", "ORGANIZATION"))
    assert not person_by_cue(text, hit(text, "Sydney", "LOCATION"))
    assert not person_by_cue(text, hit(text, "Darnell Okoro", "PERSON"))  # already a person: nothing to retype


def test_a_person_named_by_kin_marriage_or_address_though_no_list_holds_the_name():
    text = "a toast for my best friend Olamide's wedding to Tunde Bakare"
    assert person_by_cue(text, hit(text, "Olamide", "ORGANIZATION"))
    assert person_by_cue(text, hit(text, "Tunde Bakare", "ORGANIZATION"))
    text = "Please reply to Gustavo (gustavo.pereira@fastmail.com) today. Reply to Amazon. Tell Slack support."
    assert person_by_cue(text, hit(text, "Gustavo", "ORGANIZATION"))
    assert not person_by_cue(text, hit(text, "Amazon", "ORGANIZATION"))
    assert not person_by_cue(text, hit(text, "Slack", "ORGANIZATION"))
    text = "Please reply to Gustavo that the invoice is paid. My friend Google Maps says left."
    assert person_by_cue(text, hit(text, "Gustavo", "ORGANIZATION"))  # a given name after a verb that addresses
    assert not person_by_cue(text, hit(text, "Google Maps", "ORGANIZATION"))  # ordinary words: not a name


def test_a_name_the_lists_lack_is_not_taken_for_a_word():
    for name in ("Rahul", "Mei", "Akira", "Yuki", "Min-jun", "Okafor"):  # Zipf 3.0-3.5 or none: names
        assert not ordinary(name), name
    assert ordinary("Respond") and ordinary("Pandemic")


def test_names_only_a_cue_finds():
    from guardian_proxy.session.namecues import cued_names

    def found(text):
        return [text[a:b] for a, b, _ in cued_names(text)]

    assert found("My colleague Min-jun Park keeps taking credit") == ["Min-jun Park"]
    assert found("a birthday message for my niece Amara? She turns 7") == ["Amara"]
    assert found("My mum, Nguyen Thi Hoa, needs help") == ["Nguyen Thi Hoa"]
    assert found("Help me reply to Siobhan, who asked") == ["Siobhan"]
    assert found("Email Wanjiku (w@example.org) that it moved") == ["Wanjiku"]
    assert found("my friend Olamide's wedding") == ["Olamide"]  # the possessive is not the name's
    assert found("a transfer note: 'Rent March - J. Kowalczyk, flat 2'") == ["J. Kowalczyk"]  # an initial
    assert found("Tell Priyanka Rao that the review moved") == ["Priyanka Rao"]  # an unlisted name, a listed surname
    assert found("Hi, I'm Hugo and I need help") == ["Hugo"]  # a listed given name after "I'm"
    assert found("My name is Oluwaseun Adeyemi.") == ["Oluwaseun Adeyemi"]
    assert found("It's April already. I'm Sorry to ask. This is Amazon support") == []
    assert found("Plan B. Then we go") == []
    # no name: an organisation, a tool, a day, an acronym, a language after the cue
    for text in ("Reply to Amazon now", "tell Jira to close it", "Email Acme Corp today", "my doctor Monday", "my manager HR said",
                 "my teacher English class", "my friend Python Flask"):
        assert found(text) == [], text


def test_a_public_life_by_what_follows_its_name():
    text = "What did Ada Lovelace contribute to computing? Explain Euler's theorem. Did Tom invent that excuse?"
    persons = [hit(text, v) for v in ("Ada Lovelace", "Euler", "Tom")]
    assert [work_name(text, h, persons) for h in persons] == [True, True, False]


def test_a_name_after_im_that_ner_took_for_a_place():
    text = "I'm Haruto Sato and I need to email my professor. I'm in Sydney. I'm New York based."
    assert person_by_cue(text, hit(text, "Haruto Sato", "LOCATION"))
    assert not person_by_cue(text, hit(text, "Sydney", "LOCATION"))
    assert not person_by_cue(text, hit(text, "New York", "LOCATION"))  # ordinary words: a place


def test_a_tool_named_in_a_sentence_about_code():
    from guardian_proxy.session.namecues import code_product

    def judged(text, value):
        return code_product(text, hit(text, value))

    assert judged("Why does Pandas warn SettingWithCopyWarning when I filter?", "Pandas")
    assert judged("I call /actuator/health from Postman and get 401.", "Postman")
    assert not judged("Why does Pandas warn when I filter?", "Pandas")  # no code in the sentence
    for text, name in [("Ask Oluwadamilare to review getUserById.", "Oluwadamilare"),  # a verb hands it over
                       ("Oluwadamilare's PR broke build_utils.", "Oluwadamilare"),  # a possessive
                       ("My colleague Oluwadamilare wrote getUserById.", "Oluwadamilare"),  # a person's word
                       ("Chiamaka wrote getUserById yesterday.", "Chiamaka")]:  # a listed name
        assert not judged(text, name), text


def test_a_question_about_a_public_life_with_no_tie_to_the_writer():
    from guardian_proxy.session.namecues import asked_about

    def judged(text, value):
        return asked_about(text, hit(text, value))

    assert judged("What did Alan Turing do at Bletchley Park?", "Alan Turing")
    assert judged("How did Frida Kahlo's accident shape her painting? Tell me about it.", "Frida Kahlo")
    assert judged("What did Rosalind Franklin discover about DNA?", "Rosalind Franklin")  # a listed surname
    assert judged("Tell me about Serena Williams's career highlights.", "Serena Williams")
    for text, name in [("What did Priyanka Rao say about my promotion?", "Priyanka Rao"),  # the writer's own life
                       ("What did my colleague Alan Turing say?", "Alan Turing"),
                       ("Did Alan Turing get the patient's results?", "Alan Turing"),  # a person noun
                       ("Alan Turing did well at Bletchley Park.", "Alan Turing"),  # no question
                       ("What did Alan do at the party?", "Alan"),  # a given name alone
                       ("Notes: " + "the offsite ran long. " * 14 + "What did Alan Turing do?", "Alan Turing")]:
        assert not judged(text, name), text


def test_things_compared_are_not_people():
    from guardian_proxy.session.namecues import code_product

    text = "Compare Airflow and Prefect for scheduling nightly ETL jobs."
    assert code_product(text, hit(text, "Prefect"))
    text = "Should I pick Prefect or Dagster for my data pipelines?"
    assert code_product(text, hit(text, "Prefect"))
    text = "Compare Kemi and Tunde for the team lead role."  # no software in the sentence: people compared
    assert not code_product(text, hit(text, "Tunde"))
    text = "Compare Oluwadamilare and Priya for the role."  # beside a listed name: people compared
    assert not code_product(text, hit(text, "Oluwadamilare"))


def test_a_listed_name_owns_no_language_part():
    text = "Anna's coroutine talk was great"
    assert not product(text, hit(text, "Anna"))


def test_a_name_after_a_job_the_person_does_for_the_user():
    from guardian_proxy.session.namecues import _kin_name
    for text, value in [("Our nanny, Marisol Quispe, wants a reference letter.", "Marisol Quispe"),
                        ("My tax accountant Ruth Delacourt says I owe more.", "Ruth Delacourt")]:
        assert _kin_name(text, hit(text, value, "ORGANIZATION")), text
    # a job noun with no possessive, or a word an English dictionary holds, is no cue
    for text, value in [("The nanny, Marisol Quispe, wants a letter.", "Marisol Quispe"),
                        ("Our developer Portal works", "Portal")]:
        assert not _kin_name(text, hit(text, value, "ORGANIZATION")), text


def test_a_program_that_prints_a_quoted_message():
    for text, value in [("Why does Terraform say 'Error: Reference to undeclared resource' after a rename?", "Terraform"),
                        ("Why does Jest report 'Cannot use import statement outside a module' with ESM?", "Jest")]:
        assert code_product(text, hit(text, value)), text
    # a person quoted saying something ordinary, or a listed given name, stays a person
    for text, value in [("Why does Chiamaka say 'Error' every time I ask?", "Chiamaka"),
                        ("Why does Obafemi say 'see you later' to everyone?", "Obafemi")]:
        assert not code_product(text, hit(text, value)), text


def test_the_service_a_message_goes_through():
    for text, value in [("or message my husband Declan on WhatsApp.", "WhatsApp"),
                        ("find me on LinkedIn", "LinkedIn"), ("my manager messaged me on Slack", "Slack")]:
        assert channel(text, hit(text, value, "ORGANIZATION")), text
    for text, value in [("I work at Monzo", "Monzo"), ("I bank on Barclays", "Barclays"),
                        ("contact me via Brightwell Partners", "Brightwell Partners")]:
        assert not channel(text, hit(text, value, "ORGANIZATION")), text


def test_a_name_no_list_holds_asked_or_told_something():
    from guardian_proxy.session.namecues import cued_names

    def named(text):
        return [text[a:b] for a, b, _ in cued_names(text)]

    assert named("Ask Priyanka to review it before Friday.") == ["Priyanka"]
    assert named("Thank Ngozi for the lovely dinner.") == ["Ngozi"]
    # a product of the recognizers' lists, a word in a sentence about code, an ordinary word: no one
    for text in ("Ask Copilot to write a poem about autumn.", "Ask Sourcery to refactor getUser().",
                 "Tell Everyone that we are closed.", "Ask Jira to close the ticket."):
        assert named(text) == [], text


def test_a_letters_signature_and_a_parcels_addressee():
    from guardian_proxy.session.namecues import cued_names, person_by_cue, signed

    text = "Please tidy this e-mail:\nHi Benedikt,\nthanks for the call.\nBest,\nAoife Gallagher"
    a = text.index("Aoife")
    assert signed(text, a, len(text)) and person_by_cue(text, hit(text, "Aoife Gallagher", "ORGANIZATION"))
    signature = "Thanks,\nTomasz"
    assert [signature[a:b] for a, b, _ in cued_names(signature)] == ["Tomasz"]
    # a sign-off before a team's or an ordinary line is no name; a name mid-line is not a signature
    assert cued_names("Cheers,\nThe Team") == [] and cued_names("Kind regards,\nAcme Support Team") == []
    assert not signed("Best, Aoife Gallagher", 6, 21)
    text = "Order 4471-2208, ship to Zeynep Arslan, Bahariye Cd. 42, Kadıköy."
    assert person_by_cue(text, hit(text, "Zeynep Arslan", "ORGANIZATION"))


def test_a_languages_annotation_is_no_handle():
    from guardian_proxy.session.namecues import annotation

    def at(text, word):  # the session's hit holds the handle without its "@"
        return hit(text, word, "USERNAME")

    for text, word in [("What is the difference between @MainActor and DispatchQueue.main.async in Swift?", "MainActor"),
                       ("Why does @Override fail on my interface method in Java?", "Override"),
                       ("Use @dataclass for the config class in Python", "dataclass")]:
        assert annotation(text, at(text, word)), text
    for text, word in [("Ask @JohnSmith about getUser() failing", "JohnSmith"), ("Follow @KemiCooks for recipes", "KemiCooks"),
                       ("thanks @maria for the fix to the build", "maria")]:
        assert not annotation(text, at(text, word)), text


def test_a_name_given_as_the_users_own():
    from guardian_proxy.session.namecues import person_by_cue

    text = "the ticket was in my name, Adebayo Ogunleye."
    assert person_by_cue(text, hit(text, "Adebayo Ogunleye", "ORGANIZATION"))


def test_names_in_lower_case_and_names_a_relative_who_follows():
    from guardian_proxy.session.namecues import cued_names, person_by_cue

    text = "my friend priya sharma said the rent is too high"
    assert [text[a:b] for a, b, _ in cued_names(text)] == ["priya sharma"]
    assert cued_names("my friend mark said hi") == []  # a common word in lower case may be no name
    text = "Write a card for Siobhan O'Connor-Whitfield, who retires on Friday."
    assert person_by_cue(text, hit(text, "Siobhan O'Connor-Whitfield", "ORGANIZATION"))
    text = "Thanks to Acme Widgets, who sponsored us."
    assert not person_by_cue(text, hit(text, "Acme Widgets", "ORGANIZATION"))


def test_a_given_name_and_a_surname_of_the_lists_in_any_language():
    """The small English NER misses names in a Spanish, German or French prompt ("Mi hermana Lucía Fernández vive
    en Sevilla" left it as typed); a pair of listed, uncommon name words is a person's name in any language."""
    from guardian_proxy.session.namecues import cued_names

    for text, name in [("Mi hermana Lucía Fernández vive en Sevilla.", "Lucía Fernández"),
                       ("Meine Frau Katharina Krause hat Geburtstag.", "Katharina Krause"),
                       ("à mon collègue Théo Marchand pour décaler", "Théo Marchand")]:
        assert name in [text[a:b] for a, b, _ in cued_names(text)], text
    # common English words, or an organisation's word after the pair, are no one's name
    assert cued_names("We met at Grace Church on Sunday.") == []
    assert cued_names("She trained at Maria Fernández Hospital.") == []


def test_european_titles_say_the_sex_and_stay():
    from guardian_proxy.session.namecues import kin_sex

    assert kin_sex("Meine Frau Katharina Vogel", "Katharina Vogel") == "f"
    assert kin_sex("un mail à Monsieur Théo Marchand", "Théo Marchand") == "m"


def test_a_name_in_capitals_on_its_own_line():
    """A CV's heading "AYESHA RAHMAN" had left as typed."""
    from guardian_proxy.session.namecues import cued_names

    text = "Improve my CV:\n\nAYESHA RAHMAN\nLondon | ayesha.rahman@outlook.com\n"
    assert [text[a:b] for a, b, _ in cued_names(text)] == ["AYESHA RAHMAN"]
    assert cued_names("TERMS AND CONDITIONS\nRead them.") == [] and cued_names("JOHN SMITH INC\n") == []


def test_a_role_label_a_name_beside_the_reader_and_a_person_who_acts_on_the_writer():
    from guardian_proxy.session.namecues import cued_names

    def names(text):
        return [text[a:b] for a, b, _ in cued_names(text)]

    assert names("Pupil: Amelie Fairweather-Obi   Year 5\nParent/carer: Nkechi Fairweather-Obi, 07593 416 822") == \
        ["Amelie Fairweather-Obi", "Nkechi Fairweather-Obi"]
    assert names("Could you and Marguerite come on the 14th?") == ["Marguerite"]
    assert names("Ifeoma asked me to review her PR") == ["Ifeoma"]
    assert names("Tomasz on my team wants to move us to Vitest") == ["Tomasz"]
    assert names("Google sent me a security alert. Customer: Acme Widgets") == []  # a product; ordinary words


def test_a_given_name_someone_went_to_for_advice():
    from guardian_proxy.session.namecues import cued_names

    text = "I went to Tomasz for advice about my visa. We went to Paris for a holiday."
    assert [text[a:b] for a, b, _ in cued_names(text)] == ["Tomasz"]


def test_labels_mid_line_a_calendar_attendee_a_chat_speaker_and_an_intro_in_another_language():
    from guardian_proxy.session.namecues import cued_names

    def names(text):
        return [text[a:b] for a, b, _ in cued_names(text)]

    assert names("Reporter: Lukas Brenner   Assignee: Aoife Gallagher   Priority: High") == ["Lukas Brenner",
                                                                                          "Aoife Gallagher"]
    assert names("ATTENDEE;CN=Anneliese Marchetti:mailto:a@b.org") == ["Anneliese Marchetti"]
    assert names("[09:14] Rhiannon Pryce: morning!") == ["Rhiannon Pryce"]
    assert names("Pay to: C Okafor, sort code 20-45-77") == ["C Okafor"]
    assert names("A4: Wojciech Lis | B4: Platform") == ["Wojciech Lis"]
    assert names("Customer: Acme Widgets Ltd") == []  # a firm's word follows
    assert names("Bonjour, je m'appelle Sidonie Lefèvre.") == ["Sidonie Lefèvre"]


def test_a_listed_pair_with_letters_beyond_latin1_and_a_public_life_asked_in_another_language():
    from guardian_proxy.session.namecues import asked_about, cued_names
    from guardian_proxy.session.rewrite import Hit

    text = "Kiracı: Elif Karataş, doğum tarihi 07.09.1994"
    assert "Elif Karataş" in [text[a:b] for a, b, _ in cued_names(text)]
    q = "Za co dokładnie Maria Skłodowska-Curie dostała drugą Nagrodę Nobla i czym różniła się od pierwszej?"
    a = q.index("Maria")
    assert asked_about(q, Hit(0, a, a + len("Maria Skłodowska-Curie"), "PERSON", "Maria Skłodowska-Curie"))


def test_a_name_after_an_executives_title_and_an_access_logs_user():
    from guardian_proxy.session.namecues import cued_names

    text = ("He needs sign-off from CFO Lorraine Tebbutt.\n"
            '86.27.190.54 - ellie.marchetti [02/Dec/2026:03:15:41 +0000] "GET /account HTTP/2.0" 200\n'
            '10.0.0.1 - - [02/Dec/2026:03:15:42 +0000] "GET / HTTP/1.1" 200')
    assert [text[a:b] for a, b, _ in cued_names(text)] == ["Lorraine Tebbutt", "ellie.marchetti"]


def test_a_lower_case_name_after_a_word_that_names_someone_and_a_statements_payee_in_capitals():
    from guardian_proxy.session.namecues import cued_names

    text = ("called fatima al-zahra (ops mgr) 10:15. successor is khalid b. - his mobile; w/ ravi + me. "
            "i flew to django with julia.\nAccount: MR D J FAIRWEATHER\n03/11  FASTER PAYMENT TO O ADEYEMI REF RENT\n"
            "07/11  TRANSFER FROM J MENSAH-BONSU +40.00\nU S ARMY, I WANT A BIG DEAL")
    names = {text[a:b] for a, b, _ in cued_names(text)}
    assert {"fatima al-zahra", "khalid b.", "ravi", "MR D J FAIRWEATHER", "O ADEYEMI", "J MENSAH-BONSU"} <= names
    assert not names & {"django", "julia", "U S ARMY", "A BIG", "I WANT"}


def test_dictated_names_after_a_lower_case_title_or_a_kinship_noun_and_a_title_in_capitals():
    from guardian_proxy.session.namecues import cued_names

    text = ("tell my sister amaka i land at 6 and call mr okafor. with dr bhattacharya and mum's friend bev. my tía lupe. "
            "staying w ciocia Basia. my friend from work said. TEACHER IS MRS. HALVORSEN. MR BIG")
    names = {text[a:b] for a, b, _ in cued_names(text)}
    assert {"amaka", "okafor", "bhattacharya", "bev", "lupe", "Basia", "MRS. HALVORSEN"} <= names
    assert not names & {"from", "work", "MR BIG", "BIG"}


def test_a_days_bookings_a_rotas_names_a_name_before_its_own_email_and_a_greetings_its():
    from guardian_proxy.session.namecues import cued_names

    text = ("9:00 Funmi Adeyemi - knotless braids (Grace) 07946 318 207\n11:00 Chloe Nakamura - balayage + toner\n"
            "- Beatriz: mornings only\n- Note: we close at 4\nSort it out. - Gemma Thornbury, gemma.t1989@gmail.com\n"
            "hiya its leanne from the market\nSupport: help@acme.example")
    names = {text[a:b] for a, b, _ in cued_names(text)}
    assert {"Funmi Adeyemi", "Chloe Nakamura", "Beatriz", "Gemma Thornbury", "leanne"} <= names
    assert not names & {"Note", "Support"}


def test_a_lists_names_beside_a_persons_are_names_in_any_case():
    from guardian_proxy.session.namecues import siblings

    text = "To my office mates Freya Lindqvist and ji-hoon baek, thanks. Present: Hamid Karimi, siobhan o'leary"
    a = text.index("Freya")
    b = text.index("Hamid")
    got = [text[s:e] for s, e, _ in siblings(text, [(a, a + len("Freya Lindqvist")), (b, b + len("Hamid Karimi"))])]
    assert got == ["ji-hoon baek", "siobhan o'leary"]
    # ordinary words, a label in capitals, a town alone, and a word of another language are no names
    for text, name in [("Ask Hamid Karimi and the team", "Hamid Karimi"), ("Name Mateusz Wójcik, PESEL 92", "Mateusz Wójcik"),
                       ("Hamid Karimi, croydon", "Hamid Karimi"), ("my dost Arjun Nair, uska 30th hai", "Arjun Nair")]:
        a = text.index(name)
        assert siblings(text, [(a, a + len(name))]) == [], text
    text = "nadia and Ingrid Halvorsen are on the late shift"
    a = text.index("Ingrid")
    assert [text[s:e] for s, e, _ in siblings(text, [(a, a + len("Ingrid Halvorsen"))])] == ["nadia"]


def test_names_by_their_rows_quotes_and_lists():
    """A passenger list's names in capitals, a nickname in quotes, a team's given names, "my nan Bridget", a letter
    signed after "With gratitude"."""
    from guardian_proxy.session.namecues import cued_names

    def found(text):
        return {text[a:b] for a, b, _ in cued_names(text)}

    rows = ("Can you make a one-page itinerary for our trip? Travellers (name as on passport / passport no.):\n"
            "ANITA MEHRA-ROWE / 548213907 / 03/2031\nMARCUS ROWE / 561028374 / 11/2029\nWe are in an apartment.")
    assert {"ANITA MEHRA-ROWE", "MARCUS ROWE"} <= found(rows)
    assert not found("NOTE: ALL CAPS TEXT / NOTHING HERE\nPLEASE READ / THANKS")
    assert 'Mariusz "Maniek" Grabowski' in found('Rooms: Mariusz "Maniek" Grabowski (+48 601 772 409) and Jen')
    team = 'Team "Quiztopher Columbus": Hamid, Yasmin, Cormac, Tereza (paid on PayPal)'
    assert {"Hamid", "Yasmin", "Cormac", "Tereza"} <= found(team)
    assert not found("Compare Python, Rust, Go and Kotlin for a CLI.") & {"Python", "Rust", "Kotlin"}
    assert "Bridget" in found("He loved three things: my nan Bridget, Coventry City, and the Dubliners.")
    assert "Obiageli Nnadi" in found("Thank you again.\n\nWith gratitude,\nObiageli Nnadi\nFlat 3")


def test_lower_case_names_after_a_kinship_noun_and_in_a_list():
    """"his mum sarah" (a given name that is no English word) and an invite list typed fast are names; "my friend mark
    said" and a shopping list are not."""
    from guardian_proxy.session.namecues import cued_names

    def found(text):
        return {text[a:b] for a, b, _ in cued_names(text)}

    assert "sarah" in found("it's going to: ollie and his mum sarah, and the twins")
    assert "mark" not in found("my friend mark said it was fine")
    assert {"kofi", "isla-rose", "mohammed"} <= found("then kofi, isla-rose, mohammed (his mum is on the list)")
    assert not found("buy eggs, milk, butter and bread") & {"eggs", "milk", "butter"}


def test_a_public_office_before_a_name_or_a_kings_number_after_it():
    from guardian_proxy.session.namecues import public_office

    for text, value in [("Mayor of London Sadiq Khan said on Monday that TfL is looking again", "Sadiq Khan"),
                        ("Warsaw mayor Rafał Trzaskowski opened the new playground", "Rafał Trzaskowski"),
                        ("Oslo's mayor Anne Lindboe visited Tøyen on Wednesday", "Anne Lindboe"),
                        ("On Friday Prime Minister Keir Starmer visited the plant", "Keir Starmer"),
                        ("because Pope Clement VII would not let him", "Clement VII"),
                        ("Why did Henry VIII break with Rome?", "Henry"),
                        ("an open letter to Tim Cook as CEO of Apple asking for updates", "Tim Cook"),
                        ('"Satya Nadella, Microsoft\'s chief executive, told analysts', "Satya Nadella")]:
        assert public_office(text, hit(text, value)), text
    for text, value in [("I phoned the support line, the guy, Darren I think, just hung up", "Darren"),
                        ("our mayor Jane Doe lives on my street", "Jane Doe"),
                        ("My manager Keir Hampton says no", "Keir Hampton"),
                        ("Contact Jane Okafor, our CEO, about it", "Jane Okafor")]:
        assert not public_office(text, hit(text, value)), text


def test_a_given_name_alone_beside_the_writers_own_words():
    from guardian_proxy.session.namecues import cued_names

    def found(text):
        return {text[a:b] for a, b, _ in cued_names(text)}

    assert "Tomasz" in found("why does Tomasz always ignore my messages but then watches all my stories")
    assert "Keisha" in found("help me reply to a text: Keisha said she can't come to my party")
    assert "Paris" not in found("I loved Paris in the spring")  # a name the lists hold, and a word English uses
    assert "Tomasz" not in found("Tomasz Kot starred in Cold War.")  # no writer in the sentence


def test_a_numbered_shortlists_hyphenated_names_and_linkedin_rows():
    from guardian_proxy.session.namecues import cued_names

    text = ("Shortlist:\n2. Mei-Ling Tsao - +44 7392 118 405. 4 yrs at Ocado\n"
            "3. Bogdan Petrescu - linkedin.com/in/bogdan-petrescu-data, 8 yrs\n")
    assert {"Mei-Ling Tsao", "Bogdan Petrescu"} <= {text[a:b] for a, b, _ in cued_names(text)}


def test_a_given_name_and_a_surname_in_capitals_anywhere():
    from guardian_proxy.session.namecues import cued_names

    text = ("Which of these are subscriptions?\n01/11/2026,FASTER PAYMENT TO MEGAN HOLLINGWORTH REF RENT,-650.00\n"
            "and the name that came was WANJIKU NJOROGE. Safaricom said to call 100.")
    got = {text[a:b] for a, b, _ in cued_names(text)}
    assert {"MEGAN HOLLINGWORTH", "WANJIKU NJOROGE"} <= got and "FASTER PAYMENT" not in got


def test_a_role_labels_name_keeps_its_particles():
    """"| Owner: Anneke de Vries" in a CRM record: the name had stopped at "de" (and NER's organisation stayed)."""
    from guardian_proxy.session.namecues import cued_names

    text = "Deal: Fleet €84,500 | Owner: Anneke de Vries\nOwner: Jan van der Berg\nOwner: Jan van\n"
    got = {text[a:b] for a, b, _ in cued_names(text)}
    assert {"Anneke de Vries", "Jan van der Berg", "Jan"} <= got and "Jan van" not in got


def test_a_name_after_an_accounts_or_a_third_persons_name_is():
    from guardian_proxy.session.namecues import cued_names

    text = "The account name is Oyelaran Babatunde and her name's Tamsin. His name is Guo Wei."
    got = {text[a:b] for a, b, _ in cued_names(text)}
    assert {"Oyelaran Babatunde", "Tamsin", "Guo Wei"} <= got


def test_a_name_in_capitals_with_vietnamese_letters_and_a_title_at_a_lines_end():
    from guardian_proxy.session.namecues import cued_names

    text = "Here it is:\n\nANH THƯ NGUYỄN\nanhthu.nguyen.work@gmail.com\nRent is £575 and the landlord is Mr\nHarjit Sandhu."
    got = {text[a:b] for a, b, _ in cued_names(text)}
    assert "ANH THƯ NGUYỄN" in got and any(v.endswith("Harjit Sandhu") for v in got)


def test_a_pasted_chats_speakers_and_a_colleagues_handle():
    """A Slack paste with no times: "Hannah Byrne: @Mateus here's the prod key for the webhook test sk_live_…"."""
    from guardian_proxy.session.namecues import annotation, cued_names
    from guardian_proxy.session.rewrite import Hit

    text = ("Hannah Byrne: @Mateus here's the prod key for the webhook test sk_live_51vByd1\n"
            "Mateus Albuquerque: thx\nGrace Period: 30 days\nNote: none")
    got = {text[a:b] for a, b, _ in cued_names(text)}
    assert {"Hannah Byrne", "Mateus Albuquerque"} <= got and "Grace Period" not in got
    at = text.index("@Mateus")
    assert not annotation(text, Hit(0, at, at + 7, "USERNAME", "@Mateus"))
    code = "In Swift, why does @MainActor on a class fix the data race in getUser()?"
    at = code.index("@MainActor")
    assert annotation(code, Hit(0, at, at + 10, "USERNAME", "@MainActor"))


def test_a_well_known_companys_officer_is_a_public_figure():
    from guardian_proxy.session.namecues import public_office
    from guardian_proxy.session.rewrite import Hit

    text = ("Tata Consultancy Services, led by CEO and MD K. Krithivasan, grew. Nvidia CFO Colette Kress spoke. "
            "Tufan Erginbilgiç, Chief Executive of Rolls-Royce, agreed. Acme CEO Jo Parkes too.")

    def at(name):
        a = text.index(name)
        return Hit(0, a, a + len(name), "PERSON", name)

    for name in ("K. Krithivasan", "Colette Kress", "Tufan Erginbilgiç"):
        assert public_office(text, at(name)), name
    assert not public_office(text, at("Jo Parkes"))  # a company no list holds


def test_a_second_contact_after_a_sentence_and_a_supervisor_on_shift():
    from guardian_proxy.session.namecues import cued_names

    text = ("Parent: Mele Tupou, 0412 738 915. Second contact: Grant Harding 0431 259 604. I consent.\n"
            "Supervisor on shift: Gurpreet Sandhu\nGoogle sent me an alert. Customer: Acme Widgets")
    got = {text[a:b] for a, b, _ in cued_names(text)}
    assert {"Grant Harding", "Gurpreet Sandhu"} <= got and "Acme Widgets" not in got

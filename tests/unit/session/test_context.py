"""docs/design/conversations.md: in chat and agent requests, identifiers of people are pseudonymised, not the
facts a question is about nor the request's own machinery (field markers, labels, function / tool / agent
names, enum values, JSON keys of tool calls). Unit tests of `session.context.PartContext` on hits as the
detector gives them, then the cases seen on recorded exchanges, through the real Gateway (Presidio +
spaCy)."""

import json

import pytest

from guardian_proxy import chatapi
from guardian_proxy.session.context import PartContext, vocabulary
from guardian_proxy.session.rewrite import Hit
from guardian_proxy.types import RawRequest

DSPY_SYSTEM = (
    "Your input fields are:\n1. `question` (str)\nYour output fields are:\n1. `reasoning` (str)\n2. `answer` (str)\n"
    "All interactions will be structured in the following way, with the appropriate values filled in.\n\n"
    "[[ ## question ## ]]\n{question}\n\n[[ ## reasoning ## ]]\n{reasoning}\n\n[[ ## answer ## ]]\n{answer}\n\n"
    "[[ ## completed ## ]]\nIn adhering to this structure, your objective is: \n"
    "        Given the fields `question`, produce the fields `answer`.")
DSPY_USER = ("[[ ## question ## ]]\nWhat is the capital of France?\n\nRespond with the corresponding output fields, "
             "starting with the field `[[ ## reasoning ## ]]`, then `[[ ## answer ## ]]`, and then ending with the "
             "marker for `[[ ## completed ## ]]`.")
HANDOFF_TOOLS = [{"type": "function", "function": {
    "name": "transfer_to_agent2", "description": "Handoff to the agent2 agent to handle the request.",
    "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": False}}}]
USER_TOOLS = [{"type": "function", "function": {"name": "create_user", "parameters": {"type": "object", "properties": {
    "username": {"type": "string"}, "role": {"type": "string", "enum": ["admin", "viewer", "Respond"]}}}}}]


def chat_of(body, path="/v1/chat/completions", host="api.openai.com"):
    return chatapi.recognise_body(host, path, json.dumps(body).encode(), "application/json")


def hit_at(chat, i, value, entity, nth=0):
    text = chat.slots[i].text
    start = -1
    for _ in range(nth + 1):
        start = text.index(value, start + 1)
    return Hit(i, start, start + len(value), entity, value)


def keeps(chat, i, value, entity, nth=0, **kw):
    return PartContext(chat).keep(i, chat.slots[i], hit_at(chat, i, value, entity, nth), **kw)


def test_markers_labels_and_headings_are_field_names():
    chat = chat_of({"model": "m", "messages": [{"role": "system", "content": DSPY_SYSTEM},
                                               {"role": "user", "content": DSPY_USER}]})
    assert not keeps(chat, 0, "question", "AMOUNT", 1)  # inside [[ ## question ## ]]: no digit, no amount
    assert not keeps(chat, 0, "question", "PERSON", 1)  # … and a marker whatever its type
    assert not keeps(chat, 0, "{question}", "PERSON")  # a template variable
    assert not keeps(chat, 0, "reasoning", "PERSON")  # inline code
    assert not keeps(chat, 1, "Respond", "PERSON")  # an ordinary word, not a name
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content":
                    "### Contact\nEmail: maria.g@gmail.com\nMaria Gonzalez: can you help?\n### Maria Gonzalez"}]})
    assert not keeps(chat, 0, "Contact", "PERSON") and not keeps(chat, 0, "Email", "PERSON")
    assert keeps(chat, 0, "maria.g@gmail.com", "EMAIL_ADDRESS")
    assert keeps(chat, 0, "Maria Gonzalez", "PERSON")  # a speaker label that is a name is a name
    assert keeps(chat, 0, "Maria Gonzalez", "PERSON", 1)  # so is a heading


def test_json_keys_of_tool_calls_are_never_values():
    args = json.dumps({"Margaret Okafor": "Margaret Okafor", "username": "jdoe1984", "to": "Margaret Okafor"})
    chat = chat_of({"model": "m", "messages": [
        {"role": "user", "content": "Mail Margaret Okafor."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "send_email", "arguments": args}}]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"username": "jdoe1984", "sent": True})}]})
    assert chat.slots[1].json_text
    assert not keeps(chat, 1, "Margaret Okafor", "PERSON", 0)  # the key
    assert keeps(chat, 1, "Margaret Okafor", "PERSON", 1) and keeps(chat, 1, "Margaret Okafor", "PERSON", 2)
    assert not keeps(chat, 1, "username", "USERNAME") and keeps(chat, 1, "jdoe1984", "USERNAME")
    assert not keeps(chat, 2, "username", "PERSON") and keeps(chat, 2, "jdoe1984", "USERNAME")  # a JSON tool result
    assert keeps(chat, 1, "jdoe1984", "USERNAME", known=True)
    chat = chat_of({"model": "m", "messages": [{"role": "tool", "tool_call_id": "c1", "content": json.dumps(
        {"maria.g@gmail.com": {"name": "Maria"}})}]})
    assert keeps(chat, 0, "maria.g@gmail.com", "EMAIL_ADDRESS")  # a map keyed by contact: data by its shape
    assert not keeps(chat, 0, "name", "PERSON")


def test_tool_and_agent_names_enum_values_and_roles():
    body = {"model": "m", "tools": HANDOFF_TOOLS + USER_TOOLS, "messages": [
        {"role": "system", "content": "You are agent1. If the user writes in Spanish, hand off to agent2."},
        {"role": "user", "content": "Create user test as Respond, then ask Assistant."}]}
    chat = chat_of(body)
    vocab = vocabulary(body)
    assert {"transfer_to_agent2", "agent2", "create_user", "username", "admin", "respond"} <= vocab
    assert not keeps(chat, 0, "agent2", "PERSON") and not keeps(chat, 0, "agent1", "PERSON")  # a digit: no name
    assert not keeps(chat, 0, "agent2", "USERNAME")  # a declared agent's name
    assert not keeps(chat, 1, "test", "USERNAME")  # an ordinary word, not a given name or surname
    assert not keeps(chat, 1, "Respond", "PERSON") and not keeps(chat, 1, "Assistant", "PERSON")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": "Ask Mark and Grace, and get_weather."}]})
    assert keeps(chat, 0, "Mark", "PERSON") and keeps(chat, 0, "Grace", "PERSON")  # ordinary words that are names
    assert not keeps(chat, 0, "get_weather", "PERSON")


def test_places_are_facts_unless_a_person_is_tied_to_them():
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content":
                    "What is the capital of France? Tell me which country is Micronesia next to. I live in Lisbon. "
                    "My sister moved to Porto in 2019. As of 2017, Nevada allows it. Maria Gonzalez works in Leeds."}]})
    assert not keeps(chat, 0, "France", "LOCATION")
    assert not keeps(chat, 0, "Micronesia", "PERSON")  # a country's name: a place, and an untied one
    assert keeps(chat, 0, "Lisbon", "LOCATION") and keeps(chat, 0, "Porto", "LOCATION")
    assert keeps(chat, 0, "2019", "DATE") and not keeps(chat, 0, "2017", "DATE")
    assert not keeps(chat, 0, "Nevada", "LOCATION")
    gonzalez = hit_at(chat, 0, "Maria Gonzalez", "PERSON")
    leeds = hit_at(chat, 0, "Leeds", "LOCATION")
    assert PartContext(chat).keep(0, chat.slots[0], leeds, [gonzalez])  # a person of the conversation is tied to it
    assert keeps(chat, 0, "France", "LOCATION", known=True)  # a value already replaced stays replaced
    # the one asking is no tie: the place is what the request is about (a made-up town would be planned for)
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content":
                    "Help me plan a week in Lisbon. Book a table in Rome for me. My boss sent me to Oslo. "
                    "They moved me to Bergen."}]})
    assert not keeps(chat, 0, "Lisbon", "LOCATION") and not keeps(chat, 0, "Rome", "LOCATION")
    assert keeps(chat, 0, "Oslo", "LOCATION") and keeps(chat, 0, "Bergen", "LOCATION")  # the user's life
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content":
                    "Patient admitted on 2019-03-04 in Leeds with pneumonia. The Battle of Hastings was in 1066."}]})
    assert keeps(chat, 0, "2019-03-04", "DATE") and keeps(chat, 0, "Leeds", "LOCATION")
    assert not keeps(chat, 0, "1066", "DATE") and not keeps(chat, 0, "Hastings", "LOCATION")


def test_a_name_its_words_make_a_place_is_a_place():
    # replay (Cohere rerank documents): "Its capital is Saipan." — Saipan was taken for a person and replaced
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content":
                    "The Commonwealth of the Northern Mariana Islands is a group of islands. Its capital is Saipan. "
                    "We sailed to the island of Tinian. Garapan is the largest town on it. I met Rosa Tinoco there."}]})
    for name in ("Saipan", "Tinian", "Garapan"):
        h = PartContext.tidy(hit_at(chat, 0, name, "PERSON"), chat.slots[0].text)
        assert h.entity == "LOCATION", name
    assert not keeps(chat, 0, "Saipan", "PERSON") and not keeps(chat, 0, "Garapan", "PERSON")
    assert keeps(chat, 0, "Tinian", "PERSON")  # a place, but "we sailed to" ties it to the writer
    assert keeps(chat, 0, "Rosa Tinoco", "PERSON")  # a person stays one
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content":
                    "The mayor of the city is Rosa Tinoco. My colleague Sam Capitol is in town."}]})
    assert keeps(chat, 0, "Rosa Tinoco", "PERSON") and keeps(chat, 0, "Sam Capitol", "PERSON")


def test_leading_ordinary_words_are_not_part_of_a_name():
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": "Email Margaret Okafor today."}]})
    h = PartContext.tidy(hit_at(chat, 0, "Email Margaret Okafor", "PERSON"), chat.slots[0].text)
    assert h.text == "Margaret Okafor" and chat.slots[0].text[h.start:h.end] == "Margaret Okafor"


def test_a_cjk_phrase_is_not_a_name():
    # replay: a tool list's Chinese description ("get project details") was taken for a person by English NER
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content":
                    "## Available tools\n- mcp__yapi__get-project-detail(): 获取项目详情\n我是王小明"}]})
    assert not keeps(chat, 0, "获取项目详情", "PERSON")
    assert keeps(chat, 0, "王小明", "PERSON")  # a name of three characters stays one


def test_hard_rule_values_are_always_kept():
    args = json.dumps({"card": "4111 1111 1111 1111"})
    chat = chat_of({"model": "m", "messages": [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "pay", "arguments": args}}]}]})
    assert keeps(chat, 0, "4111 1111 1111 1111", "CREDIT_CARD")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": "[[ ## question ## ]]"}]})
    assert not keeps(chat, 0, "## question ##", "US_SSN")  # no digit: not a number of any kind


def test_stock_examples_belong_to_no_one():
    text = ("Fix this regex so it matches user@example.com and john.doe@test.example. The maintainer is Jane Doe. "
            "My nginx log has 192.168.1.20 and fe80::1, the ARN is arn:aws:iam::123456789012:role/deploy. "
            "Write to maria.gonzalez@example.com or maria.g@gmail.com, from 203.0.113.7, 8.8.8.8 and 94.173.58.210; "
            "Jane Dovey.")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    for value, entity in [("user@example.com", "EMAIL_ADDRESS"), ("john.doe@test.example", "EMAIL_ADDRESS"),
                          ("Jane Doe", "PERSON"), ("192.168.1.20", "IP_ADDRESS"), ("fe80::1", "IP_ADDRESS"),
                          ("123456789012", "PHONE_NUMBER"), ("203.0.113.7", "IP_ADDRESS"), ("8.8.8.8", "IP_ADDRESS")]:
        assert not keeps(chat, 0, value, entity), value  # a documentation range's address, a public resolver's
    # a person's name at a reserved domain is kept (what the writer meant), so is a public host's address
    for value, entity in [("maria.gonzalez@example.com", "EMAIL_ADDRESS"), ("maria.g@gmail.com", "EMAIL_ADDRESS"),
                          ("94.173.58.210", "IP_ADDRESS"), ("Jane Dovey", "PERSON")]:
        assert keeps(chat, 0, value, entity), value
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": "My SSN is 123-45-6789."}]})
    assert keeps(chat, 0, "123-45-6789", "US_SSN")  # a hard-rule type is never judged a stock example


def test_a_product_name_is_not_a_person():
    text = ("ECONNREFUSED when my Django app starts. What's the difference between Docker's COPY and ADD? "
            "I moved from Jenkins 2.401.1 to Ruby v3 and React's useEffect runs twice. "
            "Send Tom Baker documentation about it; Priya logs in daily; ask Maria Lopez settings questions.")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    for value in ("Django", "Docker", "Jenkins", "Ruby", "React"):
        assert not keeps(chat, 0, value, "PERSON"), value
    for value in ("Tom Baker", "Priya", "Maria Lopez"):  # the thing given, a verb, a thing asked about: a person
        assert keeps(chat, 0, value, "PERSON"), value
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": "I push to a Vec; ask Ana about it."}]})
    assert not keeps(chat, 0, "Vec", "PERSON") and keeps(chat, 0, "Ana", "PERSON")  # a name takes no article
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": "Check it. Bill to: Rafael Okonkwo"}]})
    assert not keeps(chat, 0, "Bill", "PERSON") and keeps(chat, 0, "Rafael Okonkwo", "PERSON")  # a label's word


def test_a_works_maker_is_not_a_person_of_the_conversation():
    text = ("Summarize the plot of Pride and Prejudice by Jane Austen. Who wrote the novel by Leo Tolstoy? "
            "Is \"1984\" by George Orwell long? Read the Q3 Report by Dana Whitfield, due Monday by Ken Adams. "
            "My aunt loves a poem by my cousin Rosa Klebb.")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    persons = [hit_at(chat, 0, v, "PERSON") for v in ("Rosa Klebb",)]
    for value in ("Jane Austen", "Leo Tolstoy", "George Orwell"):
        assert not keeps(chat, 0, value, "PERSON"), value
    for value in ("Dana Whitfield", "Ken Adams"):  # a workplace paper's author, a deadline's owner
        assert keeps(chat, 0, value, "PERSON"), value
    assert keeps(chat, 0, "Rosa Klebb", "PERSON", persons=persons)  # "my cousin": the user's family
    # a work named after a character and its maker name each other; an initial is no ordinary word ("J.")
    text = "Recommend novels like Dune by Frank Herbert and Harry Potter and the Philosopher's Stone by J.K. Rowling."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    persons = [hit_at(chat, 0, v, "PERSON") for v in ("Dune", "Frank Herbert", "Harry Potter", "J.K. Rowling")]
    for h in persons:
        assert not PartContext(chat).keep(0, chat.slots[0], h, persons), h.text
    text = ("Send the contract to Maria Lopez by FedEx, and tell Tom Baker by Friday. Email John Smith the Q3 Report "
            "by Dana Whitfield.")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    persons = [hit_at(chat, 0, v, "PERSON") for v in ("Maria Lopez", "Tom Baker", "John Smith", "Dana Whitfield")]
    for h in persons:
        assert PartContext(chat).keep(0, chat.slots[0], h, persons), h.text


def test_ner_type_slips_after_a_kinship_noun_and_trip_questions():
    text = ("My daughter Sofia Marchand starts school next week. Can I still travel to Canada? "
            "I live in Boise. Give me a short biography of Marie Curie. Write the life of my aunt Rosa Klebb.")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    h = hit_at(chat, 0, "Sofia Marchand", "ORGANIZATION")
    assert PartContext(chat).keep(0, chat.slots[0], h) and h.entity == "PERSON"  # a daughter, not a company
    assert not keeps(chat, 0, "Canada", "LOCATION")  # the trip is what is asked
    assert keeps(chat, 0, "Boise", "LOCATION")  # where the user lives
    assert not keeps(chat, 0, "Marie Curie", "PERSON")  # a public life asked about
    assert keeps(chat, 0, "Rosa Klebb", "PERSON")  # "my aunt"
    text = "My name is Darnell Okoro. This is Lakeview Credit Union. It's Sydney, not Perth. I'm Priya Raman."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    for value, entity, person in [("Darnell Okoro", "ORGANIZATION", True), ("Lakeview Credit Union", "ORGANIZATION",
                                  False), ("Sydney", "LOCATION", False), ("Priya Raman", "NRP", True)]:
        h = hit_at(chat, 0, value, entity)
        PartContext(chat).tidy(h, text)
        assert (h.entity == "PERSON") == person, value
    text = "Thank our neighbours, the Abernathys, and my colleague, the Systems team."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    h = hit_at(chat, 0, "Abernathys", "NRP")
    PartContext(chat).tidy(h, text)
    assert h.entity == "PERSON"  # a family by its surname
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": "Our new client Acme Logistics moved."}]})
    h = hit_at(chat, 0, "Acme Logistics", "ORGANIZATION")
    PartContext(chat).keep(0, chat.slots[0], h)
    assert h.entity == "ORGANIZATION"  # words that are no names stay an organisation


# ---------------------------------------------------------------------- through the real Gateway


def send(gateway, url, body, key):
    req = RawRequest(method="POST", url=url, body=json.dumps(body).encode(),
                     headers=[("content-type", "application/json"), ("authorization", f"Bearer {key}")])
    d = gateway.evaluate(req, log=False)
    return d, (json.loads(d.rewrite.body) if d.rewrite and d.rewrite.body else body)


@pytest.mark.slow
def test_dspy_prompt_with_a_factual_question_leaves_unchanged(gateway):
    """Seen: the field markers became `[AMOUNT_1]`, "Respond" a person, France another country."""
    body = {"model": "gpt-4o-mini", "messages": [{"role": "system", "content": DSPY_SYSTEM},
                                                 {"role": "user", "content": DSPY_USER}]}
    d, sent = send(gateway, "https://api.openai.com/v1/chat/completions", body, "sk-ctx-dspy")
    assert d.rule == "chat-session" and sent == body, json.dumps(sent)[:600]


@pytest.mark.slow
def test_agent_handoff_and_tool_call_json_leave_unchanged(gateway):
    """Seen: a hand-off name "agent2" taken for a person; "test" changed inside a tool call's JSON."""
    body = {"model": "gpt-4o", "tools": HANDOFF_TOOLS, "messages": [
        {"role": "system", "content": "You are agent1. If the user writes in Spanish, hand off to agent2."},
        {"role": "user", "content": "Hola, ¿cómo estás?"}]}
    d, sent = send(gateway, "https://api.openai.com/v1/chat/completions", body, "sk-ctx-handoff")
    assert sent == body, json.dumps(sent)[:600]
    body = {"model": "mistral-small", "tools": USER_TOOLS, "messages": [
        {"role": "user", "content": "Create an account with username test and the role admin."},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "create_user", "arguments": json.dumps({"username": "test", "role": "admin"})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"id": 7, "username": "test"})}]}
    d, sent = send(gateway, "https://api.mistral.ai/v1/chat/completions", body, "sk-ctx-test")
    assert sent == body, json.dumps(sent)[:600]


@pytest.mark.slow
def test_the_person_is_pseudonymised_the_question_is_not(gateway):
    said = ("I'm Quentin Zarkowsky (quentin.zarkowsky@gmail.com) and I live in Lisbon. What is the capital of "
            "France? And which country is Micronesia next to?")
    body = {"model": "claude", "max_tokens": 100, "messages": [{"role": "user", "content": said}]}
    d, sent = send(gateway, "https://api.anthropic.com/v1/messages", body, "sk-ctx-capital")
    out = sent["messages"][0]["content"]
    assert "Zarkowsky" not in out and "quentin.zarkowsky@gmail.com" not in out
    assert out.endswith("What is the capital of France? And which country is Micronesia next to?"), out
    args = json.dumps({"Margaret Okafor": "Margaret Okafor", "to": "Margaret Okafor"})
    body = {"model": "m", "messages": [{"role": "user", "content": "Email Margaret Okafor about the offsite."},
                                       {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                                        "function": {"name": "send_email", "arguments": args}}]}]}
    d, sent = send(gateway, "https://api.openai.com/v1/chat/completions", body, "sk-ctx-key")
    new = json.loads(sent["messages"][1]["tool_calls"][0]["function"]["arguments"])
    assert list(new) == ["Margaret Okafor", "to"] and new["to"] != "Margaret Okafor"  # the key stays, values change
    assert sent["messages"][0]["content"] == f"Email {new['to']} about the offsite."


@pytest.mark.slow
def test_values_left_as_typed_are_counted_by_rule_in_the_decision(gateway):
    """Every decision explains itself: a found value the session leaves as typed is counted by the rule that
    judged it no one's (`kept` in the decision log, never the value), and the explanation says so."""
    said = "Explain ECONNREFUSED when my Falcon app starts; the regex must match user@example.com."
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": said}]}
    d, sent = send(gateway, "https://api.openai.com/v1/chat/completions", body, "sk-ctx-kept")
    assert sent == body and d.rule == "chat-session"
    assert d.extra["kept"] == {"product": 1, "stock example": 1}, d.extra.get("kept")
    assert "left as typed: " in d.explanation and "product 1" in d.explanation and "Falcon" not in d.explanation


def test_a_feature_named_after_someone_is_a_place_and_a_sentences_first_word_no_name():
    from guardian_proxy.session.context import PartContext
    from guardian_proxy.session.rewrite import Hit

    text = "How long does the Machame route take?"
    h = PartContext.tidy(Hit(0, 18, 25, "PERSON", "Machame"), text)
    assert h.entity == "LOCATION"
    text = "Email Wanjiku Kamau that the workshop moved."
    h = PartContext.tidy(Hit(0, 0, 13, "PERSON", "Email Wanjiku"), text)
    assert (h.text, h.entity) == ("Wanjiku", "PERSON")
    text = "Please ask Doctor Okafor."  # not the sentence's first word: the cut is not made
    h = PartContext.tidy(Hit(0, 11, 24, "PERSON", "Doctor Okafor"), text)
    assert (h.text, h.entity) == ("Doctor Okafor", "PERSON")


def test_a_version_and_a_platform_are_no_ones():
    text = ("curl https://api.example.com/v1/items; pin it to v2.3.1. Draft a LinkedIn message to recruiter Hannah "
            "Okafor from my Slack profile. I work at PayPal and I live in DeKalb with my wife.")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    assert not keeps(chat, 0, "v1", "US_DRIVER_LICENSE") and not keeps(chat, 0, "v2.3.1", "US_PASSPORT")
    assert not keeps(chat, 0, "LinkedIn", "LOCATION")  # no place's shape: a brand
    assert not keeps(chat, 0, "Slack", "ORGANIZATION")  # a platform's noun follows
    assert keeps(chat, 0, "PayPal", "ORGANIZATION")  # an employer is the user's, whatever its shape
    assert keeps(chat, 0, "DeKalb", "LOCATION")  # a name's prefix explains the capital
    assert keeps(chat, 0, "Hannah Okafor", "PERSON")


def test_a_duration_is_no_date_of_anyones():
    text = "He was a fisherman for 50 years; rent unpaid for two months. I moved here 5 years ago, aged 40 years old."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    assert not keeps(chat, 0, "50 years", "DATE") and not keeps(chat, 0, "two months", "DATE")
    assert keeps(chat, 0, "5 years", "DATE")  # "5 years ago" is a point in time


def test_a_castle_a_two_day_trip_and_a_postcode_typed_a_year():
    text = "Plan a two-day trip to Edinburgh with a day trip to Stirling Castle."
    h = PartContext.tidy(Hit(0, text.index("Stirling"), text.index("Stirling") + 15, "PERSON", "Stirling Castle"),
                         text)
    assert h.entity == "LOCATION"
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    assert not keeps(chat, 0, "two-day", "DATE")
    text = "My address is 42 Wallaby Way, Sydney NSW 2000. Which bin day is it?"
    a = Hit(0, 14, 40, "STREET_ADDRESS", text[14:40])
    y = Hit(0, 41, 45, "DATE", "2000")
    assert text[14:40] == "42 Wallaby Way, Sydney NSW" and text[41:45] == "2000"
    found = PartContext.join_postcodes(text, [a, y])
    assert found == [a] and a.text == "42 Wallaby Way, Sydney NSW 2000"


def test_a_nationality_word_that_names_a_language_is_the_tasks():
    text = ("Translate to German: our office in Munich is closed. Reply in Spanish. Check the French grammar. "
            "I'm Dutch and my wife is Italian.")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part = PartContext(chat)
    for value in ("German", "Spanish", "French"):
        assert part.why_not(0, chat.slots[0], hit_at(chat, 0, value, "NRP")) == "language", value
    for value in ("Dutch", "Italian"):  # the user's and their wife's origin
        assert keeps(chat, 0, value, "NRP"), value
    text = "I'm German and I need a visa."  # a nationality after "I'm" is no one named Germán
    assert PartContext.tidy(Hit(0, 4, 10, "NRP", "German"), text).entity == "NRP"


def test_an_organisations_mailbox_is_left_a_persons_is_not():
    text = "Draft a complaint to privacy@acme-bank.com; my e-mail is ana.ruiz@acme-bank.com, or support@gmail.com."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part = PartContext(chat)
    h = hit_at(chat, 0, "privacy@acme-bank.com", "EMAIL_ADDRESS")
    assert part.why_not(0, chat.slots[0], h) == "organisation's mailbox"
    assert keeps(chat, 0, "ana.ruiz@acme-bank.com", "EMAIL_ADDRESS")
    assert keeps(chat, 0, "support@gmail.com", "EMAIL_ADDRESS")  # an account at a consumer provider


def test_an_asks_verb_a_command_a_reference_and_an_id_that_begins_with_a_year_are_no_ones():
    text = "Summarise this email. $ tox test fails since pull request #412; invoice 2025-118 is due in 2026."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part = PartContext(chat)
    slot = chat.slots[0]
    assert part.why_not(0, slot, hit_at(chat, 0, "Summarise", "PERSON")) == "ordinary word"
    assert part.why_not(0, slot, hit_at(chat, 0, "tox", "PERSON")) == "not a name's shape"
    assert part.why_not(0, slot, hit_at(chat, 0, "412", "AMOUNT")) == "reference number"
    assert part.why_not(0, slot, hit_at(chat, 0, "2025", "DATE")) == "reference number"
    assert part.why_not(0, slot, hit_at(chat, 0, "2026", "DATE")) != "reference number"
    text = "Email Chiamaka this summary. Tell wanjiku hello."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    assert keeps(chat, 0, "Chiamaka", "PERSON")  # not the sentence's first word
    assert keeps(chat, 0, "wanjiku", "PERSON")  # lower case after a verb that addresses someone


def test_regroup_a_town_after_an_address_and_a_name_with_its_address_under_one_label():
    text = "the renovation at Via Roma 12, Bologna.\nAuthor: Marcus Lindholm <marcus@lindholm.dev>"
    street = Hit(0, text.index("Via"), text.index("Via") + 11, "LOCATION", "Via Roma 12")
    town = Hit(0, text.index("Bologna"), text.index("Bologna") + 7, "PERSON", "Bologna")
    a = text.index("Marcus")
    label = Hit(0, a, len(text), "USERNAME", text[a:])
    mail = Hit(0, text.index("marcus@"), len(text) - 1, "EMAIL_ADDRESS", "marcus@lindholm.dev")
    out = PartContext.regroup(text, [street, town, label, mail])
    assert town.entity == "LOCATION"
    assert [(h.entity, h.text) for h in out][2:] == [("PERSON", "Marcus Lindholm"),
                                                      ("EMAIL_ADDRESS", "marcus@lindholm.dev")]


def test_a_trips_destination_a_flights_number_and_a_laws_code_are_what_is_asked():
    text = ("Plan a 3-day itinerary in Kyoto for a family with two kids. My flight LH 1234 was cancelled: what am I owed "
            "under EU261? We live in Osaka. Case AB12345 is mine.")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part = PartContext(chat)
    slot = chat.slots[0]
    assert part.why_not(0, slot, hit_at(chat, 0, "Kyoto", "LOCATION")) == "trip asked about"
    assert part.why_not(0, slot, hit_at(chat, 0, "1234", "DATE")) == "reference number"
    assert part.why_not(0, slot, hit_at(chat, 0, "EU261", "CASE_NUMBER")) == "law or standard"
    assert keeps(chat, 0, "Osaka", "LOCATION")  # where they live
    assert keeps(chat, 0, "AB12345", "CASE_NUMBER")


def test_an_age_typed_a_day_a_weekday_and_small_numbers_alone():
    text = "Hi, I'm Ana Ruiz, 34, and I live in Porto. Move my appointment to Friday at 3 pm; the kids are 6 and 9."
    age = Hit(0, text.index("34"), text.index("34") + 2, "DATE", "34")
    PartContext.regroup(text, [age])
    assert age.entity == "AGE"  # after a name the cue found and a comma
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part = PartContext(chat)
    slot = chat.slots[0]
    assert part.why_not(0, slot, hit_at(chat, 0, "Friday", "DATE")) == "day or time of the week"
    assert part.why_not(0, slot, hit_at(chat, 0, "3 pm", "DATE")) == "day or time of the week"
    assert part.why_not(0, slot, hit_at(chat, 0, "6 and 9", "DATE")) == "no date"
    other = "Porto, 12 and more"
    h = Hit(0, 7, 9, "DATE", "12")
    PartContext.regroup(other, [h])
    assert h.entity == "DATE"  # a comma after a place, not a person


def test_a_cued_name_takes_the_place_ner_cut_from_it_and_an_address_its_british_postcode():
    text = "My neighbour Gintaras Petrauskas parks at 14 Birch Close, Leicester LE2 3QT."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part = PartContext(chat)
    frag = Hit(0, 13, 21, "LOCATION", "Gintaras")
    found = [frag]
    new = part.cued(0, text, found)
    assert found == [] and [(h.entity, h.text) for h in new] == [("PERSON", "Gintaras Petrauskas")]
    a = text.index("14")
    street = Hit(0, a, text.index("LE2") + 2, "STREET_ADDRESS", text[a:text.index("LE2") + 2])
    PartContext.join_postcodes(text, [street])
    assert street.text == "14 Birch Close, Leicester LE2 3QT"


def test_what_an_agents_record_holds_besides_people():
    system = "You are a support agent for Acme Cloud. Be concise."
    record = json.dumps({"subject": "Export to CSV fails", "assignee": "support-bot"})
    chat = chat_of({"model": "m", "messages": [{"role": "system", "content": system},
                                               {"role": "tool", "tool_call_id": "c", "content": record}]})
    part = PartContext(chat)
    assert part.why_not(0, chat.slots[0], hit_at(chat, 0, "Acme Cloud", "ORGANIZATION")) == \
        "the assistant's own organisation"
    assert part.why_not(0, chat.slots[0], hit_at(chat, 0, "Acme Cloud", "PERSON")) == "not a name's shape"
    i = next(k for k, s in enumerate(chat.slots) if "CSV" in s.text)
    assert part.why_not(i, chat.slots[i], hit_at(chat, i, "CSV", "ORGANIZATION")) == "product"


def test_a_title_after_a_works_noun_and_a_comparison_is_no_ones_name():
    text = "Which Beatles album came after Revolver? Is Inception a better film than Tenet? My friend Oluwadamilare " \
           "loves that album. The book Chiamaka lent me was great."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part = PartContext(chat)
    for value in ("Revolver", "Tenet"):
        assert part.why_not(0, chat.slots[0], hit_at(chat, 0, value, "PERSON")) == "work or public person", value
    for value in ("Oluwadamilare", "Chiamaka"):
        assert keeps(chat, 0, value, "PERSON"), value


def test_a_region_and_a_tax_year_are_what_a_question_is_about():
    text = "I'm a landlord in Texas and my tenant lives in Austin. What's the tax in Scotland for 2025/26 and 2024-2025?"
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part = PartContext(chat)
    slot = chat.slots[0]
    assert part.why_not(0, slot, hit_at(chat, 0, "Texas", "LOCATION")) == "region"
    assert part.why_not(0, slot, hit_at(chat, 0, "Scotland", "LOCATION")) == "region"
    assert part.why_not(0, slot, hit_at(chat, 0, "2025/26", "CASE_NUMBER")) == "tax or school year"
    assert part.why_not(0, slot, hit_at(chat, 0, "2024-2025", "DATE")) == "tax or school year"
    assert keeps(chat, 0, "Austin", "LOCATION")  # a city the tenant lives in


def test_a_role_after_my_is_a_relation_and_people_compared_stay_people():
    from guardian_proxy.session.namecues import code_product

    text = "Tell me about Jessica Alvarez, my new manager at Stripe. I work as a nurse."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part = PartContext(chat)
    assert part.why_not(0, chat.slots[0], hit_at(chat, 0, "new manager", "OCCUPATION")) == "a role to the user"
    assert keeps(chat, 0, "nurse", "OCCUPATION")
    text = "Compare Kemi and Tunde for the team lead role."  # no software in the sentence: people
    start = text.index("Tunde")
    assert not code_product(text, Hit(0, start, start + 5, "PERSON", "Tunde"))


def test_a_budget_and_an_events_place_are_what_the_user_asks_for():
    """"budget around €1,500" had become €1,600 and "a party in Porto" Lake Paulashire: the venue was asked for
    somewhere else, at another price."""
    from guardian_proxy.session.context import _BUDGET_BEFORE, _TRIP_BEFORE

    for before in ("fits 25 people, budget around ", "my budget is ", "a price range of ", "spend up to "):
        assert _BUDGET_BEFORE.search(before), before
    for before in ("I earn ", "I owe ", "a salary of "):
        assert not _BUDGET_BEFORE.search(before), before
    assert _TRIP_BEFORE.search("my sister's 40th birthday party in ") and _TRIP_BEFORE.search("a venue near ")


def test_a_journeys_ends_and_a_place_someone_moves_to():
    """"My flight KL1408 from Amsterdam to Lagos … Can I claim under EU261?" had its cities replaced, so the model
    could not tell whether the flight left the EU; "moved from Leeds to Bristol" had made Bristol a company."""
    from guardian_proxy.session.context import _ROUTE_BEFORE, _SETTLED_BEFORE

    assert _ROUTE_BEFORE.search("My flight KL1408 from ") and _ROUTE_BEFORE.search("My flight KL1408 from Amsterdam to ")
    assert not _ROUTE_BEFORE.search("I moved from ")
    assert _SETTLED_BEFORE.search("I moved from Leeds to ") and _SETTLED_BEFORE.search("she grew up in ")
    assert not _SETTLED_BEFORE.search("I work at ")


def test_the_role_a_user_prepares_for():
    from guardian_proxy.session.context import _APPLIED_FOR_BEFORE, _ROLE_NOUN_AFTER

    text = "a job interview at Shopify next Tuesday for a Senior Data Engineer role."
    assert _ROLE_NOUN_AFTER.match(text, text.index(" role"))
    assert _APPLIED_FOR_BEFORE.search("I'm applying for a Senior ")
    assert not _APPLIED_FOR_BEFORE.search("my brother is a ")


@pytest.mark.slow
def test_a_pasted_csv_leaves_with_stand_in_names(gateway):
    import json

    from guardian_proxy.types import RawRequest

    text = ("Here's a sample of our customers.csv:\nid,name,email,city,plan,mrr\n"
            "1042,Ingrid Halvorsen,ingrid.h@fjordmail.no,Bergen,Pro,49\n1043,Mateus Carvalho,mateus.c@uol.com.br,Recife,Basic,9\n"
            "1044,Aiko Tanaka,aiko.tanaka@docomo.ne.jp,Osaka,Pro,49\nWrite a pandas snippet that computes MRR per city.")
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}
    d = gateway.evaluate(RawRequest(method="POST", url="https://api.openai.com/v1/chat/completions",
                                    body=json.dumps(body).encode(),
                                    headers=[("content-type", "application/json"), ("authorization", "Bearer sk-t")]),
                         log=False)
    sent = json.loads(d.rewrite.body)["messages"][0]["content"]
    assert not any(v in sent for v in ("Ingrid", "Halvorsen", "Mateus", "Carvalho", "Aiko", "Tanaka")), sent
    assert "id,name,email,city,plan,mrr\n1042," in sent and ",Pro,49\n1043," in sent  # the table's shape and ids stay


def test_a_names_particles_and_a_place_someone_went_to():
    from guardian_proxy.session.context import PartContext
    from guardian_proxy.session.rewrite import Hit

    text = "Our client Jan-Willem van der Berg disputes it."
    a = text.index("van der Berg")
    h = PartContext.tidy(Hit(0, a, a + 12, "PERSON", "van der Berg"), text)
    assert h.text == "van der Berg"  # the particles are the surname's, not ordinary words to cut
    found = [h]
    PartContext.widen_names(text, found)
    assert found[0].text == "Jan-Willem van der Berg"
    text = "me and Dmitri went to Kraków last week"
    a = text.index("Kraków")
    assert PartContext.tidy(Hit(0, a, a + 6, "PERSON", "Kraków"), text).entity == "LOCATION"


def test_a_ratio_an_error_code_and_a_number_the_user_calls_theirs():
    text = ("Explain the 70/30 rule and case no. 12/34. tsc fails with 'TS2345: Argument of type string' and exit "
            "code 137. My tax ID is 123456789.")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    assert part.why_not(0, slot, hit_at(chat, 0, "70/30", "CASE_NUMBER")) == "ratio"
    assert part.why_not(0, slot, hit_at(chat, 0, "12/34", "CASE_NUMBER")) != "ratio"  # a number's label before it
    assert part.why_not(0, slot, hit_at(chat, 0, "TS2345", "CASE_NUMBER")) == "error code"
    assert part.why_not(0, slot, hit_at(chat, 0, "137", "CASE_NUMBER")) == "error code"
    assert part.why_not(0, slot, hit_at(chat, 0, "123456789", "CASE_NUMBER")) is None  # "my … ID is": theirs


def test_a_listed_product_and_a_name_between_a_determiner_and_a_noun_are_things():
    text = "Why does Xcode hang? Our Vaultwarden login page fails. Our Priyanka says it works; the Kestrel alert too."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    assert part.why_not(0, slot, hit_at(chat, 0, "Xcode", "PERSON")) == "product"  # the recognizers' list
    assert part.why_not(0, slot, hit_at(chat, 0, "Vaultwarden", "PERSON")) == "product"
    assert part.why_not(0, slot, hit_at(chat, 0, "Kestrel", "PERSON")) == "product"
    assert part.why_not(0, slot, hit_at(chat, 0, "Priyanka", "PERSON")) is None  # a verb follows a person


def test_a_routes_end_a_writers_name_a_firm_and_a_series_by_their_words():
    text = ("How long is the drive from Lusaka to Lilongwe? I'm Dariush, 41, a nurse. Regards, Harbourview Lettings. "
            "Which of Octavia Butler's Xenogenesis novels comes first?")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    assert PartContext.tidy(hit_at(chat, 0, "Lilongwe", "PERSON"), text).entity == "LOCATION"
    assert PartContext.tidy(hit_at(chat, 0, "Dariush", "LOCATION"), text).entity == "PERSON"
    assert PartContext.tidy(hit_at(chat, 0, "Harbourview Lettings", "PERSON"), text).entity == "ORGANIZATION"
    assert part.why_not(0, slot, hit_at(chat, 0, "Octavia Butler", "PERSON")) == "work or public person"
    assert part.why_not(0, slot, hit_at(chat, 0, "Xenogenesis", "PERSON")) == "work or public person"


def test_a_split_that_adds_up_to_100_a_linters_rule_and_a_works_plot():
    text = ("How does the 50/30/20 rule work, unlike 12/10/25? Make Ruff ignore E501. "
            "Summarise the plot of Amara Okafor-Bright's The Salt Road.")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    assert part.why_not(0, slot, hit_at(chat, 0, "50/30/20", "CASE_NUMBER")) == "ratio"
    assert part.why_not(0, slot, hit_at(chat, 0, "12/10/25", "CASE_NUMBER")) != "ratio"  # 47: a date's shape
    assert part.why_not(0, slot, hit_at(chat, 0, "E501", "CASE_NUMBER")) == "error code"
    assert part.why_not(0, slot, hit_at(chat, 0, "Amara Okafor-Bright", "PERSON")) == "work or public person"


def test_a_job_titles_first_word_a_title_before_a_name_and_a_foreign_asks_verb():
    text = "I work as a Data analyst. Schreib eine Nachricht an Herrn Vogel. Écris à Madame Girard. Mr Okonkwo called."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    found = PartContext.regroup(text, [hit_at(chat, 0, "Data", "ORGANIZATION"), hit_at(chat, 0, "analyst", "OCCUPATION")])
    assert [(h.entity, h.text) for h in found] == [("OCCUPATION", "Data analyst")]
    assert part.why_not(0, slot, hit_at(chat, 0, "Schreib", "ORGANIZATION")) == "ordinary word"
    girard = hit_at(chat, 0, "Écris à Madame Girard", "ORGANIZATION")
    names = part.cued(0, text, [girard])
    assert girard.text not in [h.text for h in names] and {"Herrn Vogel", "Madame Girard"} <= {h.text for h in names}
    assert PartContext.tidy(hit_at(chat, 0, "Mr Okonkwo", "PERSON"), text).text == "Mr Okonkwo"  # the title stays


def test_holdout14_classes_an_id_after_its_label_a_going_verb_a_possessed_name_and_feature_choices():
    text = ("Summarise: staff no. 55120 is off. Heading to Porto in May with my cousin Iria Souto. Which trail "
            "is easier for beginners, Kalalau or Waimea? Merge Priya Raghunathan's branch. rustc says error[E0382].")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    found = PartContext.regroup(text, [hit_at(chat, 0, "55120", "DATE")])
    assert found[0].entity == "CASE_NUMBER"  # a number after an identifier's label
    h = PartContext.tidy(hit_at(chat, 0, "Heading to Porto", "ORGANIZATION"), text)
    assert (h.entity, h.text) == ("LOCATION", "Porto") and part.why_not(0, slot, h) == "trip asked about"
    assert PartContext.tidy(hit_at(chat, 0, "Kalalau", "PERSON"), text).entity == "LOCATION"
    assert PartContext.tidy(hit_at(chat, 0, "Priya Raghunathan", "LOCATION"), text).entity == "PERSON"
    assert part.why_not(0, slot, hit_at(chat, 0, "E0382", "CASE_NUMBER")) == "error code"


def test_holdout15_classes_a_log_date_a_protocol_a_form_a_stock_password_and_an_address_typed_a_place():
    text = ('2026/11/28 14:02:17 "GET /v2/health HTTP/1.1". My W-2 is wrong. POSTGRES_PASSWORD: postgres\n'
            "Home address: Flat 2, 9 Linden Grove, Norwich NR2 3JS")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    found = PartContext.regroup(text, [hit_at(chat, 0, "2026/11/28", "CASE_NUMBER"),
                                       hit_at(chat, 0, "Flat 2, 9 Linden Grove, Norwich NR2 3JS", "LOCATION")])
    assert [h.entity for h in found] == ["DATE", "STREET_ADDRESS"]
    assert part.why_not(0, slot, hit_at(chat, 0, "HTTP/1", "CASE_NUMBER")) == "version"
    assert part.why_not(0, slot, hit_at(chat, 0, "W-2", "CASE_NUMBER")) == "form or model"
    assert part.why_not(0, slot, hit_at(chat, 0, "postgres", "PASSWORD", nth=0)) == "stock example"


def test_holdout15_a_greeting_of_another_language_and_a_given_name_before_a_surname_ner_found():
    text = 'He wrote: "Hallo Emre, the rent goes up." My details: Fergus MacAlister, Team Leader.'
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    assert PartContext.tidy(hit_at(chat, 0, "Hallo Emre", "PERSON"), text).text == "Emre"
    found = [hit_at(chat, 0, "MacAlister", "PERSON")]
    PartContext.widen_names(text, found)
    assert found[0].text == "Fergus MacAlister"


def test_holdout16_classes_another_languages_words_a_hex_byte_and_a_day_month_year():
    text = "Warum heißt der Bodensee auf Englisch so? Devo chiedere il cambio per mia moglie Giulia. byte 0xe9 in 12/08/1985."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    assert part.why_not(0, slot, hit_at(chat, 0, "Bodensee", "PERSON")) == "a word of another language"
    assert part.why_not(0, slot, hit_at(chat, 0, "Devo", "PERSON")) == "a word of another language"
    assert part.why_not(0, slot, hit_at(chat, 0, "Giulia", "PERSON")) is None  # a listed given name stays a name
    assert part.why_not(0, slot, hit_at(chat, 0, "0xe9", "CASE_NUMBER")) == "code literal"
    assert PartContext.regroup(text, [hit_at(chat, 0, "12/08/1985", "CASE_NUMBER")])[0].entity == "DATE"


def test_holdout17_classes_a_cell_range_a_patterns_samples_a_ticket_key_a_sample_row_and_a_pasted_system_prompt():
    text = ('System: You are the customer assistant for Hollybrook Garden Supplies.\n'
            '=SUMIFS(D2:D500, B2:B500). A regex for invoices. Should match: INV-2024-00017.\n'
            'Jira ticket PAY-2291 fails.\nid,first_name,email\n2,Jane,jane.doe@example.com\n3,Test,a+tag@example.org\n')
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    assert part.why_not(0, slot, hit_at(chat, 0, "Hollybrook Garden Supplies", "ORGANIZATION")) == \
        "the assistant's own organisation"
    assert part.why_not(0, slot, hit_at(chat, 0, "D500", "CASE_NUMBER")) == "cell reference"
    assert part.why_not(0, slot, hit_at(chat, 0, "INV-2024-00017", "CASE_NUMBER")) == "a pattern's sample"
    assert part.why_not(0, slot, hit_at(chat, 0, "PAY-2291", "CASE_NUMBER")) == "ticket key"
    assert part.why_not(0, slot, hit_at(chat, 0, "Jane", "PERSON")) == "a sample record"
    assert part.why_not(0, slot, hit_at(chat, 0, "a+tag@example.org", "EMAIL_ADDRESS")) in ("a sample record",
                                                                                          "stock example")


def test_a_quoted_title_after_a_works_noun_a_hit_across_a_closing_quote_and_a_particle_before_a_given_name():
    text = "Should I read the novel «Beloved Kinship» first? Ich bin Jonas Weißenborn, Steuer-ID 47 192 836 518."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    h = PartContext.tidy(hit_at(chat, 0, "Beloved Kinship» first", "PERSON"), text)
    assert h.text == "Beloved Kinship" and part.why_not(0, slot, h) == "work or public person"
    assert PartContext.tidy(hit_at(chat, 0, "bin Jonas Weißenborn", "PERSON"), text).text == "Jonas Weißenborn"


def test_a_cue_does_not_make_a_name_of_a_word_written_as_code(gateway):
    """The OpenTelemetry cassettes say "My name is OpenTelemetry": a test's string, not a person (a cue vouches for a
    name's shape, not for inner capitals, digits or underscores)."""
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "My name is OpenTelemetry"}]}
    d, sent = send(gateway, "https://api.openai.com/v1/chat/completions", body, "sk-ctx-otel")
    assert sent == body


def test_a_persons_name_found_again_typed_as_something_else_is_theirs():
    text = "Zofia Wiśniewska-Nowak starts on Monday. Should I call her Zofia in emails?"
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    found = PartContext.regroup(text, [hit_at(chat, 0, "Zofia Wiśniewska-Nowak", "PERSON"),
                                       hit_at(chat, 0, "Zofia", "ORGANIZATION", nth=1)])
    assert [h.entity for h in found] == ["PERSON", "PERSON"]


def test_holdout19_classes_a_log_stamp_an_error_class_a_size_and_a_configs_name():
    text = ("[2026-11-04 10:12] Call with Dmitri about KeyError on a 900GB table.\n"
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: report-worker\n")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    assert part.why_not(0, slot, hit_at(chat, 0, "2026-11-04 10:12", "DATE_TIME")) == "a log's timestamp"
    assert part.why_not(0, slot, hit_at(chat, 0, "KeyError", "ORGANIZATION")) == "not a name's shape"
    assert part.why_not(0, slot, hit_at(chat, 0, "900GB", "CASE_NUMBER")) == "a measure"
    assert part.why_not(0, slot, hit_at(chat, 0, "report-worker", "USERNAME")) == "a config's name"


def test_a_value_a_records_key_types_takes_in_what_ner_found_inside_it():
    text = "order_id,customer_name,postcode\n10482,Imogen Thackeray,SN1 5LW\n10483,Rajesh Kulkarni,LE4 7ZB\n"
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part = PartContext(chat)
    found = [hit_at(chat, 0, "LE4", "ORGANIZATION")]
    names = part.cued(0, text, found)
    assert not found and ("LOCATION", "LE4 7ZB") in {(h.entity, h.text) for h in names}


def test_holdout20_21_classes_a_chat_exports_stamp_a_tables_header_a_role_in_general_and_a_contact_line():
    text = ("Summarise who is bringing what:\n[02/12/2026, 19:02:11] Aoife Gallagher: ok so Saturday\n"
            "Write one comment per student please.\n| Student | Test 1 |\n|---------|--------|\n| Aarav Sharma | 62 |\n"
            "| Bethany Cole | 45 |\nInvite list:\nFinn O'Rourke - mum's friend bev - 07306 718 244\n"
            "My details: Fergus, 0131 662 4183\n")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    assert part.why_not(0, slot, hit_at(chat, 0, "02/12/2026", "CASE_NUMBER")) == "a log's timestamp"
    assert part.why_not(0, slot, hit_at(chat, 0, "19:02:11", "DATE")) == "a log's timestamp"
    assert part.why_not(0, slot, hit_at(chat, 0, "Summarise", "PERSON")) == "ordinary word"
    assert part.why_not(0, slot, hit_at(chat, 0, "Student", "OCCUPATION")) == "field name"
    assert part.why_not(0, slot, hit_at(chat, 0, "student", "OCCUPATION")) == "a role in general"
    names = {h.text for h in part.cued(0, text, [])}
    assert {"Aarav Sharma", "Bethany Cole", "Finn O'Rourke"} <= names and "My" not in names


def test_a_postcode_after_a_town_and_a_state_joins_the_street_address():
    text = "employee Marisol Reyes, 4410 Ridgecrest Ave, Apt 2B, Tucson, AZ 85712. Also 18 Jubilee Crescent, Bengaluru 560034."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    found = PartContext.join_postcodes(text, [hit_at(chat, 0, "4410 Ridgecrest Ave, Apt 2B", "STREET_ADDRESS"),
                                              hit_at(chat, 0, "18 Jubilee Crescent, Bengaluru", "STREET_ADDRESS"),
                                              hit_at(chat, 0, "560034", "DATE")])
    assert [h.text for h in found] == ["4410 Ridgecrest Ave, Apt 2B, Tucson, AZ 85712",
                                       "18 Jubilee Crescent, Bengaluru 560034"]


def test_a_tax_forms_code_a_banks_bic_a_tests_name_and_a_station_are_no_ones():
    text = ("My tax return (SA100) and the SA103S pages; tax code 1257L W1/M1. Payroll: bic INGBNL2A.\n"
            "Blood test (HbA1c + lipids) on 9 Dec. The ICE from Berlin Hbf to Wien Hbf.")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    for value, entity in (("SA100", "CASE_NUMBER"), ("SA103S", "CASE_NUMBER"), ("W1/M1", "CASE_NUMBER"),
                          ("1257L", "DATE")):
        assert part.why_not(0, slot, hit_at(chat, 0, value, entity)) == "form or model", value
    assert part.why_not(0, slot, hit_at(chat, 0, "INGBNL2A", "CASE_NUMBER")) == "a bank's code"
    assert part.why_not(0, slot, hit_at(chat, 0, "HbA1c +", "DATE")) == "no date"
    assert part.why_not(0, slot, hit_at(chat, 0, "9 Dec", "DATE")) != "no date"
    assert part.why_not(0, slot, hit_at(chat, 0, "Berlin Hbf", "PERSON")) is not None


def test_machine_times_a_dotted_time_an_eponym_and_a_cited_case_are_no_ones():
    text = ('Why is it expired when the clock says 2026-12-03T09:30:00Z?\n{"iat": 1796287200000, "exp": 1796290800}\n'
            '94.173.58.210 - - [03/Dec/2026:08:14:07 +0000] "GET / HTTP/1.1" 200\n'
            "Panel at 11.30, plumber came at 4.30am. Our Bradford Factor trigger; the Turnbull guidelines "
            "(R v Turnbull [1977] QB 224) and Ward v Tesco Stores Ltd [1976] 1 WLR 810. Her line manager will run it.")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    assert part.why_not(0, slot, hit_at(chat, 0, "2026-12-03T09:30:00", "DATE")) == "a machine's timestamp"
    assert part.why_not(0, slot, hit_at(chat, 0, "1796287200000", "PHONE_NUMBER")) == "a machine's timestamp"
    assert part.why_not(0, slot, hit_at(chat, 0, "1796290800", "PHONE_NUMBER")) == "a machine's timestamp"
    assert part.why_not(0, slot, hit_at(chat, 0, "08:14:07", "DATE")) == "a log's timestamp"
    for value in ("11.30", "4.30am"):
        assert part.why_not(0, slot, hit_at(chat, 0, value, "DATE")) == "day or time of the week", value
    assert part.why_not(0, slot, hit_at(chat, 0, "Bradford", "LOCATION")) == "a named method"
    assert part.why_not(0, slot, hit_at(chat, 0, "Turnbull", "PERSON")) == "a named method"
    assert part.why_not(0, slot, hit_at(chat, 0, "Turnbull", "PERSON", nth=1)) == "a cited case"
    assert part.why_not(0, slot, hit_at(chat, 0, "Tesco Stores Ltd", "ORGANIZATION")) == "a cited case"
    assert part.why_not(0, slot, hit_at(chat, 0, "line manager", "OCCUPATION")) == "a role to the user"


def test_a_familys_title_a_nurses_title_and_a_degree_stay_with_the_name():
    text = "Seating: Uncle Fergus, Aunty Ngozi Eze and the vet, Dr Saoirse Kehoe MRCVS, with Nurse Okafor."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part = PartContext(chat)
    names = {h.text for h in part.cued(0, text, [])}
    assert {"Uncle Fergus", "Aunty Ngozi Eze", "Nurse Okafor"} <= names
    h = PartContext.tidy(hit_at(chat, 0, "Dr Saoirse Kehoe MRCVS", "PERSON"), text)
    assert h.text == "Dr Saoirse Kehoe"


@pytest.mark.parametrize("text, name", [
    ("Who was Edsger Dijkstra? And while you're at it, why is the Gaussian named after Carl Friedrich Gauss when "
     "de Moivre found it earlier?", "de Moivre"),
    ("How did Chimamanda Ngozi Adichie go from medicine to Purple Hibiscus? And is it true she grew up in a house "
     "Chinua Achebe had lived in?", "Chinua Achebe"),
    ("When was Marie Curie born?", "Marie Curie"),
    ("How did Ada Lovelace come to work with Charles Babbage, and what did her Note G on the Analytical Engine\n"
     "contain? Was her mother, Lady Byron, the reason?", "Ada Lovelace"),  # a wrapped line, her family
])
def test_a_public_life_asked_about_with_its_own_words(text, name):
    from guardian_proxy.session.namecues import asked_about

    h = hit_at(chat_of({"model": "m", "messages": [{"role": "user", "content": text}]}), 0, name, "PERSON")
    assert asked_about(text, h)
    assert not asked_about("When was my neighbour Marie Curie born?", hit_at(chat_of(
        {"model": "m", "messages": [{"role": "user", "content": "When was my neighbour Marie Curie born?"}]}),
        0, "Marie Curie", "PERSON"))


def test_an_author_cited_by_name_and_year_is_a_works():
    text = ("a collective good (Putnam, 2000) and (Bourdieu, 1986, p. 243). Coleman (1988) bridges them; Kahneman and "
            "Tversky (1979) and Smith et al. (2019) too. My tutor Dr. Halvorsen (2024 intake) disagrees.")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    for name in ("Putnam", "Bourdieu", "Coleman", "Kahneman", "Tversky", "Smith"):
        assert part.why_not(0, slot, hit_at(chat, 0, name, "PERSON")) == "a cited author", name
    assert part.why_not(0, slot, hit_at(chat, 0, "Halvorsen", "PERSON")) != "a cited author"


def test_holdout23_classes_an_epoch_an_id_key_a_products_name_and_a_schemas_field():
    text = ('{"assignee_id": 38800192733, "created": 1764148102}\nlogs at https://x.test/logs?t=1764712934\n'
            "SOQL result from our org; it renders wrong in Redoc.\nuserId : string\n")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    assert part.why_not(0, slot, hit_at(chat, 0, "38800192733", "PHONE_NUMBER")) == "a record's id"
    for value in ("1764148102", "1764712934"):
        assert part.why_not(0, slot, hit_at(chat, 0, value, "PHONE_NUMBER")) == "a machine's timestamp", value
    assert part.why_not(0, slot, hit_at(chat, 0, "SOQL", "NRP")) == "product"
    assert part.why_not(0, slot, hit_at(chat, 0, "Redoc", "PERSON")) == "product"
    assert part.why_not(0, slot, hit_at(chat, 0, "userId", "USERNAME")) == "field name"


def test_holdout22_classes_an_orcid_a_crediT_role_a_signature_a_number_label_and_a_family_word():
    text = ("Conceptualisation: Sebastián Morales Peña (ORCID 0000-0002-7714-3928), Hanne Kristiansen\n"
            "Formal analysis: Olusegun Bakare\nFieldwork: Adebayo Ogunleye (+234 803 417 2290).\n"
            "Signed (confidential to editor): Lars-Erik Sandvik, Stockholm University\n"
            "My parents, Olumide and Bisi Adeyemi, came. My student no. 19283746B expires. Babcia died in 2009.")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    names = {h.text for h in part.cued(0, text, [])}
    assert {"Sebastián Morales Peña", "Olusegun Bakare", "Adebayo Ogunleye", "Lars-Erik Sandvik", "Olumide"} <= names
    assert part.why_not(0, slot, hit_at(chat, 0, "student", "OCCUPATION")) == "field name"
    assert part.why_not(0, slot, hit_at(chat, 0, "Babcia", "PERSON")) == "a family's word"


def test_an_orcid_is_no_card_number():
    from guardian_proxy.session.rewrite import backstop

    assert not backstop(0, "ORCID 0000-0001-8826-4410")
    assert [h.entity for h in backstop(0, "card 4111-1111-1111-1111")] == ["CREDIT_CARD"]


def test_an_orders_an_invoices_and_a_tickets_number_are_the_shops():
    text = ("I ordered it (order #3318840257); invoice INV-0893 is due; PURCHASE ORDER PO-26-1187; ticket #88213.\n"
            "Parcel JJD0002249718304532 was signed for; booking reference 7KQ2MX8P.")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    assert part.why_not(0, slot, hit_at(chat, 0, "3318840257", "PHONE_NUMBER")) == "an order's number"
    for value in ("INV-0893", "PO-26-1187", "88213"):  # (a more particular rule may name it first: a ticket's key)
        assert part.why_not(0, slot, hit_at(chat, 0, value, "CASE_NUMBER")) in ("an order's number", "ticket key",
                                                                              "reference number"), value
    for value in ("JJD0002249718304532", "7KQ2MX8P"):  # a parcel's and a booking's name their holder
        assert part.why_not(0, slot, hit_at(chat, 0, value, "CASE_NUMBER")) != "an order's number", value


def test_a_phone_number_after_its_label_is_no_records_id():
    text = 'phone number: 07946318207, mobile_no=07946318207, "user_id": 38800192733'
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    assert part.why_not(0, slot, hit_at(chat, 0, "07946318207", "PHONE_NUMBER")) is None
    assert part.why_not(0, slot, hit_at(chat, 0, "07946318207", "PHONE_NUMBER", nth=1)) is None
    assert part.why_not(0, slot, hit_at(chat, 0, "38800192733", "PHONE_NUMBER")) == "a record's id"


def test_a_persons_number_test_or_year_is_theirs_not_an_eponym_or_a_citation():
    text = ("Sarah's number is 07700 900123. Tom's test results came back. My daughter Amara (2015) loves it. "
            "Crohn's disease, the Bradford Factor and Granovetter (1973) are no one's.")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    part, slot = PartContext(chat), chat.slots[0]
    for name in ("Sarah", "Tom", "Amara"):
        assert part.why_not(0, slot, hit_at(chat, 0, name, "PERSON")) not in ("a named method", "a cited author"), name
    assert part.why_not(0, slot, hit_at(chat, 0, "Crohn", "PERSON")) == "a named method"
    assert part.why_not(0, slot, hit_at(chat, 0, "Bradford", "LOCATION")) == "a named method"
    assert part.why_not(0, slot, hit_at(chat, 0, "Granovetter", "PERSON")) == "a cited author"


def test_a_whole_postcode_is_no_fact_a_place_alone_is():
    """"London N1 4RH" had been left as a fact about a place (no person in its sentence): a whole postcode names a
    street's few doors. The town alone stays a fact."""
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content":
                    "Write this up as a lost property report. Until 30 Nov the owner stays at a friend's flat, London "
                    "N1 4RH. Payment goes to Dublin 5, D05 K2X4."}]})
    assert keeps(chat, 0, "N1 4RH", "LOCATION") and keeps(chat, 0, "D05 K2X4", "LOCATION")
    assert not keeps(chat, 0, "London", "LOCATION")


def test_a_public_lifes_place_is_tied_to_no_one_the_user_knows():
    """"Why did Henry VIII break with Rome?" in a parent's message: the king is a public person ("a public office's
    holder"), so Rome beside him is a fact; the son's town stays his."""
    t = "Help my son with his history homework. Why did Henry VIII break with Rome? My son lives in Leeds."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": t}]})
    pc = PartContext(chat)
    henry = hit_at(chat, 0, "Henry VIII", "PERSON")
    assert pc.why_not(0, chat.slots[0], henry, [henry]) == "a public office's holder"
    assert pc.why_not(0, chat.slots[0], hit_at(chat, 0, "Rome", "LOCATION"), [henry]) == "fact"
    assert pc.why_not(0, chat.slots[0], hit_at(chat, 0, "Leeds", "LOCATION"), [henry]) is None


def test_a_public_person_of_the_list_stays_unless_a_cue_ties_them_to_the_user():
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content":
                    "My son wants Bukayo Saka on his birthday cake. My colleague Chris Evans says it's easy."}]})
    pc = PartContext(chat)
    text = chat.slots[0].text
    saka, evans = hit_at(chat, 0, "Bukayo Saka", "PERSON"), hit_at(chat, 0, "Chris Evans", "PERSON")
    pc.cued(0, text, [saka, evans])  # the cues are read first, as the stage does
    assert pc.why_not(0, chat.slots[0], saka) == "a public person"
    assert pc.why_not(0, chat.slots[0], evans) is None  # a kinship or role noun vouches for someone the user knows


def test_a_public_persons_relative_or_role_is_no_one_the_user_knows():
    """"her husband Pierre Curie", "Chairman and CEO Satya Nadella": the cue names someone's kin or role, not the
    user's; with a first person before it ("My boss, CEO …") it is the user's own people."""
    for text, name in (("She discovered radium with her husband Pierre Curie.", "Pierre Curie"),
                       ("Microsoft announced that Chairman and CEO Satya Nadella will open Build.", "Satya Nadella")):
        chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
        pc = PartContext(chat)
        h = hit_at(chat, 0, name, "PERSON")
        pc.cued(0, chat.slots[0].text, [h])
        assert pc.cues.get(id(h)) in ("after a kinship or role noun", "a name after a role")
        # (Microsoft's chairman is also a well-known company's officer: a public office's holder)
        assert pc.why_not(0, chat.slots[0], h) in ("a public person", "a public office's holder")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": "My boss, CEO Satya Nadella, wants it."}]})
    pc = PartContext(chat)
    h = hit_at(chat, 0, "Satya Nadella", "PERSON")
    pc.cued(0, chat.slots[0].text, [h])
    assert pc.why_not(0, chat.slots[0], h) is None


def test_a_shape_cue_does_not_stop_the_message_reader_and_the_us_is_no_first_person():
    """A name whose only cue is its shape (both words on the name lists) in a question about history; "the US dollar"
    speaks of no one."""
    text = ("Why did Weimar hyperinflation peak in November 1923 at about 4.2 trillion marks to the US dollar, and how "
            "did Hjalmar Schacht, Hans Luther and the Rentenmark end it so quickly?")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    pc = PartContext(chat)
    weimar, schacht = hit_at(chat, 0, "Weimar", "PERSON"), hit_at(chat, 0, "Hjalmar Schacht", "PERSON")
    pc.cued(0, text, [weimar, schacht])
    assert pc.cues.get(id(schacht)) == "a given name and a surname of the name lists"
    assert pc.why_not(0, chat.slots[0], schacht) == "a question about the world"
    assert pc.why_not(0, chat.slots[0], weimar) == "a question about the world"


def test_a_role_to_someone_of_the_users_and_the_next_one_are_no_ones_job():
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content":
                    "Help me reply to my son's teacher about the trip. Write it so it's clearer for the next carer."}]})
    pc = PartContext(chat)
    assert pc.why_not(0, chat.slots[0], hit_at(chat, 0, "teacher", "OCCUPATION")) == "a role to the user"
    assert pc.why_not(0, chat.slots[0], hit_at(chat, 0, "carer", "OCCUPATION")) == "a role in general"


def test_a_quoted_name_in_a_customers_log_line_is_a_person():
    text = 'customer_id=48213 name="Funmilayo Oyelaran" ip=102.89.47.213 retries=3'
    h = Hit(0, text.index("Funmilayo"), text.index('" ip'), "USERNAME", "Funmilayo Oyelaran")
    assert PartContext.tidy(h, text).entity == "PERSON"
    text = "{ name: 'Export Job' }"
    h = Hit(0, text.index("Export"), text.index("' }"), "USERNAME", "Export Job")
    assert PartContext.tidy(h, text).entity == "USERNAME"


def test_a_flights_number_is_an_airlines_not_the_travellers():
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content":
                    "Make an itinerary. Out: TP1351 LHR-LIS, 15 May, 07:30. Is EK 1 to Dubai still an A380? "
                    "My member no. AB1234 is on the booking."}]})
    pc = PartContext(chat)
    assert pc.why_not(0, chat.slots[0], hit_at(chat, 0, "TP1351", "CASE_NUMBER")) == "a flight's number"
    assert pc.why_not(0, chat.slots[0], hit_at(chat, 0, "EK 1", "CASE_NUMBER")) == "a flight's number"
    assert keeps(chat, 0, "AB1234", "CASE_NUMBER")  # no flight's word around it


def test_a_korean_surname_that_is_an_english_word_stays_in_the_name():
    """"Seo Hyun-woo called me": "Seo" (SEO) opens the sentence but is the surname, not a word before the name."""
    text = "Seo Hyun-woo called me."
    h = Hit(0, 0, len("Seo Hyun-woo"), "PERSON", "Seo Hyun-woo")
    assert PartContext.tidy(h, text).text == "Seo Hyun-woo"
    text = "Email Wanjiku about it."
    h = Hit(0, 0, len("Email Wanjiku"), "PERSON", "Email Wanjiku")
    assert PartContext.tidy(h, text).text == "Wanjiku"


def test_a_name_a_query_compares_with_a_name_column_is_a_person():
    """"c.last_name = 'Lacroix-Morel'" in SQL: NER's organisation took the closing quote in, and code around a name
    is no product."""
    text = "SELECT o.id FROM orders o\nWHERE c.email = 'seb@orange.fr'\n  AND c.last_name = 'Lacroix-Morel'\n"
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    pc = PartContext(chat)
    a = text.index("Lacroix")
    found = [Hit(0, a, a + len("Lacroix-Morel'"), "ORGANIZATION", "Lacroix-Morel'")]
    pc.cued(0, text, found)
    h = found[0]
    assert (h.entity, h.text) == ("PERSON", "Lacroix-Morel")
    assert pc.why_not(0, chat.slots[0], h) is None


def test_a_ticket_key_in_a_commit_message_is_the_trackers():
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content":
                    "How should I word the revert message?\n\ncommit a3f9c21e\n    billing: apply VAT (BILL-1182)"}]})
    pc = PartContext(chat)
    assert pc.why_not(0, chat.slots[0], hit_at(chat, 0, "BILL-1182", "CASE_NUMBER")) == "ticket key"


def test_a_columns_gap_ends_a_name():
    text = "Customer: Natalia Ferreira-Santos   Tel: 07480 319 522"
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    pc = PartContext(chat)
    found = [Hit(0, 10, text.index(":", 20), "ORGANIZATION", text[10:text.index(":", 20)])]
    pc.cued(0, text, found)
    assert [h.text for h in found if h.entity == "PERSON"] == ["Natalia Ferreira-Santos"]


def test_the_words_listed_beside_the_writer_are_people():
    """"(me, Tariq, Dervla, Mateus and Hyun-woo)": NER read the last three as one organisation and "Tariq" as
    another; beside "me" they are the writer's team."""
    text = "Our pub quiz team (me, Tariq, Dervla, Mateus and Hyun-woo) keeps losing. It was me, Arsenal and Leeds."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    pc = PartContext(chat)
    a, b = text.index("Dervla"), text.index(") keeps")
    found = [Hit(0, text.index("Tariq"), text.index("Tariq") + 5, "ORGANIZATION", "Tariq"),
             Hit(0, a, b, "ORGANIZATION", text[a:b])]
    out = pc.cued(0, text, found)
    people = sorted(h.text for h in found + out if h.entity == "PERSON")
    assert people == ["Dervla", "Hyun-woo", "Mateus", "Tariq"], people


def test_invites_going_to_a_list_of_given_names_are_no_trip():
    text = "Invites are going to Zainab, Oscar, Mei-Lin and Freddie. We're going to Paris and Florence in May."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    pc = PartContext(chat)
    persons = [hit_at(chat, 0, "Oscar", "PERSON")]
    assert pc.why_not(0, chat.slots[0], hit_at(chat, 0, "Zainab", "LOCATION"), persons) is None
    assert pc.why_not(0, chat.slots[0], hit_at(chat, 0, "Paris", "LOCATION")) == "trip asked about"


def test_the_writer_named_in_brackets_and_the_writers_own_name_after_me():
    text = "Four of us: me (Aditi), Tomasz, Chidi and Rosalind. Draft a letter from me, Nkechi Obi-Hartley?"
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    pc = PartContext(chat)
    a = text.index("Nkechi")
    found = [Hit(0, a, a + len("Nkechi Obi-Hartley"), "ORGANIZATION", "Nkechi Obi-Hartley")]
    out = pc.cued(0, text, found)
    people = {h.text for h in found + out if h.entity == "PERSON"}
    assert {"Tomasz", "Chidi", "Rosalind", "Nkechi Obi-Hartley"} <= people, people


def test_us_tax_forms_and_a_banks_routing_number_are_no_ones():
    text = ("Doing my 1040. W-2 box 1 wages $58,240 and a 1099-NEC for $7,350. An ABA routing number like Chase's "
            "021000021?")
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    pc = PartContext(chat)
    assert pc.why_not(0, chat.slots[0], hit_at(chat, 0, "1099-NEC", "CASE_NUMBER")) == "form or model"
    assert pc.why_not(0, chat.slots[0], hit_at(chat, 0, "1040", "DATE")) == "form or model"
    assert pc.why_not(0, chat.slots[0], hit_at(chat, 0, "021000021", "PHONE_NUMBER")) == "a bank's code"


def test_the_backstop_blocks_an_account_number_not_a_routing_number():
    from guardian_proxy.session.rewrite import aba_routing, backstop

    text = "My routing 021000021 account 12345678, routing 123456789."
    got = {h.text for h in backstop(0, text)}
    assert got == {"12345678", "123456789"} and aba_routing("021000021") and not aba_routing("123456789")


def test_a_saints_name_is_the_churchs():
    text = "Sunday church visitors from St Sophia's are fine. My son Nikos Markou visits."
    chat = chat_of({"model": "m", "messages": [{"role": "user", "content": text}]})
    pc = PartContext(chat)
    assert pc.why_not(0, chat.slots[0], hit_at(chat, 0, "St Sophia's", "PERSON")) == "a public person"
    assert pc.why_not(0, chat.slots[0], hit_at(chat, 0, "Nikos Markou", "PERSON")) is None

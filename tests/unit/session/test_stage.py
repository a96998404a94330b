"""Stage 7 through the real Gateway (Presidio + spaCy): consistency, hard rule, crossing, log fields,
restart, overrides, bad input, every API shape."""

import gzip
import json
import re

import pytest

from guardian_proxy.config import Override
from guardian_proxy.overrides import OverrideStore
from guardian_proxy.session import SessionStage
from guardian_proxy.types import RawRequest

pytestmark = pytest.mark.slow


def chat(msgs, url="https://api.openai.com/v1/chat/completions", key="sk-a", extra=None, headers=None, raw=None):
    body = raw if raw is not None else json.dumps({"model": "m", "messages": msgs, **(extra or {})}).encode()
    return RawRequest(method="POST", url=url, body=body,
                      headers=[("content-type", "application/json"), ("authorization", f"Bearer {key}")]
                      + (headers or []))


def sent(d) -> dict:
    return json.loads(d.rewrite.body) if d.rewrite and d.rewrite.body else None


def test_consistent_surrogates_across_turns_and_messages(gateway):
    m = [{"role": "system", "content": "Notes about Quentin Zarkowsky."},
         {"role": "user", "content": "I'm Quentin Zarkowsky; my colleague is Margaret Okafor."}]
    d1 = gateway.evaluate(chat(m), log=False)
    out1 = json.dumps(sent(d1))
    assert d1.action == "transform" and d1.rule == "chat-session"
    assert "Zarkowsky" not in out1 and "Osei" not in out1
    m += [{"role": "assistant", "content": "Hello Quentin Zarkowsky! Say hi to Margaret Okafor."},
          {"role": "user", "content": "Quentin again. What would Margaret Okafor say?"}]
    d2 = gateway.evaluate(chat(m), log=False)
    s2 = sent(d2)["messages"]
    sur = s2[1]["content"].split(";")[0][4:]  # the surrogate of Quentin Zarkowsky
    assert s2[0]["content"] == f"Notes about {sur}." and sent(d1)["messages"][1]["content"] == s2[1]["content"]
    assert sur in s2[2]["content"] and s2[3]["content"].startswith(sur.split()[0] + " again.")
    other = s2[1]["content"].split("colleague is ")[1].rstrip(".")
    assert other != sur and other in s2[3]["content"]
    assert d2.extra["session"] == d1.extra["session"] and d2.extra["turn"] == 2


def test_hard_rule_and_log_line_without_values(gateway):
    m = [{"role": "user", "content": "My SSN is 536-22-8714 and card 4111 1111 1111 1111."}]
    d = gateway.evaluate(chat(m, key="sk-hard"))
    assert sent(d)["messages"][0]["content"] == "My SSN is [BLOCKED] and card [BLOCKED]."
    line = json.loads(gateway.settings.decision_log.read_text().splitlines()[-1])
    assert line["id"] == d.id and line["blocked"] == 2 and line["turn"] == 1 and line["session"]
    for key in ("cpe", "retroactive", "counts", "crossed_turn", "chat_api"):
        assert key in line
    text = gateway.settings.decision_log.read_text()
    assert "536-22-8714" not in text and not re.search(r"4111[ -]?1111", text)
    raw = b"".join(p.read_bytes() for p in gateway.settings.state_dir.iterdir() if p.name.startswith("sessions.db"))
    assert b"536-22-8714" not in raw  # not the last 4 digits alone: hex digests in the vault can contain them


def test_quasi_identifiers_wait_for_the_crossing_then_the_whole_history_is_rewritten(gateway):
    m = [{"role": "user", "content": "Hi, I'm Rosalind Vantongeren and I live in Albuquerque."}]
    d1 = gateway.evaluate(chat(m, key="sk-cross"), log=False)
    u1 = sent(d1)["messages"][0]["content"]
    assert "Vantongeren" not in u1 and "Albuquerque" in u1 and not d1.extra["retroactive"]
    m += [{"role": "assistant", "content": "Nice to meet you."},
          {"role": "user", "content": "I was diagnosed with diabetes and I earn $85,000 a year."}]
    d2 = gateway.evaluate(chat(m, key="sk-cross"), log=False)
    body = json.dumps(sent(d2))
    assert d2.extra["retroactive"] and d2.extra["crossed_turn"] == 2 and d2.extra["cpe"] > 2.0
    for real in ("Vantongeren", "Albuquerque"):
        assert real not in body
    # the condition and the income the question is about stay (session.keep_after_tau), and the decision says so
    assert "diabetes" in body and "85,000" in body and d2.extra["kept"]["an attribute asked about"] == 2


def test_keep_after_tau_empty_replaces_the_attributes_too(gateway, tmp_path):
    """CAMP's paper replaces every value past τ, a condition too: `session.keep_after_tau: []`."""
    settings = gateway.settings.model_copy(update={"state_dir": tmp_path, "session": gateway.settings.session.model_copy(
        update={"keep_after_tau": []})})
    stage = SessionStage(settings, gateway.tables, detect=gateway.extractor.detector.detect)
    m = [{"role": "user", "content": "Hi, I'm Rosalind Vantongeren and I live in Albuquerque."},
         {"role": "assistant", "content": "Nice to meet you."},
         {"role": "user", "content": "I was diagnosed with diabetes and I earn $85,000 a year."}]
    req = chat(m, key="sk-paper")
    d = stage.decide(req, stage.recognise(req), gateway.extractor.extract(req), None)
    assert d.extra["retroactive"] and "an attribute asked about" not in d.extra.get("kept", {})
    assert "diabetes" not in sent(d)["messages"][2]["content"]


def test_restart_keeps_mappings_and_demasks(gateway, tmp_path):
    m = [{"role": "user", "content": "Please remember Bartholomew Quillfeather."}]
    d1 = gateway.evaluate(chat(m, key="sk-restart"), log=False)
    sur = sent(d1)["messages"][0]["content"][len("Please remember "):-1]
    fresh = SessionStage(gateway.settings, gateway.tables, detect=gateway.extractor.detector.detect)
    req = chat(m, key="sk-restart")
    c = fresh.recognise(req)
    d2 = fresh.decide(req, c, gateway.extractor.extract(req), None)
    assert sent(d2)["messages"][0]["content"] == f"Please remember {sur}."
    reply = json.dumps({"choices": [{"message": {"content": f"{sur}'s file; {sur.upper()}"}}]}).encode()
    out = json.loads(fresh.demask_response(d2.extra, reply, "application/json"))
    assert out["choices"][0]["message"]["content"] == "Bartholomew Quillfeather's file; BARTHOLOMEW QUILLFEATHER"
    fresh.close()


def test_overrides_bad_json_and_failures(gateway, monkeypatch):
    m = [{"role": "user", "content": "I'm Quentin Zarkowsky."}]
    monkeypatch.setattr(gateway, "overrides", OverrideStore(None, [Override(action="allow", domain="openai.com")]))
    d = gateway.evaluate(chat(m), log=False)
    assert d.action == "allow" and d.rewrite is None  # the user's explicit rule for the destination wins
    monkeypatch.undo()
    bad = gateway.evaluate(chat(None, raw=b'{"messages": [{"role": "user", "content": "Quentin'), log=False)
    assert bad.rule == "unparsed-pass" and "session" not in bad.extra  # not a chat request: general rules
    monkeypatch.setattr(gateway.session, "_rewrite", lambda *a: 1 / 0)
    failed = gateway.evaluate(chat(m), log=False)
    assert failed.action == "deny" and failed.rule == "session-error-fail-closed"


def test_tool_calls_gzip_and_other_apis(gateway):
    m = [{"role": "user", "content": "Save Quentin Zarkowsky"},
         {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "function": {
             "name": "save", "arguments": json.dumps({"name": "Quentin Zarkowsky", "phone": "+1 512-555-0198"})}}]},
         {"role": "tool", "tool_call_id": "c", "content": "Saved Quentin Zarkowsky (+1 512-555-0198)"}]
    body = gzip.compress(json.dumps({"model": "m", "messages": m}).encode())
    d = gateway.evaluate(chat(None, raw=body, headers=[("content-encoding", "gzip")], key="sk-tools"), log=False)
    out = json.loads(gzip.decompress(d.rewrite.body))["messages"]
    args = json.loads(out[1]["tool_calls"][0]["function"]["arguments"])
    assert args["name"] in out[2]["content"] and args["name"] != "Quentin Zarkowsky"
    assert "512-555-0198" not in json.dumps(out)
    an = {"model": "c", "max_tokens": 5, "system": "User: Quentin Zarkowsky", "messages": [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "Quentin Zarkowsky"}]}]}
    d = gateway.evaluate(chat(None, url="https://api.anthropic.com/v1/messages", raw=json.dumps(an).encode()), log=False)
    assert "Zarkowsky" not in d.rewrite.body.decode() and d.extra["chat_api"] == "anthropic"
    for url, b in (("http://localhost:11434/api/generate", {"model": "l", "prompt": "I am Quentin Zarkowsky"}),
                   ("http://localhost:11434/api/chat", {"model": "l", "messages": m[:1]}),
                   ("https://api.openai.com/v1/responses", {"model": "o", "input": "I am Quentin Zarkowsky"})):
        d = gateway.evaluate(chat(None, url=url, raw=json.dumps(b).encode()), log=False)
        assert d.rule == "chat-session" and "Zarkowsky" not in d.rewrite.body.decode(), url


def test_responses_previous_response_id_continues_the_session(gateway):
    r1 = chat(None, url="https://api.openai.com/v1/responses", key="sk-resp",
              raw=json.dumps({"model": "o", "input": "I am Ignatius Pembleton-Hart"}).encode())
    d1 = gateway.evaluate(r1, log=False)
    sur = json.loads(d1.rewrite.body)["input"][len("I am "):]
    reply = json.dumps({"id": "resp_abc123", "output": [{"type": "message", "content": [
        {"type": "output_text", "text": f"Hi {sur}"}]}]}).encode()
    meta = {"session": d1.extra["session"], "chat_api": "openai_responses"}
    assert b"Ignatius Pembleton-Hart" in gateway.chat_response(meta, reply, "application/json")
    gateway.session.store._bg.submit(lambda: None).result()  # the alias is written off the request path
    r2 = chat(None, url="https://api.openai.com/v1/responses", key="sk-resp", raw=json.dumps(
        {"model": "o", "previous_response_id": "resp_abc123", "input": "Ignatius Pembleton-Hart again"}).encode())
    d2 = gateway.evaluate(r2, log=False)
    assert d2.extra["session"] == d1.extra["session"] and d2.extra["turn"] == 2
    assert json.loads(d2.rewrite.body)["input"] == f"{sur} again"


def test_a_longer_span_that_stays_does_not_shadow_a_name_inside_it(gateway):
    from guardian_proxy.types import Span

    stage = gateway.session
    req = chat([{"role": "user", "content": "Ask Helen Fischer at Mercy General about it."}], key="sk-shadow")
    c = stage.recognise(req)
    action = gateway.extractor.extract(req)
    path, text = c.slots[0].path, c.slots[0].text
    end = text.index(" about")
    # a detector error: one long quasi-identifier span around the name, and the name itself
    action.spans = [Span(path=path, start=4, end=end, entity="ORGANIZATION", category="other", text=text[4:end],
                         direct=False),
                    Span(path=path, start=4, end=17, entity="PERSON", category="identity", text="Helen Fischer")]
    d = stage.decide(req, c, action, None)
    body = d.rewrite.body.decode()
    assert "Helen Fischer" not in body and "at Mercy General about it." in body


def test_a_chat_request_is_decided_once_by_its_session(gateway, monkeypatch):
    m = [{"role": "user", "content": "I'm Quentin Zarkowsky and I live in Albuquerque."}]
    monkeypatch.setattr(gateway.transformer, "transform", lambda *a: 1 / 0)  # stage 6 never runs on a chat
    d = gateway.evaluate(chat(m, key="sk-once"), log=False)
    assert d.action == "transform" and d.rule == "chat-session" and "Zarkowsky" not in json.dumps(sent(d))
    # stages 2–4 scored it and their risk is noted; the session decided it (no stage 6 level, no anonymizer stats)
    assert d.risk is not None and d.likelihood is not None and f"risk R {d.risk.R:.2f}" in d.explanation
    assert d.start_level is None and d.final_level is None and d.rounds == 0 and "anonymize" not in d.extra
    # an override that blocks decides alone: the session is not asked
    monkeypatch.setattr(gateway, "overrides", OverrideStore(None, [Override(action="deny", domain="openai.com")]))
    monkeypatch.setattr(gateway.session, "decide", lambda *a: 1 / 0)
    blocked = gateway.evaluate(chat(m, key="sk-once"), log=False)
    assert blocked.action == "deny" and blocked.override and blocked.rewrite is None
    assert blocked.extra["chat_api"] == "openai_chat" and "session" not in blocked.extra


def test_a_name_only_a_cue_found_is_in_the_decisions_provenance(gateway):
    """"my niece Amara" (a name the small NER misses): replaced, and the log's `found` says the session's name cue
    found it and why, never the value."""
    from guardian_proxy.decision_log import record

    m = [{"role": "user", "content": "Write a birthday message for my niece Amara, she turns seven."}]
    req = chat(m, key="sk-cue")
    d = gateway.evaluate(req, log=False)
    assert "Amara" not in sent(d)["messages"][0]["content"]
    rec = record(req, d)
    cue = [f for f in rec["found"] if f["by"] == "session:name-cue"]
    assert cue == [{"entity": "PERSON", "at": "json:$.messages[0].content", "by": "session:name-cue",
                    "why": "after a kinship or role noun", "n": 1}]
    assert "Amara" not in json.dumps(rec)


def test_a_hyphenated_given_name_is_replaced_whole(gateway):
    """"My colleague Min-jun Park" had been cut to "jun Park" (leaving "Min-"), and the cue's provenance lookup then
    failed the request closed."""
    m = [{"role": "user", "content": "My colleague Min-jun Park keeps taking credit for my work."}]
    d = gateway.evaluate(chat(m, key="sk-hyphen"), log=False)
    assert d.action == "transform" and d.rule == "chat-session"
    text = sent(d)["messages"][0]["content"]
    # whole words: a stand-in may hold them inside its own ("Kurt Parker")
    assert not re.search(r"\b(?:Min|jun|Park)\b", text) and text.startswith("My colleague ")


def test_a_conversation_moves_every_year_alike(gateway):
    """Past τ the dates are replaced; the years between two of them stay, so "born in 2015 … how old in 2030?"
    keeps its answer (each date had moved by its own 1-3 years)."""
    m = [{"role": "user", "content": "My son Mateus Oliveira was born on 14 February 2015 and was diagnosed with "
                                     "asthma in March 2019. How old will he be in 2030?"}]
    d = gateway.evaluate(chat(m, key="sk-years"), log=False)
    text = sent(d)["messages"][0]["content"]
    years = [int(y) for y in re.findall(r"\b(?:19|20)\d\d\b", text)]
    assert d.extra["retroactive"] and len(years) == 3 and 2015 not in years and 2030 not in years, text
    assert (years[1] - years[0], years[2] - years[0]) == (4, 15), text


def test_a_family_status_the_user_asks_about_stays(gateway):
    m = [{"role": "user", "content": "My sister Oluwakemi Adebayo is getting married in Lagos next month. "
                                     "Suggest a short speech opening."}]
    d = gateway.evaluate(chat(m, key="sk-family"), log=False)
    text = sent(d)["messages"][0]["content"]
    assert d.extra["retroactive"] and d.extra["kept"]["an attribute asked about"] == 1
    assert "getting married" in text and "Oluwakemi" not in text and "[FAMILY" not in text, text


def test_a_pasted_form_body_is_read_decoded_and_its_stand_ins_go_back_encoded(gateway):
    body = ("Decode this Twilio webhook: ToCountry=GB&From=%2B447946218357&Body=Hi+its+Nadia+Sharif+running+late+"
            "for+the+viewing+at+7+Elm+Row&NumMedia=0")
    d = gateway.evaluate(chat([{"role": "user", "content": body}], key="sk-form"), log=False)
    out = sent(d)["messages"][0]["content"]
    for value in ("Nadia+Sharif", "Nadia", "Sharif", "%2B447946218357", "7946218357", "Elm+Row"):
        assert value not in out
    form = out[out.index("ToCountry"):]
    assert " " not in form and re.fullmatch(r"ToCountry=GB&From=%2B[0-9]+&Body=Hi\+its\+[\w+]+\+running\+late\+for"
                                            r"\+the\+viewing\+at\+[\w+%.-]+&NumMedia=0", form), form
    person = re.search(r"its\+(\w+\+\w+)\+running", form).group(1).replace("+", " ")
    # the same person typed plainly later is the same stand-in, and the reply's decoded stand-in is de-masked
    d2 = gateway.evaluate(chat([{"role": "user", "content": body}, {"role": "assistant", "content": "Decoded."},
                                {"role": "user", "content": "Is Nadia Sharif the sender?"}], key="sk-form"), log=False)
    assert sent(d2)["messages"][2]["content"] == f"Is {person} the sender?"
    reply = json.dumps({"choices": [{"message": {"content": f"Body: Hi its {person} running late"}}]}).encode()
    back = json.loads(gateway.session.demask_response(d2.extra, reply, "application/json"))
    assert back["choices"][0]["message"]["content"] == "Body: Hi its Nadia Sharif running late"
    found = {sp.text: sp for sp in d.six.spans}  # the decision says the value was read decoded
    assert "URL-encoded" in found["Nadia+Sharif"].reason and "URL-encoded" in found["%2B447946218357"].reason


def test_a_lists_lower_case_names_and_a_known_names_lower_case_repeat_are_replaced(gateway):
    """Names typed in lower case that no NER finds: one listed beside a found person's ("Hamid Karimi, siobhan
    o'leary"), and a found person's rare given name again in lower case ("cheers eilidh" after "Eilidh Fraser"); a
    common word that is also a name part stays ("the fraser valley"), and so does a cited author beside another."""
    m = [{"role": "user", "content": "Present: Ngozi Eze (facilitator), Hamid Karimi, siobhan o'leary\n"
                                     "- siobhan raised the childcare issue.\n"
                                     "My colleague Eilidh Fraser sent the notes; reply 'cheers eilidh' about the fraser valley.\n"
                                     "Cite Kahneman and Tversky (1979) here."}]
    d = gateway.evaluate(chat(m, key="sk-siblings"), log=False)
    text = sent(d)["messages"][0]["content"]
    assert not re.search(r"(?i)\b(?:siobhan|o'leary|eilidh)\b", text), text
    assert "the fraser valley" in text and "Kahneman and Tversky (1979)" in text


def test_a_question_about_the_world_keeps_its_names_a_message_about_the_users_people_does_not(gateway):
    """The message reader: "who were Hakaru Hashimoto and Robert Graves" asks about public lives, and a stand-in would
    make the model answer another question; the decision says which rule kept them. A name beside the writer's own
    words ("splitting the airbnb with Jun-ho and Malak"), or in a message with someone's phone number, is replaced."""
    from guardian_proxy.decision_log import record

    q = ("Is Crohn's disease named after Burrill Crohn? And while you're at it, who were Hakaru Hashimoto and Robert "
         "Graves, and what's the difference between Hashimoto's thyroiditis and Graves' disease?")
    req = chat([{"role": "user", "content": q}], key="sk-reader-1")
    d = gateway.evaluate(req, log=False)
    assert d.rewrite is None or sent(d)["messages"][0]["content"] == q
    assert d.extra["kept"].get("a question about the world", 0) >= 1
    assert "Hashimoto" not in str(record(req, d))
    m = "splitting the airbnb with Jun-ho and Malak - 3 nights, £612 total, but Malak only stayed 2 nights. whats fair"
    text = sent(gateway.evaluate(chat([{"role": "user", "content": m}], key="sk-reader-2"), log=False))
    assert not re.search(r"\b(?:Jun-ho|Malak)\b", text["messages"][0]["content"])
    m = ("Who were Hakaru Hashimoto and Robert Graves? Ring Robert Graves on 07700 182 934 about the diagnosis "
         "before Friday.")
    text = sent(gateway.evaluate(chat([{"role": "user", "content": m}], key="sk-reader-3"), log=False))
    assert "Robert Graves" not in text["messages"][0]["content"]

"""Guesser, lexical verifier, verified escalation and the transformer on requests (no models loaded)."""

import json

from guardian_proxy.anonymize import Transformer
from guardian_proxy.anonymize.escalation import escalate
from guardian_proxy.anonymize.guesser import DeterministicGuesser, LLMGuesser, chunks
from guardian_proxy.anonymize.language import is_non_english
from guardian_proxy.anonymize.verifier import Guess, LexicalVerifier
from guardian_proxy.bodies import BodyLimits, parse_body
from guardian_proxy.config import AnonymizeSettings
from guardian_proxy.types import Action, RawRequest, Span


def test_verifier_accepts_substrings_and_shared_content_words_only():
    v = LexicalVerifier("The applicant lives in Kalogrea with her son.")
    assert v.verified(Guess("kalogrea", 0.9))
    assert v.verified(Guess("a village called Kalogrea", 0.9))  # shares a content word
    assert not v.verified(Guess("Laura Miller", 0.9))  # a surrogate: not in the original
    assert not v.verified(Guess("in", 0.9)) and not v.verified(Guess("of the", 0.9))


def test_a_number_is_verified_only_as_a_whole_number_of_the_original():
    v = LexicalVerifier("He was fined TRL 1,000,000 and paid EUR 5,443.70 in 1999.")
    # "1,000" and "10,000" are the bounds of the range L3 wrote ("EUR 1,000-10,000"), not values of the original
    assert not v.verified(Guess("1,000", 0.6)) and not v.verified(Guess("10,000", 0.6))
    assert v.verified(Guess("1,000,000", 0.6)) and v.verified(Guess("5,443.70", 0.6)) and v.verified(Guess("1999", 0.6))


def test_deterministic_guesser_reads_residue_not_placeholders():
    g = DeterministicGuesser().guess("[PERSON_1] wrote from j***@acme.com on 31 May 1991 about Xylotymbou.")
    by = {x.cue: x for x in g}
    assert by["mask"].value == "acme.com" and by["date"].confidence >= 0.8
    assert by["rare"].value == "Xylotymbou" and by["rare"].confidence >= 0.6
    assert not any("PERSON" in x.value for x in g)
    assert DeterministicGuesser().guess("[PERSON_1] asked for help with a [MEDICAL_CONDITION].") == []


class Levels:
    """render(level) with a fixed text per level: L1/L2 leak a verified value, L3 only a surrogate."""

    texts = {1: "J*** S**** from Xylotymbou", 2: "[PERSON_1] from Xylotymbou", 3: "Zephyrine Quoyle from [LOCATION]",
             4: "Zephyrine Quoyle from [LOCATION]", 5: "someone from somewhere"}

    def render(self, level):
        return {"text:": self.texts[level]}


def run(start, verify=True, rounds=5):
    return escalate(Levels().render, lambda t: t.get("text:", ""), DeterministicGuesser(),
                    LexicalVerifier("John Smith from Xylotymbou"), start, max_rounds=rounds, verify=verify)


def test_escalation_stops_when_no_verified_guess_is_left():
    out = run(1)
    assert out.level == 3 and out.rounds == 3 and out.upgrades == 2


def test_without_verification_surrogates_cause_unneeded_upgrades():
    out = run(1, verify=False)
    assert out.level == 5 and out.upgrades == 4  # "Zephyrine Quoyle" counted although it is not the original


def test_fixed_level_and_ceiling():
    assert run(1, rounds=0).level == 1
    assert run(5).level == 5 and run(5).rounds == 0


class FailingLLM:
    name = "failing"

    def chat_json(self, *a, **k):
        raise RuntimeError("back end down")

    def chat(self, *a, **k):
        raise RuntimeError("back end down")


class FakeLLM:
    """Stands in for a guardian_proxy.llm back end in this unit test (the real back ends have their own)."""

    name = "fake"

    def chat_json(self, messages, schema, max_tokens=256, timeout=20.0):
        return {"guesses": [{"value": "Xylotymbou", "confidence": 0.9}, {"value": "Atlantis", "confidence": 0.99},
                            {"confidence": 0.5}]}

    def chat(self, messages, max_tokens=256, timeout=20.0):
        return messages[-1]["content"].replace("Xylotymbou", "a village")


def test_llm_guesser_parses_answers_and_survives_failures():
    g = LLMGuesser(FakeLLM()).guess("[PERSON_1] from [LOCATION]")
    assert [x.value for x in g] == ["Xylotymbou", "Atlantis"]
    assert LLMGuesser(FailingLLM()).guess("text") == []
    assert all(len(c) <= 50 for c in chunks("word " * 100 + "\n" + "x. " * 40, 50))


def request(body: dict):
    raw = json.dumps(body).encode()
    return RawRequest(method="POST", url="https://api.example/x", headers=[("content-type", "application/json")],
                      body=raw)


def action_for(req, spans_by_value):
    parsed = parse_body(req.body, "application/json", None, BodyLimits())
    spans = []
    for f in parsed.fields:
        for value, entity in spans_by_value:
            i = f.text.find(value)
            if i >= 0:
                spans.append(Span(path=f.path, start=i, end=i + len(value), entity=entity, category="identity",
                                  text=value, direct=entity != "DATE"))
    a = Action(domain="api.example", host="api.example", fields=parsed.fields, spans=spans, body_format="json")
    a._parsed = parsed
    return a


def test_transform_writes_back_valid_json_with_types_and_records_no_values():
    req = request({"model": "gpt-4o-mini", "n": 2, "messages": [{"role": "user",
                  "content": "My name is Quentin Zarkowsky, born 3 March 1970. Please draft a letter."}]})
    a = action_for(req, [("Quentin Zarkowsky", "PERSON"), ("3 March 1970", "DATE")])
    rw, final, rounds = Transformer(AnonymizeSettings(), seed=b"t").transform(req, a, 3)
    out = json.loads(rw.body)
    assert out["model"] == "gpt-4o-mini" and out["n"] == 2  # structured values untouched, types kept
    content = out["messages"][0]["content"]
    assert "Zarkowsky" not in content and "3 March" not in content and content.endswith("Please draft a letter.")
    assert final >= 3 and rounds >= 1 and rw.span_counts == {"PERSON": 1, "DATE": 1}
    assert "Zarkowsky" not in json.dumps(rw.stats) and rw.stats["final_level"] == final


def test_empty_and_only_pii_inputs():
    empty = request({"text": ""})
    rw, final, rounds = Transformer().transform(empty, action_for(empty, []), 3)
    assert rw.body is None and final == 3
    only = request({"text": "Quentin Zarkowsky"})
    rw, final, _ = Transformer().transform(only, action_for(only, [("Quentin Zarkowsky", "PERSON")]), 5)
    assert "Zarkowsky" not in json.loads(rw.body)["text"]


def test_non_english_rule():
    fr = "Le patient Jean Dupont habite à Lyon depuis trois ans et travaille chez Renault comme ingénieur."
    assert is_non_english(fr)
    assert not is_non_english("The applicant was born in 1925 and lives in Nicosia with her family today.")
    assert not is_non_english("Bonjour Jean")  # too short to judge
    req = request({"text": fr})
    rw, final, _ = Transformer().transform(req, action_for(req, []), 2)
    out = json.loads(rw.body)["text"]
    assert rw.stats["strict_fields"] == 1
    for v in ("Dupont", "Lyon", "Renault", "Jean"):
        assert v not in out


def test_a_form_of_english_labels_is_english():
    form = "Gender: Non-binary. Name: Ashley Smith. Email: perkinsdonald@example.net. Phone: (665)615-0556x130."
    assert not is_non_english(form)
    assert is_non_english("Der Patient Hans Müller wohnt seit drei Jahren in München und arbeitet bei Siemens "
                          "als Ingenieur.")

"""CAMP's evaluation, reproduced through the real Gateway: four multi-turn conversations written for this
project (healthcare, hiring, finance, general chat) that disclose fragments turn by turn.

Each turn the client sends the whole history (real values: it only ever sees de-masked replies); the
"model" answers from what it received (tests/support/llm_server.answer: it names the person and echoes the
message), and the reply is de-masked as the proxy does. Asserted, per CAMP:
- the upstream never receives a real direct identifier, in any turn;
- from the turn CPE crosses τ on, no real quasi-identifier either (the whole history is rewritten), but the
  attributes the conversation is about (`session.keep_after_tau`: a condition, a medication, an occupation, an
  amount) reach the model as typed, since the answer depends on them and the identifiers around them are replaced;
- the crossing comes earlier in finance and hiring than in general chat;
- the client sees its own words and the real names back in every reply.
"""

import json

import pytest

from guardian_proxy.types import RawRequest
from tests.support.llm_server import answer

pytestmark = pytest.mark.slow

SCENARIOS = {
    "healthcare": dict(
        turns=["Hi, I need help preparing for a doctor's appointment.",
               "My name is Daniel Okonkwo and I'm 52 years old.",
               "I was diagnosed with type 2 diabetes in March 2021 and I take metformin.",
               "My doctor is Dr. Helen Fischer at Mercy General Hospital in Sacramento.",
               "You can reach me at daniel.okonkwo@outlook.com or 916-555-0143.",
               "What questions should I ask about my blood sugar?",
               "Thanks! Please summarise everything for Daniel Okonkwo."],
        direct=["Daniel Okonkwo", "Okonkwo", "Helen Fischer", "daniel.okonkwo@outlook.com", "916-555-0143"],
        quasi=["52 years old", "March 2021", "Mercy General Hospital", "Sacramento"],
        attributes=["type 2 diabetes", "metformin"], blocked=[]),
    "hiring": dict(
        turns=["I'm preparing interview questions for a data analyst role.",
               "The candidate is Priya Raman, 34 years old, currently a senior analyst at Northwind Traders in Denver.",
               "She expects a salary of $120,000 and her email is priya.raman@gmail.com.",
               "Her references are Mark Feldman and Susan Cho.",
               "Draft an offer letter for Priya Raman.",
               "Add that she starts on June 3, 2026.",
               "Thanks, that is all."],
        direct=["Priya Raman", "Raman", "priya.raman@gmail.com", "Mark Feldman", "Susan Cho"],
        quasi=["34 years old", "Northwind Traders", "Denver", "June 3, 2026"],
        attributes=["$120,000"], blocked=[]),
    "finance": dict(
        turns=["Can you help me build a monthly budget?",
               "I'm Maria Gonzalez, a nurse, and I earn $85,000 a year.",
               "My rent is $2,100 and I owe $14,500 on my credit card 4111 1111 1111 1111.",
               "My checking account number is 000123456789 at Chase.",
               "I live in Phoenix with my two kids.",
               "How much should I save each month?",
               "Summarise my plan for Maria Gonzalez."],
        direct=["Maria Gonzalez", "Gonzalez", "4111 1111 1111 1111", "000123456789"],
        quasi=["Chase", "Phoenix"], attributes=["nurse", "$85,000", "$2,100", "$14,500"],
        blocked=["4111 1111 1111 1111", "000123456789"]),
    "general": dict(
        turns=["Can you recommend a good sourdough recipe?",
               "Thanks! By the way, I'm Tom Becker.",
               "How long should I let the dough rise?",
               "I'm in Portland, is the humidity a problem?",
               "What about baking at high altitude?",
               "I work as a teacher at Lincoln High School.",
               "Can you give me a weekly baking schedule?",
               "Thanks, Tom Becker signing off."],
        direct=["Tom Becker", "Becker"],
        quasi=["Portland", "Lincoln High School"], attributes=["teacher"],
        blocked=[]),
}


def converse(gateway, name: str) -> tuple[int | None, list[dict]]:
    sc = SCENARIOS[name]
    history: list[dict] = [{"role": "system", "content": "You are a careful assistant."}]
    crossed, log = None, []
    for turn, said in enumerate(sc["turns"], start=1):
        history.append({"role": "user", "content": said})
        req = RawRequest(method="POST", url="https://api.openai.com/v1/chat/completions",
                         headers=[("content-type", "application/json"), ("authorization", f"Bearer sk-{name}")],
                         body=json.dumps({"model": "gpt-4o", "messages": history}).encode())
        d = gateway.evaluate(req, log=False)
        upstream = json.loads(d.rewrite.body) if d.rewrite and d.rewrite.body else json.loads(req.body)
        wire = json.dumps(upstream, ensure_ascii=False)
        assert d.extra["turn"] == turn and d.rule == "chat-session"
        crossed = d.extra["crossed_turn"]
        text, _ = answer(upstream)  # the model's reply, from what it received
        reply = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}).encode()
        shown = gateway.chat_response(d.extra, reply, "application/json") or reply
        content = json.loads(shown)["choices"][0]["message"]["content"]
        history.append({"role": "assistant", "content": content})
        log.append({"turn": turn, "wire": wire, "content": content, "crossed": crossed, "said": said})
    return crossed, log


@pytest.fixture(scope="module")
def runs(gateway):
    return {name: converse(gateway, name) for name in SCENARIOS}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_no_real_identifier_reaches_the_ai_service(runs, name):
    crossed, log = runs[name]
    sc = SCENARIOS[name]
    assert crossed is not None, f"{name}: CPE never crossed τ"
    for t in log:
        for v in sc["direct"]:
            assert v not in t["wire"], (name, t["turn"], v)
        if t["turn"] >= crossed:
            for v in sc["quasi"]:
                assert v not in t["wire"], (name, t["turn"], v)
        for v in sc.get("attributes", []):  # what the conversation is about reaches the model as typed
            assert v not in t["said"] or v in t["wire"], (name, t["turn"], v)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_client_sees_real_values(runs, name):
    _, log = runs[name]
    sc = SCENARIOS[name]
    for t in log:
        expect = t["said"]
        for v in sc["blocked"]:
            expect = expect.replace(v, "[BLOCKED]")  # never sent, so never coming back
        assert t["content"].split("You said: ", 1)[1] == expect, (name, t["turn"])
    persons = [v for v in sc["direct"] if " " in v and "@" not in v and not v[0].isdigit()]
    assert any(f"Noted, {p}. I will keep {p}'s details; {p.upper()} is on file." in t["content"]
               for t in log for p in persons)


def test_crossing_comes_earlier_in_finance_and_hiring_than_in_general_chat(runs):
    turns = {name: runs[name][0] for name in SCENARIOS}
    assert turns["finance"] <= 2 and turns["hiring"] <= 2 and turns["general"] >= 4, turns
    assert turns["finance"] < turns["general"] and turns["hiring"] < turns["general"]

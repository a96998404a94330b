"""Information returned to its data subject (`norms.identities`, `norms.returns_to`, `Norms.subjects_own`): a
support agent answering a customer's ticket may quote the customer's own words back to that customer; what the
ticket says about someone else (a neighbour the customer mentions) stays withheld, and so does the customer's own
information in a message to anyone else."""

from __future__ import annotations

import json

import pytest

from guardian_proxy.agents import Guard, Instructor, default_norms, default_record_model, detect_step
from guardian_proxy.agents.guard import recipients
from guardian_proxy.agents.items import parties_of
from guardian_proxy.agents.norms import addressed, identities, returns_to
from guardian_proxy.types import RawRequest

ASK = "I have a cleaning appointment on Thursday at 3 PM and I need to move it to next week, ideally Monday morning."
REACH = "You can reach me at 555-0142."
NEIGHBOUR = ("Also, my neighbour Carlos Ruiz told me he is being treated for oral cancer at your clinic; please do not "
             "book me at the same time as his chemotherapy sessions.")
TICKET = {"ticket_id": "T-4711", "from": "maria.lopez@example.com", "name": "Maria Lopez",
          "subject": "Moving my appointment", "body": f"Hello, {ASK} {REACH} {NEIGHBOUR}"}
LISTING = (f"Ticket T-4711\nFrom: Maria Lopez <maria.lopez@example.com>\nSubject: Moving my appointment\n\n"
           f"Hello, {ASK} {REACH} {NEIGHBOUR}")
SYSTEM = "You are a support agent for Brightline Dental. Answer each customer's ticket by e-mail with send_email."
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
         for n in ("get_ticket", "send_email")]
MOVED = "We have moved your cleaning appointment on Thursday at 3 PM to Monday at 9 AM."


def messages(ticket: str, instruction: str = "Please handle ticket T-4711 and reply to the customer.") -> list[dict]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": instruction},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
                "name": "get_ticket", "arguments": "{\"id\": \"T-4711\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": ticket}]


def reply(ask: str, neighbour: str, greeting: str = "Hello Maria") -> str:
    """What an agent answers: the customer's words quoted, its own answer, and (the leak) the neighbour's sentence."""
    return f"{greeting}, thanks for your ticket. You wrote: \"{ask}\" {MOVED} {REACH} Noted: {neighbour}"


def test_identities_are_addresses_and_whole_names():
    assert identities("Maria Lopez <Maria.Lopez@Example.com>") == {"maria lopez", "maria.lopez@example.com"}
    assert identities("maria.lopez@example.com") == {"maria.lopez@example.com"}
    assert identities("Maria") == set() and identities("Room 4B") == set() and identities("#support") == set()
    assert addressed("Email Dana (dana@acme.example) and cc ops@acme.example.") == [{"dana@acme.example"},
                                                                                   {"ops@acme.example"}]


def test_returns_to_needs_every_recipient_to_be_the_subject():
    owners = identities("maria.lopez@example.com") | identities("Maria Lopez")
    assert returns_to(owners, [identities("MARIA.LOPEZ@example.com")])
    assert returns_to(owners, [identities("Maria Lopez")])  # the same name
    assert not returns_to(owners, [identities("maria.lopez@example.com"), identities("dana@acme.example")])
    assert not returns_to(owners, [identities("Maria")])  # a first name alone is nobody for sure
    assert not returns_to(owners, []) and not returns_to(frozenset(), [identities("maria.lopez@example.com")])
    args = {"to": "maria.lopez@example.com", "cc": ["Dana Kim <dana@acme.example>"], "thread_id": "T-4711"}
    assert recipients(args) == [{"maria.lopez@example.com"}, {"dana kim", "dana@acme.example"}]
    assert recipients({"to": "a@x.example, b@y.example"}) == [{"a@x.example"}, {"b@y.example"}]
    assert recipients({"message": {"to_email": "a@x.example"}}) == [{"a@x.example"}]
    assert recipients({"email": "maria.lopez@example.com", "notes": "…"}) == []  # filed under her address, not sent


def test_the_parties_of_a_json_object_and_of_a_listing_block():
    parties = parties_of("get_ticket", json.dumps(TICKET))
    assert parties["get_ticket:$.body"] == ("maria.lopez@example.com", "Maria Lopez")
    inbox = json.dumps({"emails": [{"from": {"name": "Ann Lee", "email": "ann@x.example"}, "body": "Hi."}]})
    assert parties_of("read", inbox)["read:$.emails[0].body"] == ("Ann Lee", "ann@x.example")
    listing = parties_of("get_ticket", LISTING)
    assert set(listing.values()) == {("Maria Lopez <maria.lopez@example.com>",)}


def test_the_subjects_own_sentences_are_not_about_anyone_else():
    norms = default_norms()
    own = norms.subjects_own(["Maria Lopez here.", ASK, REACH, NEIGHBOUR, "The sessions are on Tuesdays.",
                              "I can come any day."], ("maria.lopez@example.com", "Maria Lopez"))
    # her own name is not another person; the neighbour's sentence and the one after it (no first person) are his
    assert own == [True, True, True, False, False, True]


@pytest.mark.parametrize("shape", ["json", "listing"])
@pytest.mark.parametrize("model", [True, False], ids=["record_model", "rules"])
def test_a_support_reply_keeps_the_customers_own_words_and_drops_the_neighbour(shape, model):
    ticket = json.dumps(TICKET) if shape == "json" else LISTING
    ins = Instructor(default_norms(), records=default_record_model() if model else None)
    g = ins.guide(detect_step("openai_chat", {"model": "m", "messages": messages(ticket), "tools": TOOLS}))
    do_not = g.text.split("Do NOT include")[1].split("This is the own information")[0]
    assert ASK not in do_not and REACH not in do_not and "Carlos Ruiz" in do_not, g.text
    assert "use it only in a message to that person" in g.text and ASK in g.text, g.text
    guard = Guard(ins)
    body = reply(ASK, NEIGHBOUR)
    for to in ("maria.lopez@example.com", "Maria Lopez <maria.lopez@example.com>", ["Maria.Lopez@example.com"]):
        res = guard.check_call("send_email", json.dumps({"to": to, "subject": "Re: Moving my appointment",
                                                         "body": body}), g)
        out = json.loads(res.arguments)
        assert ASK in out["body"] and MOVED in out["body"] and REACH in out["body"], out
        assert "Carlos" not in out["body"] and "cancer" not in out["body"], out
        assert out["subject"] == "Re: Moving my appointment" and out["to"] == to
    # the same words to anyone else (a colleague; the customer with a colleague in copy; no address) stay withheld
    for args in ({"to": "dana@brightline.example"}, {"to": "maria.lopez@example.com", "cc": "dana@brightline.example"},
                 {"channel": "#front-desk"}, {}):
        out = json.loads(guard.check_call("send_email", json.dumps({**args, "body": body}), g).arguments)
        assert ASK not in out["body"] and "Carlos" not in out["body"], (args, out)


def test_the_instructions_addressee_who_is_someone_else_keeps_the_customers_words_withheld():
    ins = Instructor(default_norms(), records=default_record_model())
    g = ins.guide(detect_step("openai_chat", {"model": "m", "tools": TOOLS, "messages": messages(
        json.dumps(TICKET), "Summarise ticket T-4711 for my colleague Dana (dana@brightline.example).")}))
    assert "use it only in a message to that person" not in g.text and ASK in g.text.split("You may use")[0]


def test_through_the_gateway_the_customer_addressed_in_the_clear_gets_their_own_words(gateway):
    """The session stage pseudonymises the ticket before the agent stage reads it, and de-masks the reply before the
    guard reads it: the customer's address in the clear is recognised from the ticket as the client sent it."""
    req = RawRequest(method="POST", url="https://api.openai.com/v1/chat/completions",
                     headers=[("content-type", "application/json"), ("authorization", "Bearer sk-support-desk")],
                     body=json.dumps({"model": "gpt-4o", "messages": messages(json.dumps(TICKET)),
                                      "tools": TOOLS}).encode())
    d = gateway.evaluate(req, log=False)
    sent = json.loads(d.rewrite.body)["messages"]
    guidance, ticket = sent[0]["content"], json.loads(sent[-1]["content"])
    assert "Lopez" not in guidance and "use it only in a message to that person" in guidance, guidance
    seen = ticket["body"]  # the model writes with what it read: the surrogates
    ask, neighbour = seen[seen.index("I have"):seen.index(REACH) - 1], seen[seen.index("Also, "):]
    for to, mine in ((ticket["from"], True), ("dana@brightline.example", False)):
        args = {"to": to, "body": reply(ask, neighbour, f"Hello {ticket['name'].split()[0]}")}
        answer = {"id": "r1", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "tool_calls",
                  "message": {"role": "assistant", "content": None, "tool_calls": [{"id": "c2", "type": "function",
                              "function": {"name": "send_email", "arguments": json.dumps(args)}}]}}]}
        shown = gateway.chat_response({**d.extra, "id": d.id}, json.dumps(answer).encode(), "application/json")
        out = json.loads(json.loads(shown)["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])
        assert (ASK in out["body"]) is mine and "Carlos" not in out["body"] and "cancer" not in out["body"], out
        if mine:  # the answer goes too; to the colleague it repeats the customer's appointment: cut as well
            assert MOVED in out["body"] and out["to"] == "maria.lopez@example.com" and "Hello Maria" in out["body"], out

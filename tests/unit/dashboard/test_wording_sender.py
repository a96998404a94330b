"""The words name the program that sent a request (dashboard/wording.py): the block page's reason and the JSON 403's
(`of_decision`), and the detail view's sentence: "your e-mail address, sent by python3 agent.py to a data broker".
A program that cannot be known (another machine, no permission) is never named; a page, when known, is the sender."""

from __future__ import annotations

from guardian_proxy.dashboard import wording
from guardian_proxy.dashboard.block_actions import page
from guardian_proxy.types import Action, Decision, Span

AGENT = {"name": "python3 agent.py", "pid": 978, "exe": "/usr/bin/python3.11", "kind": "tool"}


def blocked(app=None, site=None) -> Decision:
    a = Action(domain="broker.example", host="t.broker.example", categories={"contact": 1}, recipient="data_broker",
               site=site, app=app,
               spans=[Span(path="json:$.email", entity="EMAIL_ADDRESS", category="contact", start=0, end=1, text="x")])
    return Decision(action="deny", six=a, explanation="contact → data_broker for marketing → R 0.91 ≥ 0.60")


def test_the_block_reason_names_the_program():
    words, numbers = wording.of_decision(blocked(AGENT))
    assert words == ("Your e-mail address, sent by python3 agent.py to a data broker (broker.example), was stopped "
                     "before it left this machine.")
    assert numbers.endswith("R 0.91 ≥ 0.60")


def test_a_program_that_cannot_be_known_is_not_named():
    for app in (None, {"name": "remote"}, {"name": "unknown", "why": "no-permission"}):
        words, _ = wording.of_decision(blocked(app))
        assert words.startswith("Your e-mail address, sent by an app or tool to a data broker"), words
        assert "unknown" not in words and "remote" not in words and "another machine" not in words


def test_a_known_page_is_the_sender():
    words, _ = wording.of_decision(blocked(AGENT, site="shop.example"))
    assert words.startswith("Your e-mail address, sent by shop.example to a data broker (broker.example)")


def test_the_detail_sentence_names_the_program_for_every_action():
    rec = {"host": "api.example.com", "domain": "example.com", "recipient": "analytics", "categories": {"contact": 1},
           "spans": {"EMAIL_ADDRESS": 1}, "app": AGENT}
    assert "sent by python3 agent.py to an analytics service" in wording.sentence({**rec, "action": "deny"})
    assert wording.sentence({**rec, "action": "allow"}).endswith(", sent by python3 agent.py (no web page).")
    assert "sent by python3 agent.py (no web page)" in wording.sentence({**rec, "action": "transform"})
    nothing = {**rec, "categories": {}, "spans": {}, "action": "deny"}
    assert "sent by python3 agent.py (no web page)" in wording.sentence(nothing)


def test_the_block_page_says_it():
    body, _ = page(blocked(AGENT), "https://t.broker.example/collect", {})
    html = body.decode()
    assert "sent by python3 agent.py to a data broker (broker.example)" in html
    assert html.index("id='guardian-reason'") < html.index("python3 agent.py")


def test_the_extractor_carries_the_program_into_the_action():
    from guardian_proxy.extract.detector import Detector
    from guardian_proxy.extract.extractor import Extractor
    from guardian_proxy.types import RawRequest

    req = RawRequest(method="POST", url="https://t.broker.example/collect", body=b'{"email":"jane.doe@gmail.com"}',
                     headers=[("content-type", "application/json")], app=AGENT)
    action = Extractor(Detector(ner=False)).extract(req)
    assert action.app == AGENT and action.categories.get("contact")
    assert Extractor.extract(Extractor.__new__(Extractor), req).app == AGENT  # the failure path keeps it too


def test_the_json_403_reason_says_it():
    from guardian_proxy.mitm.blocking import explained

    reason = explained(blocked(AGENT), "contact → data_broker → R 0.91 ≥ 0.60")
    assert reason.startswith("Your e-mail address, sent by python3 agent.py to a data broker (broker.example)")
    assert reason.endswith("Why: contact → data_broker → R 0.91 ≥ 0.60")
    assert "sent by an app or tool" in explained(blocked({"name": "unknown", "why": "gone"}), "x")

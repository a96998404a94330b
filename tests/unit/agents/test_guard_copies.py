"""The guard lets a part of a shareable item go even where a withheld record holds the same words inside a longer
sentence (guardian_proxy/agents/guard.py); a withheld item itself stays out."""

import json

from guardian_proxy.agents import Guard, Instructor, default_norms, detect_step
from guardian_proxy.agents.instructor import Guidance, Judged
from guardian_proxy.agents.items import Item, content_words

SHARED = "The quarterly planning meeting moves to Friday at ten in room 4B."
WITHHELD = ("Sam said the quarterly planning meeting moves to Friday at ten in room 4B because he has chemotherapy "
            "on Thursday.")


def guidance() -> Guidance:
    judged = [Judged(Item(SHARED, "Notes:$.notes[0].content", 0), [], content_words(SHARED)),
              Judged(Item(WITHHELD, "Notes:$.notes[1].content", 0), ["health"], content_words(WITHHELD))]
    return Guidance("coworker", judged, "")


def check(text: str):
    guard = Guard(Instructor(default_norms()))
    res = guard.check_call("send_email", json.dumps({"to": "dana@acme.example", "body": text}), guidance())
    return json.loads(res.arguments)["body"], res


def test_a_shareable_sentence_goes_though_a_withheld_one_holds_its_words():
    body, res = check(SHARED)
    assert body == SHARED and res.removed == 0
    body, res = check("The planning meeting moves to Friday.")  # a part of it
    assert body == "The planning meeting moves to Friday." and res.removed == 0


def test_the_withheld_sentence_and_new_words_stay_out():
    body, res = check(f"{SHARED}\n{WITHHELD}")
    assert body == SHARED and res.removed == 1
    body, res = check("The planning meeting moves to Friday because of Sam's chemotherapy.")  # words of no shareable item
    assert res.removed == 1 and "chemotherapy" not in body


def test_an_observed_sentence_that_is_both_shareable_and_withheld_stays_out():
    g = guidance()
    g.judged.append(Judged(Item(SHARED, "Mail:$.emails[0].body", 0), ["health"], content_words(SHARED)))
    res = Guard(Instructor(default_norms())).check_call("send_email", json.dumps({"body": SHARED}), g)
    assert res.removed == 1


def test_inbox_step_still_withholds_the_diagnosis():
    from tests.unit.agents.test_items import SHAPES, copy_all, request

    ins = Instructor(default_norms())
    g = ins.guide(detect_step("openai_chat", request(SHAPES["json"])))
    res = Guard(ins).check_call("send_email", json.dumps({"body": copy_all(SHAPES["json"])}), g)
    assert "cancer" not in json.loads(res.arguments)["body"]

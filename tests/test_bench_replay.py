"""scripts/bench_replay.py: its judging criteria on hand-made requests, and a real replay of a small subset of
../shared/data/realtraffic through a real proxy (slow)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts import bench_replay as br  # noqa: E402

pytestmark = pytest.mark.skipif(not (br.DATA / "scrub.py").exists(), reason="../shared/data/realtraffic is absent")

PAGE = "shop.example"


def item(url: str, body: bytes = b"", headers=None, arrived_url: str | None = None, arrived_body: bytes | None = None,
         blocked: bool = False, method: str = "POST", tool: bool = False) -> br.Item:
    """A request as sent, and what the upstream received (the same unless told)."""
    hs = [("Host", br.urlsplit(url).netloc)] + list(headers if headers is not None else
                                                     [("Origin", f"https://www.{PAGE}"),
                                                      ("Referer", f"https://www.{PAGE}/cart"),
                                                      ("Sec-Fetch-Site", "cross-site")])
    if body:
        hs.append(("Content-Type", "application/json" if body[:1] == b"{" else "application/x-www-form-urlencoded"))
    it = br.Item(file="hand-made.har", idx=1, method=method, url=url, headers=hs, body=body, page=PAGE, tool=tool)
    it.resp_body = it.got_body = b'{"ok": true}'
    it.status, it.blocked = (204 if blocked else 200), blocked
    if not blocked:
        sp = br.urlsplit(arrived_url or url)
        path = sp.path + (f"?{sp.query}" if sp.query else "")
        it.arrived = [{"method": method, "path": path, "headers": hs,
                       "body": body if arrived_body is None else arrived_body}]
    return it


def test_rewrite_with_nothing_personal_is_needless():
    # a timing float taken for a card number, in an analytics call with nothing personal in it
    it = item("https://www.google-analytics.com/g/collect?v=2&tid=G-ABC&_et=52.123&cid=123.456",
              arrived_url="https://www.google-analytics.com/g/collect?v=2&tid=G-ABC&_et=52.[CREDIT_CARD_1]&cid=123.456")
    r = br.judge(it)
    assert r["class"] == "tracker" and r["verdict"] == "needless"
    ch = [c for c in r["changes"] if not c["personal"]]
    assert ch and ch[0]["field"] == "query:_et" and "[CREDIT_CARD_1]" in ch[0]["to"]
    assert "52.123" not in json.dumps(r)  # shapes, never values


def test_personal_value_to_a_tracker():
    body = json.dumps({"event": "purchase", "email": "jdoe.smith@example.com", "value": 12.5}).encode()
    url = "https://www.facebook.com/tr/"
    leak = br.judge(item(url, body))
    assert leak["class"] == "tracker" and leak["verdict"] == "leak" and leak["leaked_kinds"] == ["email"]
    rewritten = br.judge(item(url, body, arrived_body=body.replace(b"jdoe.smith@example.com", b"[EMAIL_1]")))
    assert rewritten["verdict"] == "rewritten_personal"
    # the e-mail rewritten, and the amount too: the amount is a needless change
    both = br.judge(item(url, body, arrived_body=body.replace(b"jdoe.smith@example.com", b"[EMAIL_1]")
                         .replace(b"12.5", b"99.9")))
    assert both["verdict"] == "needless" and [c["field"] for c in both["changes"] if not c["personal"]] == ["body:$.value"]
    blocked = br.judge(item(url, body, blocked=True))
    assert blocked["verdict"] == "tracker_blocked"


def test_user_flow_changed_or_blocked_is_breakage():
    login = b"email=jdoe.smith%40example.com&password=Xk3%24pq9Lm"
    url = f"https://www.{PAGE}/login"
    assert br.judge(item(url, login))["verdict"] == "ok"
    changed = br.judge(item(url, login, arrived_body=b"email=jdoe.smith%40example.com&password=%5BPASSWORD_1%5D"))
    assert changed["class"] == "user" and "breakage" in changed["flags"]
    blocked = br.judge(item(url, login, blocked=True))
    assert blocked["verdict"] == "breakage"
    # a request no page made (curl, an SDK) to an unknown host is the user's own tool
    tool = item("https://api.unknown-saas.io/v1/contact", login, headers=[("User-Agent", "curl/8.5")])
    assert br.classify(tool) == ("user", "tool (no page headers)")
    # a third party that is not a tracker, blocked with nothing personal: needless
    cdn = br.judge(item("https://cdn.somewhere-else.net/img/product/8901234567890.jpg", method="GET", blocked=True))
    assert cdn["class"] == "other" and cdn["verdict"] == "needless"


def test_ai_chat_turn_pseudonym_only_where_personal():
    msg = {"model": "gpt-4o", "messages": [{"role": "user", "content": "I am Jordan Smith. What is the capital of France?"}]}
    body = json.dumps(msg).encode()
    url = "https://api.openai.com/v1/chat/completions"
    hdr = [("Authorization", "Bearer sk-test"), ("User-Agent", "OpenAI/Python")]
    ok = br.judge(item(url, body, headers=hdr, tool=True,
                       arrived_body=body.replace(b"Jordan Smith", b"Casey Rivers")))
    assert ok["class"] == "ai_chat" and ok["verdict"] == "rewritten_personal"
    broken = br.judge(item(url, body, headers=hdr, tool=True,
                           arrived_body=body.replace(b"France", b"Micronesia")))
    assert broken["verdict"] == "ai_broken" and "needless" in broken["flags"]
    it = item(url, body, headers=hdr, tool=True)
    it.got_body = b'{"ok": false}'  # the reply the client got is not the recorded one
    assert br.judge(it)["verdict"] == "ai_broken"
    it.got_body = b'{"ok":true}'  # the same JSON laid out anew: counted apart
    r = br.judge(it)
    assert r["verdict"] == "ok" and "reply_layout" in r["flags"]


def test_ai_chat_turn_person_the_prompt_names():
    """A reversible pseudonym of a person the prompt itself names ("a person named Alice", "Alice who is 30 years
    old") and of the rest of a stand-in's postal address is the product; a country changed is still broken."""
    url = "https://generativelanguage.googleapis.com/v1beta/models/gemini-flash-latest:generateContent"
    hdr = [("x-goog-api-key", "k"), ("User-Agent", "python-httpx")]

    def turn(text: str, sent: str, system: str | None = None):
        body = json.dumps({"contents": [{"role": "user", "parts": [{"text": text}]}]}).encode()
        out = {"contents": [{"role": "user", "parts": [{"text": sent}]}]}
        if system is not None:
            out["systemInstruction"] = {"parts": [{"text": system}]}
        return br.judge(item(url, body, headers=hdr, tool=True, arrived_body=json.dumps(out).encode()))

    r = turn("Create a person named Alice living in San Francisco", "Create a person named Andrea living in San Francisco")
    assert r["class"] == "ai_chat" and r["verdict"] == "rewritten_personal" and "named_person_pseudonym" in r["flags"]
    r = turn("Add Alice who is 30 years old and lives at 889 Sample Road, San Francisco, CA 94102 to the database",
             "Add Denise who is 26 years old and lives at 12309 Gabriela Pines, CA 86507 to the database")
    assert r["verdict"] == "rewritten_personal", r["changes"]
    # the same cues do not make a place or a fact a person: changing them is still broken
    assert turn("What is the capital of France?", "What is the capital of Micronesia?")["verdict"] == "ai_broken"
    assert turn("Create a person named Alice living in France", "Create a person named Alice living in Peru")[
        "verdict"] == "ai_broken"
    assert turn("Alice is a city in Texas. How big is it?", "Maria is a city in Texas. How big is it?")[
        "verdict"] == "ai_broken"
    # agent guidance in the instruction field of a turn that carries personal data: the product, counted apart
    r = turn("Add Alice who is 30 years old", "Add Denise who is 26 years old", system="Privacy: withhold her age.")
    assert r["verdict"] == "rewritten_personal" and "guidance_added" in r["flags"]
    r = turn("What is 5 times 3?", "What is 5 times 3?", system="Privacy: withhold her age.")
    assert r["verdict"] == "ai_broken"  # no personal data in it: an instruction nobody needed


def test_stand_ins_recognised():
    req = br.RawRequest(method="POST", url="https://x.example/a?tel=%2B44%207700%20900123",
                        headers=[("Host", "x.example")],
                        body=b'{"first_name": "Jordan", "card": "4111 1111 1111 1111", "ip": "203.0.113.7", '
                             b'"street": "12 Example Street", "username": "user9t2itq", "ts": 52.123, '
                             b'"id": "71e50811-0a2c-4c1e-9d3e-1f0e2d3c4b5a"}')
    kinds = sorted(set(br.personal_values(req).values()))
    assert kinds == ["address", "card", "ip", "name", "phone", "username"]


@pytest.mark.slow
def test_replay_subset_through_a_real_proxy(tmp_path):
    out = tmp_path / "replay.json"
    rc = br.main(["--only", r"chatgpt\.com-fail|localhost-forms|simonw__llm/test_tools__test_tool_use_chain",
                  "--limit", "40", "--json", str(out), "--quiet"])
    assert rc == 0
    data = json.loads(out.read_text())
    s, results = data["summary"], data["results"]
    assert s["requests"] == len(results) == 40
    for key in ("breakage_rate", "needless_rate", "leaks", "ai_broken", "rewritten_personal", "trackers_blocked",
                "replay_errors", "targets"):
        assert key in s
    assert s["replay_errors"] == 0, [r.get("reason") for r in results if r["verdict"] == "replay_error"]
    assert {r["class"] for r in results} >= {"user", "tracker"}
    assert all(r.get("decision") for r in results), "every replayed request is matched to its decision log line"
    assert all("rule" in r["decision"] and "explanation" in r["decision"] for r in results)


def test_planted_values_of_a_recorded_capture_are_personal():
    req = br.RawRequest(method="POST", url="https://www.shop.example/contact", headers=[("Host", "www.shop.example")],
                        body=b"name=Maria+Lindqvist&message=call+me")
    assert br.personal_values(req) == {}
    assert br.personal_values(req, {"Maria Lindqvist": "name", "Nobody Here": "name"}) == {"Maria Lindqvist": "name"}


def test_a_stream_cut_into_other_events_is_the_same_reply():
    def sse(*pieces: str) -> bytes:
        return b"".join(b"data: " + json.dumps({"id": "c1", "choices": [{"index": 0, "delta": {"content": p}}]}).encode()
                        + b"\n\n" for p in pieces) + b"data: [DONE]\n\n"

    assert br.reply_diff(sse("Hi Jor", "dan, ok"), sse("Hi ", "Jordan", ", ok")) == \
        (True, "same streamed text, cut into other events")
    same, where = br.reply_diff(sse("Hi Jor", "dan, ok"), sse("Hi ", "Jordan", ", no"))
    assert not same and "content" in where


def test_a_responses_stream_cut_into_other_deltas_is_the_same_reply():
    """OpenAI's Responses API streams its text as a string `delta` per event (`response.output_text.delta`)."""
    def sse(*pieces: str) -> bytes:
        return b"".join(b"event: response.output_text.delta\ndata: " + json.dumps(
            {"type": "response.output_text.delta", "item_id": "msg_1", "delta": p, "sequence_number": i}).encode()
            + b"\n\n" for i, p in enumerate(pieces))

    assert br.reply_diff(sse("Noted, Jorda", "n B"), sse("Noted, Jor", "dan B"))[0]
    same, where = br.reply_diff(sse("Noted, Jorda", "n B"), sse("Noted, Jor", "dan C"))
    assert not same and "delta" in where


def test_a_chat_api_path_is_an_ai_chat_turn_on_any_host():
    body = b'{"model": "llama3", "messages": [{"role": "user", "content": "hi"}]}'
    it = item("https://models.lab.example/api/chat", body, headers=[])
    assert br.classify(it) == ("ai_chat", "AI chat turn")
    assert br.classify(item("https://models.lab.example/api/status", body, headers=[]))[0] == "user"


@pytest.mark.slow
def test_replay_of_our_own_recordings(tmp_path):
    """tests/fixtures/recorded (scripts/record_captures.py): Chromium on the local shop, the AI SDKs, curl/httpx/
    requests: nothing the user meant to send is changed, no tracker gets a planted value, every AI exchange holds."""
    out = tmp_path / "replay.json"
    assert br.main(["--only", "^recorded/", "--json", str(out), "--quiet"]) == 0
    data = json.loads(out.read_text())
    s, results = data["summary"], data["results"]
    files = {r["file"] for r in results}
    assert files == {"chromium-shop.har", "sdk-chat.har", "sdk-google-cohere.har", "cli-forms.har", "npm-sdk-chat.har"}
    assert s["replay_errors"] == 0, [r.get("reason") for r in results if r["verdict"] == "replay_error"]
    bad = [(r["file"], r["idx"], r["verdict"], r.get("changes"), r.get("reply")) for r in results
           if r["verdict"] in ("breakage", "leak", "ai_broken", "needless")]
    assert not bad
    classes = {r["class"] for r in results}
    assert classes >= {"user", "tracker", "ai_chat"}
    # the planted values were seen: the AI prompts' person is pseudonymised, the shop's sign-in goes through as typed
    assert any(r["verdict"] == "rewritten_personal" and r["class"] == "ai_chat" for r in results)
    assert any(r["file"] == "cli-forms.har" and r["personal"].get("password") and r["verdict"] == "ok"
               for r in results)

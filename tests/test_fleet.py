"""Two gateways sharing one Redis (state: {backend: redis}) behind a small local TCP balancer act as one: a
seven-turn conversation whose turns alternate between them keeps one session (the same pseudonym every turn, the
exposure threshold crossed at the same turn as with one gateway, every reply de-masked by whichever gateway carries
it); an override made on one applies on the other at the next request; killing one mid-conversation loses nothing."""

from __future__ import annotations

import json
import re
import ssl
import subprocess

import httpx
import pytest

from guardian_proxy.state import new_key
from tests.support.balancer import Balancer
from tests.support.llm_server import start_llm_server
from tests.support.proxy_process import BIN, start_proxy

pytestmark = pytest.mark.slow

NAME, EMAIL = "Quentin Zarkowsky", "quentin.zarkowsky@gmail.com"
TURNS = [
    f"Hi, I'm {NAME} ({EMAIL}). Help me plan a week in Lisbon.",
    "I live at 42 Rua Augusta in Lisbon, so day trips are best.",
    "You can text me at +1 415-555-0134 when the plan is ready.",
    "I was born on 14 March 1985, does that matter for museum discounts?",
    "I take metformin for my diabetes, so I need regular meals.",
    "My salary is $85,000 a year, keep the budget modest.",
    f"Thanks. {NAME} again: please summarise the whole plan.",
]


def converse(proxy_url: str, ca, srv, user: str, after_turn=None) -> list[dict]:
    """The conversation, one fresh client connection per turn (so a balancer alternates the gateways); the
    history is sent again each turn, as chat clients do. Returns per turn: the reply text and the body the
    server received."""
    msgs: list[dict] = []
    out = []
    for i, said in enumerate(TURNS, 1):
        msgs.append({"role": "user", "content": said})
        with httpx.Client(proxy=proxy_url, verify=ssl.create_default_context(cafile=str(ca)), timeout=120) as c:
            r = c.post("https://api.openai.com/v1/chat/completions",
                       json={"model": "gpt-4o", "user": user, "messages": msgs})
        assert r.status_code == 200, r.text[:300]
        reply = r.json()["choices"][0]["message"]["content"]
        out.append({"reply": reply, "sent": srv.received[-1]})
        msgs.append({"role": "assistant", "content": reply})
        if after_turn is not None:
            after_turn(i)
    return out


def pseudonym(body: dict) -> str:
    first = next(m for m in body["messages"] if m["role"] == "user")["content"]
    m = re.match(r"Hi, I'm (.+?) \(", first)
    assert m, first
    return m.group(1)


def session_lines(*logs) -> list[dict]:
    lines = [x for px in logs for x in px.log_lines() if x.get("host") == "api.openai.com" and x.get("session")]
    return sorted(lines, key=lambda x: x["turn"])


def test_two_gateways_on_one_redis_act_as_one(tmp_path, redis_server, redis_prefix):
    srv = start_llm_server(tmp_path, ["api.openai.com"])
    key = tmp_path / "fleet.key"
    key.write_text(new_key() + "\n")
    key.chmod(0o600)
    # τ = 6: this conversation's exposure (2.8, 2.8, 5.0, 9.6, …) crosses it at turn 4, mid-way
    local = tmp_path / "one.yaml"
    local.write_text(json.dumps({"dashboard_port": 0, "session": {"tau": 6.0}}))
    cfg = tmp_path / "fleet.yaml"
    cfg.write_text(json.dumps({"dashboard_port": 0, "session": {"tau": 6.0},
                               "state": {"backend": "redis", "url": redis_server.url, "prefix": redis_prefix,
                                         "key_file": str(key)}}))
    confdir = tmp_path / "ca"  # one CA for the fleet: clients trust it whichever gateway they reach
    ca = confdir / "mitmproxy-ca-cert.pem"
    for d in ("one", "a", "b"):
        (tmp_path / d).mkdir()
    # the baseline holds the fleet's vault key too, so its stand-ins are the fleet's: a reply that echoes part of a
    # stand-in (a street's name without its number) reads the same through either
    (tmp_path / "one" / "state").mkdir()
    (tmp_path / "one" / "state" / "vault.key").write_text(key.read_text())
    (tmp_path / "one" / "state" / "vault.key").chmod(0o600)

    # the baseline: the same conversation through one gateway of its own (local state)
    one = start_proxy(tmp_path / "one", srv.port, extra=["--config", str(local), "--confdir", str(confdir)])
    try:
        base = converse(one.url, ca, srv, "fleet-baseline")
    finally:
        one.stop()
    base_lines = session_lines(one)
    crossed = base_lines[-1]["crossed_turn"]
    assert crossed is not None and 1 < crossed < len(TURNS), \
        f"the conversation must cross τ mid-way: {[(x['turn'], x['cpe']) for x in base_lines]}"

    a = start_proxy(tmp_path / "a", srv.port, extra=["--config", str(cfg), "--confdir", str(confdir)])
    b = start_proxy(tmp_path / "b", srv.port, extra=["--config", str(cfg), "--confdir", str(confdir)])
    lb = Balancer([a.port, b.port])
    blocked: list[tuple[int, int]] = []

    def between(turn: int) -> None:
        if turn == 3:  # an override made on one gateway (its CLI, the shared store) applies on the other
            r = subprocess.run([str(BIN), "deny", "ads.fleet-test.example", "--config", str(cfg)],
                               capture_output=True, text=True, timeout=60)
            assert r.returncode == 0, r.stderr
            for px in (a, b):
                resp = httpx.get("http://ads.fleet-test.example/pixel", proxy=px.url, timeout=60)
                blocked.append((px.port, resp.status_code))
        if turn == 4:  # one gateway dies mid-conversation: the balancer sends the rest to the other
            a.proc.kill()
            a.proc.wait(10)

    try:
        turns = converse(lb.url, ca, srv, "fleet-alternating", after_turn=between)
    finally:
        lb.close()
        a.stop()
        b.stop()
        srv.close()

    # the turns alternated until one gateway died
    assert lb.chosen[:4] == [a.port, b.port, a.port, b.port], lb.chosen
    assert set(lb.chosen[4:]) == {b.port}
    # one session: the same pseudonym in every turn, never the real name
    names = {pseudonym(t["sent"]) for t in turns}
    assert len(names) == 1 and NAME not in names, names
    assert all(NAME not in json.dumps(t["sent"]) and EMAIL not in json.dumps(t["sent"]) for t in turns)
    # every reply de-masked by whichever gateway carried it: the user reads back exactly what they wrote
    for t, said in zip(turns, TURNS, strict=True):
        assert t["reply"].endswith(f"You said: {said}"), t["reply"]
    assert NAME in turns[0]["reply"] and NAME in turns[-1]["reply"]
    assert [t["reply"] for t in turns] == [t["reply"] for t in base]  # as one gateway would have answered
    # the exposure threshold crossed at the same turn as with one gateway, in one session
    lines = session_lines(a, b)
    assert [x["turn"] for x in lines] == list(range(1, len(TURNS) + 1))
    assert len({x["session"] for x in lines}) == 1
    assert lines[-1]["crossed_turn"] == crossed
    assert [round(x["cpe"], 3) for x in lines] == [round(x["cpe"], 3) for x in base_lines]
    # the override applied on both gateways at their next request
    assert blocked == [(a.port, 403), (b.port, 403)]

"""Latency that chat sessions add (docs/design/conversations.md): per request with a 20-message history, and
on streams.

    .venv/bin/python scripts/bench_chat.py                 # in-process + through a real guardian-proxy run
    .venv/bin/python scripts/bench_chat.py --no-proxy      # in-process only
    .venv/bin/python scripts/bench_chat.py --conversations 20

Conversations are synthetic (written here; fragments of names, towns, employers, amounts, conditions):
a system prompt and 10 user turns, each answered by the test server's model (tests/support/llm_server),
so turn 10 carries a 20-message history of which 2 messages are new — the steady state of a chat client.

In process (Gateway.evaluate, real Presidio/spaCy detector, real vault):
  request_ms      p50/p99 of evaluate() for the 20-message requests (everything the proxy does to a request)
  request_cpu_ms  the same in CPU time of the evaluating thread (robust to other load on a shared machine)
  session_ms      p50/p99 of the session stage alone (recognise + apply) on the same requests
  cold_ms         p50/p99 when all 20 messages are new to the proxy (e.g. after a restart)
  chunk_us        p50/p99 de-masking cost per streamed SSE chunk (one event of 3-5 characters each)
Through a real `guardian-proxy run` (HTTPS, mitmproxy CA) to the local server, against the same server
reached directly: added_ms p50/p99 (proxied − direct request time) and ttft_added_ms p50/p99 (time to the
first streamed content event). Targets: ≤ 40 ms p50 added per request, ≤ 5 ms per streamed chunk.
The last stdout line is JSON with all of these.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import ssl
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tests.support import llm_server  # noqa: E402

FIRST = ["Maria", "Daniel", "Priya", "Tom", "Helen", "Samuel", "Aisha", "Lukas", "Ingrid", "Mateo", "Yuki", "Omar"]
LAST = ["Gonzalez", "Okonkwo", "Raman", "Becker", "Fischer", "Lindqvist", "Haddad", "Moreau", "Novak", "Tanaka"]
TOWNS = ["Austin", "Denver", "Sacramento", "Portland", "Phoenix", "Raleigh", "Boise", "Tucson", "Madison", "Omaha"]
ORGS = ["Northwind Traders", "Contoso Health", "Fabrikam Bank", "Lincoln High School", "Mercy General Hospital"]
TOPICS = ["a weekly budget", "a job interview", "a marathon plan", "a sourdough recipe", "a trip to Lisbon",
          "a cover letter", "a meal plan", "a garden layout", "a reading list", "a study schedule"]


def conversation(rng: random.Random, i: int) -> list[str]:
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    first = name.split()[0]
    return [
        f"Hi, I'm {name} (conversation {i}). Can you help me with {rng.choice(TOPICS)}?",
        f"I live in {rng.choice(TOWNS)} and I work at {rng.choice(ORGS)}.",
        f"My email is {first.lower()}.{name.split()[1].lower()}{i}@example.com if you need it.",
        f"What should I prioritise this week, given I have about {rng.randint(3, 12)} free hours?",
        f"I earn ${rng.randint(40, 140)},000 a year and rent costs ${rng.randint(9, 30)}00 a month.",
        f"My doctor says I have {rng.choice(['asthma', 'type 2 diabetes', 'migraines'])}; does that change it?",
        "Can you make the plan more concrete, step by step, with times of day?",
        f"{first} here again: my colleague {rng.choice(FIRST)} {rng.choice(LAST)} wants to join. Adjust it.",
        "Please add a short checklist at the end.",
        f"Summarise everything for {name} in five bullet points.",
    ]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(q * len(xs)))], 2)


def p50_p99(xs: list[float]) -> dict:
    return {"p50": round(statistics.median(xs), 2), "p99": pct(xs, 0.99), "n": len(xs)}


def chat_request(messages: list[dict], stream: bool = False):
    from guardian_proxy.types import RawRequest

    return RawRequest(method="POST", url="https://api.openai.com/v1/chat/completions",
                      headers=[("content-type", "application/json"), ("authorization", "Bearer sk-bench")],
                      body=json.dumps({"model": "gpt-4o", "messages": messages, "stream": stream}).encode())


def in_process(n_conv: int) -> dict:
    from guardian_proxy.config import load_settings
    from guardian_proxy.pipeline import Gateway

    gw = Gateway.from_settings(load_settings(state_dir=tempfile.mkdtemp(prefix="bench-chat-")), with_log=False)
    gw.warm_up()
    rng = random.Random(8)
    req_ms, req_cpu, sess_ms, cold_ms = [], [], [], []
    for i in range(n_conv):
        history = [{"role": "system", "content": "You are a helpful assistant for everyday planning."}]
        for turn, said in enumerate(conversation(rng, i), start=1):
            history.append({"role": "user", "content": said})
            req = chat_request(history)
            t0, c0 = time.perf_counter(), time.thread_time()
            d = gw.evaluate(req, log=False)
            dt, dc = (time.perf_counter() - t0) * 1000, (time.thread_time() - c0) * 1000
            if turn == 10:
                assert len(history) == 20
                req_ms.append(dt)
                req_cpu.append(dc)
                action = gw.extractor.extract(req)  # detector cache warm: isolates the session stage
                t1 = time.perf_counter()
                gw._decide_chat(req, action, gw.session.recognise(req), None)
                sess_ms.append((time.perf_counter() - t1) * 1000)
            upstream = json.loads(d.rewrite.body) if d.rewrite and d.rewrite.body else json.loads(req.body)
            text, _ = llm_server.answer(upstream)
            reply = json.dumps({"choices": [{"message": {"content": text}}]}).encode()
            shown = gw.chat_response(d.extra, reply, "application/json") or reply
            history.append({"role": "assistant", "content": json.loads(shown)["choices"][0]["message"]["content"]})
    for i in range(max(5, n_conv // 3)):  # cold: a 20-message history the proxy has never seen
        msgs = [{"role": "system", "content": f"Cold start {i}."}]
        for said in conversation(random.Random(1000 + i), 5000 + i):
            msgs += [{"role": "user", "content": said}, {"role": "assistant", "content": f"Reply to: {said}"}]
        msgs = msgs[:20]
        t0 = time.perf_counter()
        gw.evaluate(chat_request(msgs), log=False)
        cold_ms.append((time.perf_counter() - t0) * 1000)
    # streamed chunks: the server's SSE for a reply naming the person, de-masked event by event
    from guardian_proxy.session.stream import StreamDemasker

    sid = d.extra["session"]
    upstream = json.loads(d.rewrite.body)
    events = llm_server.openai_chat(upstream, True)
    chunk_us = []
    for _ in range(20):
        sd = StreamDemasker("openai_chat", gw.session.store.demasker(sid))
        for ev in events:
            t0 = time.perf_counter()
            sd(ev)
            chunk_us.append((time.perf_counter() - t0) * 1e6)
    return {"request_ms": p50_p99(req_ms), "request_cpu_ms": p50_p99(req_cpu), "session_ms": p50_p99(sess_ms), "cold_ms": p50_p99(cold_ms),
            "chunk_us": p50_p99(chunk_us), "surrogates": len(gw.session.store.state(sid).entities)}


def through_proxy(n_conv: int) -> dict:
    import httpx

    from tests.support.proxy_process import start_proxy

    tmp = Path(tempfile.mkdtemp(prefix="bench-chat-px-"))
    srv = llm_server.start_llm_server(tmp, ["api.openai.com"])
    px = start_proxy(tmp, srv.port)
    out: dict = {}
    try:
        proxied = httpx.Client(proxy=px.url, verify=ssl.create_default_context(cafile=str(px.ca)), timeout=60)
        direct = httpx.Client(verify=False, timeout=60)
        urls = {"proxied": "https://api.openai.com/v1/chat/completions",
                "direct": f"https://127.0.0.1:{srv.port}/v1/chat/completions"}
        clients = {"proxied": proxied, "direct": direct}
        rng = random.Random(9)
        times: dict[str, list[float]] = {"proxied": [], "direct": []}
        ttft: dict[str, list[float]] = {"proxied": [], "direct": []}
        headers = {"authorization": "Bearer sk-bench"}
        for i in range(n_conv):
            history = [{"role": "system", "content": "You are a helpful assistant for everyday planning."}]
            for turn, said in enumerate(conversation(rng, 100 + i), start=1):
                history.append({"role": "user", "content": said})
                body = {"model": "gpt-4o", "messages": history}
                order = ["direct", "proxied"] if turn % 2 else ["proxied", "direct"]
                for which in order:
                    t0 = time.perf_counter()
                    r = clients[which].post(urls[which], json=body, headers=headers)
                    dt = (time.perf_counter() - t0) * 1000
                    if which == "proxied":
                        content = r.json()["choices"][0]["message"]["content"]
                    if turn == 10:
                        times[which].append(dt)
                if turn >= 9:  # streams over the (by now known) history: time to the first content event
                    for which in order:
                        t0 = time.perf_counter()
                        with clients[which].stream("POST", urls[which], json={**body, "stream": True},
                                                   headers=headers) as s:
                            got = False
                            for line in s.iter_lines():  # read to the end; note the first content event
                                if not got and '"content"' in line:
                                    ttft[which].append((time.perf_counter() - t0) * 1000)
                                    got = True
                history.append({"role": "assistant", "content": content})
        added = [p - d for p, d in zip(times["proxied"], times["direct"], strict=True)]
        tadded = [p - d for p, d in zip(ttft["proxied"], ttft["direct"], strict=True)]
        out = {"direct_ms": p50_p99(times["direct"]), "proxied_ms": p50_p99(times["proxied"]),
               "added_ms": p50_p99(added), "ttft_direct_ms": p50_p99(ttft["direct"]),
               "ttft_proxied_ms": p50_p99(ttft["proxied"]), "ttft_added_ms": p50_p99(tadded)}
        proxied.close()
        direct.close()
    finally:
        px.stop()
        srv.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--conversations", type=int, default=30)
    ap.add_argument("--no-proxy", action="store_true", help="skip the run through a real guardian-proxy")
    a = ap.parse_args()
    res = {"in_process": in_process(a.conversations)}
    ip = res["in_process"]
    print(f"in process, 20-message history: request p50 {ip['request_ms']['p50']} ms p99 {ip['request_ms']['p99']} ms"
          f" (CPU p50 {ip['request_cpu_ms']['p50']} ms)"
          f" (session stage p50 {ip['session_ms']['p50']} ms); cold p50 {ip['cold_ms']['p50']} ms;"
          f" per streamed chunk p50 {ip['chunk_us']['p50']} µs p99 {ip['chunk_us']['p99']} µs")
    if not a.no_proxy:
        res["proxy"] = through_proxy(a.conversations)
        p = res["proxy"]
        print(f"through guardian-proxy: added p50 {p['added_ms']['p50']} ms p99 {p['added_ms']['p99']} ms; "
              f"TTFT added p50 {p['ttft_added_ms']['p50']} ms p99 {p['ttft_added_ms']['p99']} ms")
    print(json.dumps(res))


if __name__ == "__main__":
    main()

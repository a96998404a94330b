"""Time to first token on every chat dialect's stream: direct, through bare mitmdump, through guardian-proxy.

    .venv/bin/python scripts/bench_dialects.py              # 30 streams per dialect and path
    .venv/bin/python scripts/bench_dialects.py --n 10 --only gemini

Each dialect's stream comes from the test servers that answer in the service's own framing
(tests/support: llm_server, google_cohere_server, bedrock_server, webapp_server, ws_chat_server): SSE, NDJSON,
the AWS event-stream, Gemini web's length-prefixed frames, WebSocket events. Every request carries a name and an
e-mail address, so guardian-proxy pseudonymises it (session stage) and de-masks the stream. The three paths are
measured interleaved, request by request. TTFT is the time from sending the request to the first body bytes (or
first delta message) the client receives; "added" is proxied minus direct per request pair (p50), reported against
the direct server and against bare mitmdump streaming every body (`stream_large_bodies=1`: the cost of the proxy
hop itself, CONNECT and two TLS handshakes). The servers close every connection, so each request pays its
handshakes on every path. Each dialect's requests are turns of one conversation (the name and e-mail every turn,
new words each time: the detector runs, the vault has nothing new to commit); a Realtime connection is a new
conversation each time. Prints one line per dialect and, last, a JSON line with everything.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import ssl
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from scripts.bench_proxy import Proc, free_port  # noqa: E402
from tests.support import bedrock_server as bs  # noqa: E402
from tests.support import google_cohere_server as gc  # noqa: E402
from tests.support import llm_server, webapp_server, ws_chat_server  # noqa: E402
from tests.support.proxy_process import start_proxy  # noqa: E402

HERE = Path(__file__).resolve().parent
VENV_BIN = Path(sys.executable).parent
SAID = "Hi, I'm Quentin Zarkowsky (quentin.zarkowsky@gmail.com). Help me plan a week in Lisbon."
DAYS = ["museums", "food markets", "a day trip to Sintra", "fado bars", "the beaches", "bookshops", "tiles"]
CONV = {"c": str(uuid.uuid4()), "o": str(uuid.uuid4())}


_SALT = [0]


def said(i: int) -> str:
    """Turn i of one conversation: the name again, with a new request — new words for the detector every time
    (no text repeats across dialects either, so no cached detection hides the cost), no new value for the vault:
    the steady state of a conversation."""
    _SALT[0] += 1
    return f"Quentin Zarkowsky again: on day {i % 7 + 1} I'd like {DAYS[i % 7]} (plan {_SALT[0]})."


def _chat(i):
    return {"model": "gpt-4o", "stream": True, "messages": [
        {"role": "user", "content": SAID}, {"role": "assistant", "content": "Happy to help."},
        {"role": "user", "content": said(i)}]}


def _chatgpt(i):
    return {"action": "next", "messages": [{"id": str(uuid.uuid4()), "author": {"role": "user"},
                                            "content": {"content_type": "text", "parts": [said(i)]}}],
            "conversation_id": CONV["c"], "parent_message_id": str(uuid.uuid4()), "model": "gpt-5",
            "supported_encodings": ["v1"]}


#: name → (server, host, path, body(i), extra headers)
CASES = {
    "openai_chat": ("llm", "api.openai.com", "/v1/chat/completions", _chat, {}),
    "anthropic": ("llm", "api.anthropic.com", "/v1/messages", lambda i: {**_chat(i), "max_tokens": 100}, {}),
    "openai_responses": ("llm", "api.openai.com", "/v1/responses",
                         lambda i: {"model": "gpt-5", "stream": True, "conversation": CONV["o"], "input": said(i)}, {}),
    "ollama_chat": ("llm", "ollama.example", "/api/chat", lambda i: {**_chat(i), "model": "llama3"}, {}),
    "gemini": ("gc", "generativelanguage.googleapis.com",
               "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
               lambda i: {"contents": [{"role": "user", "parts": [{"text": SAID}]},
                                       {"role": "model", "parts": [{"text": "Happy to help."}]},
                                       {"role": "user", "parts": [{"text": said(i)}]}]}, {}),
    "cohere_v2": ("gc", "api.cohere.com", "/v2/chat",
                  lambda i: {**_chat(i), "model": "command-a-03-2025"}, {}),
    "bedrock_converse": ("bedrock", bs.HOST, f"/model/{'anthropic.claude-3-haiku-20240307-v1%3A0'}/converse-stream",
                         lambda i: {"messages": [{"role": "user", "content": [{"text": SAID}]},
                                                 {"role": "assistant", "content": [{"text": "Happy to help."}]},
                                                 {"role": "user", "content": [{"text": said(i)}]}]}, {}),
    "chatgpt_web": ("web", "chatgpt.com", "/backend-api/f/conversation", _chatgpt, {"accept": "text/event-stream"}),
    "claude_web": ("web", "claude.ai", f"/api/organizations/{uuid.uuid4()}/chat_conversations/{uuid.uuid4()}/completion",
                   lambda i: {"prompt": said(i), "parent_message_uuid": str(uuid.uuid4()), "files": [],
                              "attachments": []}, {"accept": "text/event-stream"}),
    "deepseek_web": ("web", "chat.deepseek.com", "/api/v0/chat/completion",
                     lambda i: {"chat_session_id": CONV["c"], "parent_message_id": i,
                                "prompt": said(i), "ref_file_ids": [], "thinking_enabled": False}, {}),
    "perplexity_web": ("web", "www.perplexity.ai", "/rest/sse/perplexity_ask",
                       lambda i: {"query_str": said(i), "params": {"frontend_uuid": str(uuid.uuid4()),
                                                                   "last_backend_uuid": CONV["c"], "mode": "concise"}}, {}),
    "gemini_web": ("gweb", "gemini.google.com",
                   "/_/BardChatUi/data/assistant.lamda.BardFrontendService/StreamGenerate?bl=boq&_reqid=1&rt=c",
                   None, {"content-type": "application/x-www-form-urlencoded;charset=UTF-8"}),
    "openai_realtime": ("ws", "api.openai.com", "/v1/realtime?model=gpt-realtime", None, {}),
}


def gemini_form(i: int) -> bytes:
    from urllib.parse import quote

    inner = json.dumps([[said(i), 0, None, [], None, None, 0], ["en"], ["c_bench0000000000", "", ""]],
                       separators=(",", ":"))
    return ("f.req=" + quote(json.dumps([None, inner], separators=(",", ":")), safe="") + "&at=tok&").encode()


def p50(xs: list[float]) -> float:
    return round(statistics.median(xs), 1) if xs else float("nan")


def start_bare(tmp: Path, up_port: int) -> tuple[Proc, int, Path]:
    port = free_port()
    d = tmp / f"bare-{up_port}"
    d.mkdir()
    args = [str(VENV_BIN / "mitmdump"), "-q", "--listen-host", "127.0.0.1", "-p", str(port), "--set",
            f"confdir={d / 'conf'}", "-s", str(HERE / "redirect_upstream.py"), "--set",
            f"redirect_upstream=127.0.0.1:{up_port}", "--set", "connection_strategy=lazy", "--ssl-insecure",
            "--set", "stream_large_bodies=1"]  # bare mitmdump buffers every body unless told to stream
    p = Proc(args, d / "proxy.out", {})
    p.wait_ready(port, None)
    return p, port, d / "conf" / "mitmproxy-ca-cert.pem"


def aws_env(d: Path) -> dict[str, str]:
    (d / "aws-config").write_text("")
    (d / "aws-credentials").write_text("")
    return {"AWS_ACCESS_KEY_ID": bs.ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": bs.SECRET_KEY, "AWS_DEFAULT_REGION": bs.REGION,
            "AWS_CONFIG_FILE": str(d / "aws-config"), "AWS_SHARED_CREDENTIALS_FILE": str(d / "aws-credentials"),
            "AWS_EC2_METADATA_DISABLED": "true"}


def signed_headers(url: str, body: bytes) -> dict[str, str]:
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    req = AWSRequest("POST", url, data=body, headers={"content-type": "application/json"})
    SigV4Auth(Credentials(bs.ACCESS_KEY, bs.SECRET_KEY), "bedrock", bs.REGION).add_auth(req)
    return dict(req.headers.items())


def http_ttft(client, url: str, body: bytes, headers: dict) -> float:
    t0 = time.perf_counter()
    first = None
    with client.stream("POST", url, content=body, headers=headers) as r:
        if r.status_code != 200:
            raise RuntimeError(f"{url}: HTTP {r.status_code}")
        for chunk in r.iter_raw():
            if chunk and first is None:
                first = time.perf_counter() - t0
    return first * 1000


PAUSE_S = 0.002  # between the servers' stream pieces (their tests use longer pauses to see streams arrive)


async def ws_ttft(uri: str, proxy: str | None, ctx: ssl.SSLContext, i: int) -> float:
    from websockets.asyncio.client import connect

    async with connect(uri, proxy=proxy, ssl=ctx, open_timeout=30, close_timeout=0.5) as ws:
        async def recv():
            return json.loads(await asyncio.wait_for(ws.recv(), 30))

        await recv()  # session.created
        await ws.send(json.dumps({"type": "conversation.item.create", "item": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": said(i)}]}}))
        while (await recv()).get("type") != "conversation.item.created":  # decided and delivered
            pass
        t0 = time.perf_counter()
        await ws.send(json.dumps({"type": "response.create"}))
        while True:
            ev = await recv()
            if ev.get("type", "").endswith(".delta"):
                return (time.perf_counter() - t0) * 1000


def start_server(kind: str, d: Path):
    if kind == "llm":
        return llm_server.start_llm_server(d, ["api.openai.com", "api.anthropic.com", "ollama.example"])
    if kind == "gc":
        gc.PAUSE = PAUSE_S
        return gc.start_google_cohere_server(d)
    if kind == "bedrock":
        srv = bs.start_bedrock_server(d, [bs.HOST])
        srv.sleep = PAUSE_S
        return srv
    if kind == "web":
        return webapp_server.start_webapp_server(d, delay=PAUSE_S)
    if kind == "gweb":
        return ws_chat_server.start_gemini_server(d)
    return ws_chat_server.start_ws_server(d, ["api.openai.com"])


def run_group(kind: str, names: list[str], n: int, tmp: Path) -> dict:
    import httpx

    d = tmp / kind
    d.mkdir()
    srv = start_server(kind, d)
    env = aws_env(d) if kind == "bedrock" else None
    px = start_proxy(d, srv.port, env=env)
    bare, bare_port, bare_ca = start_bare(tmp, srv.port)
    out = {}
    try:
        insecure = ssl.create_default_context()
        insecure.check_hostname, insecure.verify_mode = False, ssl.CERT_NONE
        paths = {"direct": (None, insecure), "bare": (f"http://127.0.0.1:{bare_port}",
                                                      ssl.create_default_context(cafile=str(bare_ca))),
                 "guardian": (px.url, ssl.create_default_context(cafile=str(px.ca)))}
        clients = {k: httpx.Client(proxy=p, verify=c, timeout=60) for k, (p, c) in paths.items()}
        for name in names:
            _, host, path, body_of, extra = CASES[name]
            ttft: dict[str, list[float]] = {k: [] for k in paths}
            for i in range(n + 2):  # two warm-up rounds (first TLS, first session) are not counted
                order = list(paths) if i % 2 else list(reversed(paths))
                for which in order:
                    if name == "openai_realtime":
                        uri = (f"wss://127.0.0.1:{srv.port}{path}" if which == "direct" else f"wss://{host}{path}")
                        t = asyncio.run(ws_ttft(uri, paths[which][0], paths[which][1], i))
                    else:
                        body = gemini_form(i) if body_of is None else json.dumps(body_of(i)).encode()
                        url = f"https://{host}{path}"
                        headers = {"content-type": "application/json", **extra}
                        if kind == "bedrock":
                            headers.update(signed_headers(url, body))
                        if which == "direct":
                            headers["host"] = host
                            url = f"https://127.0.0.1:{srv.port}{path}"
                        t = http_ttft(clients[which], url, body, headers)
                    if i >= 2:
                        ttft[which].append(t)
            added = [g - dd for g, dd in zip(ttft["guardian"], ttft["direct"], strict=True)]
            hop = [g - b for g, b in zip(ttft["guardian"], ttft["bare"], strict=True)]
            out[name] = {"ttft_direct_ms": p50(ttft["direct"]), "ttft_bare_ms": p50(ttft["bare"]),
                         "ttft_guardian_ms": p50(ttft["guardian"]), "added_vs_direct_ms": p50(added),
                         "added_vs_bare_ms": p50(hop)}
            r = out[name]
            print(f"{name:18s} TTFT direct {r['ttft_direct_ms']:6.1f}  bare mitmdump {r['ttft_bare_ms']:6.1f}  "
                  f"guardian {r['ttft_guardian_ms']:6.1f} ms   added p50: vs direct {r['added_vs_direct_ms']:5.1f}, "
                  f"vs bare mitmdump {r['added_vs_bare_ms']:5.1f} ms", flush=True)
        for c in clients.values():
            c.close()
    finally:
        px.stop()
        bare.stop()
        srv.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=30, help="streams per dialect and path")
    ap.add_argument("--only", default=None, help="dialect names containing this")
    a = ap.parse_args()
    groups: dict[str, list[str]] = {}
    for name, (kind, *_rest) in CASES.items():
        if a.only is None or a.only in name:
            groups.setdefault(kind, []).append(name)
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-dialects-") as tmp:
        for kind, names in groups.items():
            results.update(run_group(kind, names, a.n, Path(tmp)))
    print(json.dumps(results))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Record our own captures with real clients, for the replay benchmark (scripts/bench_replay.py --recorded).

    .venv/bin/python scripts/record_captures.py [--out tests/fixtures/recorded] [--only browser,sdks,cli]

Each scenario runs real clients through a bare recording `mitmdump` (mitmproxy's own `hardump` option, with
scripts/redirect_upstream.py sending every connection to one local TLS server that answers in the service's own
framing) and writes one HAR 1.2 file, as a browser's or mitmproxy's export holds it, with a sidecar
`<name>.values.json` that lists the personal values the scenario planted (value → kind), which the replay oracle
reads beside the stand-in shapes it knows:

  browser  a real headless Chromium (Playwright, Debian's chromium) visits the local shop of
           tests/support/shop_site.py as a user does (tests/support/shop_visit.py): privacy page, sign-in, checkout
           paying through Stripe's API, contact form, with a hand-written third-party tracker reading the typed
           e-mail (Segment-style fetch and sendBeacon, a Facebook pixel)        → chromium-shop.har
  sdks     the AI SDKs from pip against tests/support/llm_server.py: openai (chat JSON, stream, tools; Responses),
           anthropic (Messages JSON and stream), mistralai, the ollama client, litellm; prompts with a person's
           name and e-mail, and factual questions with none                    → sdk-chat.har
  google-cohere  google-genai (a Gemini chat, JSON and `alt=sse` stream) and cohere's ClientV2 (JSON and
           stream) against tests/support/google_cohere_server.py                   → sdk-google-cohere.har
  npm      the AI SDKs from npm in a real Node.js process (tests/node/chat.mjs: openai chat JSON/stream/tools and
           Responses, @anthropic-ai/sdk JSON/stream, the Vercel AI SDK), against the same local server
                                                                                 → npm-sdk-chat.har
  cli      the user's own tools against the shop: curl's sign-in form, httpx's contact form, requests' JSON
           order                                                                 → cli-forms.har

No value in them belongs to anyone: the names are invented, e-mails are at example.com, the phone is in the 555-01xx
range set aside for fiction, the card is Stripe's published test number. Nothing here reaches the network.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm would fetch its price list

from tests.support.browser import ARGS, CHROMIUM  # noqa: E402
from tests.support.google_cohere_server import start_google_cohere_server  # noqa: E402
from tests.support.llm_server import start_llm_server  # noqa: E402
from tests.support.shop_site import SHOP, start_shop  # noqa: E402
from tests.support.shop_visit import CARD, EMAIL, MESSAGE, NAME, PASSWORD, SHIPPING, browse  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "recorded"
VENV_BIN = Path(sys.executable).parent
_LISTENING = re.compile(r"proxy(?: \([^)]*\))? listening at (\S+?):(\d+)")

#: the AI prompts' person: a first and last name from scrub.py's pools, an address at example.com
PERSON, PERSON_EMAIL = "Jordan Blackwood", "jordan.blackwood@example.com"
SAID = f"Hi, I'm {PERSON} ({PERSON_EMAIL}). Draft a short note to my landlord about the broken heater."
FACTUAL = "What is the capital of France, and which river runs through it?"
AI_HOSTS = ["api.openai.com", "api.anthropic.com", "api.mistral.ai", "ollama.example"]


class Recorder:
    """A bare mitmdump that writes every flow to a HAR file when it stops."""

    def __init__(self, tmp: Path, upstream_port: int, har: Path):
        self.confdir, self.har = tmp / "mitmproxy", har
        self.log = tmp / f"{har.stem}.mitmdump.log"
        self.proc = subprocess.Popen(
            [str(VENV_BIN / "mitmdump"), "--set", "flow_detail=0", "--listen-host", "127.0.0.1", "--listen-port", "0",
             "--set", f"confdir={self.confdir}", "--set", f"hardump={har}", "--ssl-insecure",
             "--set", "termlog_verbosity=info", "-s", str(ROOT / "scripts" / "redirect_upstream.py"),
             "--set", f"redirect_upstream=127.0.0.1:{upstream_port}"],
            stdout=self.log.open("wb"), stderr=subprocess.STDOUT, cwd=tmp)
        self.port = self._wait_port()
        self.ca = self.confdir / "mitmproxy-ca-cert.pem"
        self.url = f"http://127.0.0.1:{self.port}"

    def _wait_port(self) -> int:
        while True:
            m = _LISTENING.search(self.log.read_text(errors="replace"))
            if m:
                return int(m.group(2))
            if self.proc.poll() is not None:
                raise SystemExit(f"mitmdump exited: {self.log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.1)

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)  # mitmproxy writes the HAR in its `done` hook
        self.proc.wait(timeout=120)
        if not self.har.exists():
            raise SystemExit(f"no HAR written: {self.log.read_text(errors='replace')[-2000:]}")


@contextmanager
def recording(tmp: Path, upstream_port: int, har: Path):
    rec = Recorder(tmp, upstream_port, har)
    try:
        yield rec
    finally:
        if rec.proc.poll() is None:
            rec.stop()


def browser(rec: Recorder) -> dict:
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=[*ARGS, f"--proxy-server={rec.url}",
                                                               "--ignore-certificate-errors"])
        ctx = b.new_context(ignore_https_errors=True, viewport={"width": 1200, "height": 900})
        v: dict = {"steps": {}, "tracker": []}
        browse(ctx.new_page(), v)
        ctx.close()
        b.close()
    finally:
        pw.stop()
    print(f"  browser steps: {v['steps']}")
    return {EMAIL: "email", PASSWORD: "password", NAME: "name", CARD["number"]: "card", CARD["cvc"]: "card",
            SHIPPING["line1"]: "address", "(503) 555-0142": "phone"}


def sdks(rec: Recorder) -> dict:
    import anthropic
    import httpx
    import litellm
    import ollama
    import openai
    from mistralai import Mistral

    ctx = rec.ssl_context()
    said = [{"role": "user", "content": SAID}]
    factual = [{"role": "user", "content": FACTUAL}]
    tools = [{"type": "function", "function": {
        "name": "save_contact", "description": "Save a contact to the address book.",
        "parameters": {"type": "object", "properties": {"name": {"type": "string"}, "email": {"type": "string"},
                                                         "note": {"type": "string"}},
                       "required": ["name", "email"]}}}]
    with httpx.Client(proxy=rec.url, verify=ctx, timeout=60) as http:
        oa = openai.OpenAI(api_key="sk-recorded", http_client=http, max_retries=0)
        for msgs in (said, factual):
            oa.chat.completions.create(model="gpt-4o-mini", messages=msgs)
            "".join(c.choices[0].delta.content or "" for c in
                    oa.chat.completions.create(model="gpt-4o-mini", messages=msgs, stream=True) if c.choices)
        oa.chat.completions.create(model="gpt-4o-mini", messages=said, tools=tools)
        oa.responses.create(model="gpt-4o-mini", input=SAID)
        an = anthropic.Anthropic(api_key="sk-ant-recorded", http_client=http, max_retries=0)
        for msgs in (said, factual):
            an.messages.create(model="claude-haiku-4-5", max_tokens=256, messages=msgs)
        with an.messages.stream(model="claude-haiku-4-5", max_tokens=256, messages=said) as s:
            "".join(s.text_stream)
        mi = Mistral(api_key="recorded", server_url="https://api.mistral.ai", client=http)
        mi.chat.complete(model="mistral-small-latest", messages=said)
        "".join(ev.data.choices[0].delta.content or "" for ev in
                mi.chat.stream(model="mistral-small-latest", messages=factual) if ev.data.choices)
    ol = ollama.Client(host="https://ollama.example", proxy=rec.url, verify=ctx, timeout=60)
    ol.chat(model="llama3", messages=said, stream=False)
    "".join(p.message.content for p in ol.chat(model="llama3", messages=factual, stream=True))
    litellm.completion(model="openai/gpt-4o-mini", messages=said, api_key="sk-recorded",
                       client=openai.OpenAI(api_key="sk-recorded", max_retries=0,
                                            http_client=httpx.Client(proxy=rec.url, verify=ctx, timeout=60)))
    return {PERSON: "name", PERSON_EMAIL: "email"}


def google_cohere(rec: Recorder) -> dict:
    import cohere
    import httpx
    from google import genai
    from google.genai import types

    with httpx.Client(proxy=rec.url, verify=rec.ssl_context(), timeout=60) as http:
        gm = genai.Client(api_key="AIza-recorded", http_options=types.HttpOptions(httpx_client=http))
        chat = gm.chats.create(model="gemini-2.5-flash")
        chat.send_message(SAID)
        "".join(c.text or "" for c in chat.send_message_stream(FACTUAL))
        co = cohere.ClientV2(api_key="co-recorded", base_url="https://api.cohere.com", httpx_client=http)
        msgs = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": SAID}]
        r = co.chat(model="command-a-03-2025", messages=msgs)
        msgs += [{"role": "assistant", "content": r.message.content[0].text}, {"role": "user", "content": FACTUAL}]
        "".join(e.delta.message.content.text for e in co.chat_stream(model="command-a-03-2025", messages=msgs)
                if e.type == "content-delta")
    return {PERSON: "name", PERSON_EMAIL: "email"}


def npm(rec: Recorder) -> dict:
    """The AI SDKs from npm in a real Node.js process (tests/node/chat.mjs: openai, @anthropic-ai/sdk, the Vercel AI
    SDK), once with the person's message and once with the factual question."""
    node_dir = ROOT / "tests" / "node"
    if not (node_dir / "node_modules" / "openai").is_dir():
        raise SystemExit("tests/node/node_modules absent: run `make node` first")
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["NODE_EXTRA_CA_CERTS"] = str(rec.ca)
    for said, clients in ((SAID, []), (FACTUAL, ["openai-chat-stream", "anthropic-messages", "vercel-ai-chat"])):
        out = subprocess.run(["node", str(node_dir / "chat.mjs"), rec.url, said, *clients], cwd=node_dir, env=env,
                             capture_output=True, text=True, timeout=300, check=True)
        errors = [x for x in out.stdout.splitlines() if '"error"' in x]
        if errors:
            raise SystemExit("\n".join(errors))
    return {PERSON: "name", PERSON_EMAIL: "email"}


def cli(rec: Recorder) -> dict:
    import httpx
    import requests

    env = {**os.environ, "HTTPS_PROXY": rec.url, "https_proxy": rec.url}
    subprocess.run(["curl", "-sS", "-o", "/dev/null", "--cacert", str(rec.ca), "-d",
                    f"email={EMAIL}&password={PASSWORD}", f"https://{SHOP}/login"], env=env, check=True, timeout=60)
    with httpx.Client(proxy=rec.url, verify=rec.ssl_context(), timeout=60) as http:
        http.post(f"https://{SHOP}/contact", data={"name": NAME, "email": EMAIL, "message": MESSAGE})
    requests.post(f"https://{SHOP}/api/orders", timeout=60, verify=str(rec.ca),
                  proxies={"https": rec.url}, json={"email": EMAIL, "items": [{"sku": "TEE-BLUE-M", "qty": 1}],
                                                   "shipping": {"name": NAME, "address": {**SHIPPING, "country": "US"}}})
    return {EMAIL: "email", PASSWORD: "password", NAME: "name", SHIPPING["line1"]: "address",
            "(503) 555-0142": "phone"}


#: scenario → (HAR name, the local server it talks to, the clients)
SCENARIOS: dict[str, tuple[str, str, Callable[[Recorder], dict]]] = {
    "browser": ("chromium-shop", "shop", browser),
    "sdks": ("sdk-chat", "llm", sdks),
    "google-cohere": ("sdk-google-cohere", "google-cohere", google_cohere),
    "cli": ("cli-forms", "shop", cli),
    "npm": ("npm-sdk-chat", "llm", npm),
}


def record(name: str, out: Path) -> Path:
    har_name, server, clients = SCENARIOS[name]
    with tempfile.TemporaryDirectory(prefix="record-") as t:
        tmp = Path(t)
        srv = {"shop": start_shop, "llm": lambda d: start_llm_server(d, AI_HOSTS),
               "google-cohere": start_google_cohere_server}[server](tmp)
        try:
            har = out / f"{har_name}.har"
            with recording(tmp, srv.port, har) as rec:
                values = clients(rec)
        finally:
            srv.close()
    data = json.loads(har.read_text())
    har.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    (out / f"{har_name}.values.json").write_text(json.dumps(values, indent=1, ensure_ascii=False) + "\n")
    print(f"{name}: {len(data['log']['entries'])} requests → {har.relative_to(ROOT) if har.is_relative_to(ROOT) else har}")
    return har


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--only", default=",".join(SCENARIOS), help="comma-separated: " + ", ".join(SCENARIOS))
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.only.split(","):
        record(name.strip(), args.out)


if __name__ == "__main__":
    main()

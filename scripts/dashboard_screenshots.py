"""Screenshots of the dashboard for docs/dashboard.md (docs/dashboard*.png), from real decisions.

Starts a local upstream and `guardian-proxy run` (every upstream connection redirected to the local
server, so nothing leaves the machine), sends a mix of browser-like and agent-like requests through it in
a few rounds a minute apart, and photographs the page in Debian's headless Chromium:

    .venv/bin/python scripts/dashboard_screenshots.py [--out docs] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent / "guardian-proxy"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]

REQUESTS = [
    ("GET", "https://www.example.org/", None),
    ("GET", "https://www.example.org/news?page=2", None),
    ("POST", "https://www.google-analytics.com/g/collect?v=2&tid=G-XYZ&cid=555.666",
     {"en": "page_view", "uid": "user-8812", "email": "maria.garcia@example.com"}),
    ("POST", "https://ads.doubleclick.net/pagead/conversion", {"value": 59.0, "card": "4111 1111 1111 1111"}),
    ("POST", "https://support.zendesk.com/api/v2/tickets.json",
     {"ticket": {"subject": "Refund", "comment": "Hi, this is Maria Garcia (maria.garcia@example.com, "
                 "+1 415 555 0134). Please refund order 7731."}}),
    ("POST", "https://api.openai.com/v1/chat/completions",
     {"model": "gpt-4o-mini", "messages": [{"role": "user", "content":
      "My name is John Smith, I live at 12 Baker Street, London and I was diagnosed with type 2 diabetes. "
      "Draft a note to my employer."}]}),
    ("POST", "https://api.segment.io/v1/track", {"userId": "u-42", "event": "Signed Up",
                                                 "properties": {"email": "j.doe@example.net", "plan": "pro"}}),
    ("GET", "https://connect.facebook.net/en_US/fbevents.js", None),
    ("POST", "https://www.facebook.com/tr/", {"ev": "Purchase", "em": "j.doe@example.net", "ph": "+44 20 7946 0958"}),
    ("POST", "https://api.anthropic.com/v1/messages",
     {"model": "claude", "max_tokens": 200, "messages": [{"role": "user", "content": "Summarise: the meeting "
      "with Dr. Alice Wong about the MRI results is moved to Friday."}]}),
]


def upstream() -> ThreadingHTTPServer:
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def _serve(self):
            n = int(self.headers.get("content-length") or 0)
            if n:
                self.rfile.read(n)
            body = json.dumps({"ok": True}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _serve

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=ROOT / "docs")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="gp-shots-"))
    up = upstream()
    out = tmp / "proxy.txt"
    proc = subprocess.Popen([str(BIN), "run", "--port", "18480", "--dashboard-port", "18481", "--state-dir",
                             str(tmp / "state"), "--confdir", str(tmp / "mitm"), "--ssl-insecure",
                             "--redirect-upstream", f"127.0.0.1:{up.server_address[1]}"],
                            stdout=out.open("wb"), stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 180
        while "dashboard: " not in out.read_text(errors="replace"):
            if proc.poll() is not None or time.time() > deadline:
                raise SystemExit(out.read_text())
            time.sleep(0.5)
        url = re.search(r"dashboard: (\S+)", out.read_text()).group(1)
        # the upstream speaks plain HTTP: send the https URLs as http (the proxy decides the same way)
        client = httpx.Client(proxy="http://127.0.0.1:18480", timeout=60)
        for r in range(a.rounds):
            for method, u, body in REQUESTS:
                client.request(method, u.replace("https://", "http://"), json=body)
            if r < a.rounds - 1:
                time.sleep(61)
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=a.chromium, args=CHROMIUM_ARGS)
            page = b.new_page(viewport={"width": 1440, "height": 1100})
            page.goto(url)
            page.wait_for_selector("#live.on")
            page.wait_for_timeout(800)
            page.screenshot(path=str(a.out / "dashboard.png"))
            page.click('tr.decision[data-host="api.openai.com"]')
            page.wait_for_selector("#detail:not(.hidden)")
            page.wait_for_timeout(300)
            page.screenshot(path=str(a.out / "dashboard-detail.png"))
            page.click('nav .tab[data-tab="config"]')
            page.wait_for_selector("#models tbody tr")
            page.wait_for_timeout(300)
            page.screenshot(path=str(a.out / "dashboard-config.png"))
            b.close()
        print(f"wrote {a.out}/dashboard.png, dashboard-detail.png, dashboard-config.png")
    finally:
        proc.terminate()
        proc.wait(15)
        up.shutdown()


if __name__ == "__main__":
    main()

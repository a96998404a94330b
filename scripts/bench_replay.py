"""Replay benchmark on real captures: every request of ../shared/data/realtraffic through a real proxy.

    .venv/bin/python scripts/bench_replay.py                      # the whole corpus (28 HAR files, 275 cassettes)
    .venv/bin/python scripts/bench_replay.py --har-only --only 'chatgpt|spotify' --limit 50 --json out.json

Every request of the public HAR captures and VCR cassettes (personal values already replaced by scrub.py's synthetic
stand-ins), and of the HAR captures this project recorded with real clients (tests/fixtures/recorded,
scripts/record_captures.py: Chromium, the AI SDKs from pip, curl/httpx/requests, each beside the personal values its
scenario planted; `--no-recorded` leaves them out), is sent, as captured — method, Host, path and query, headers and cookies in their order, body
bytes and Content-Encoding — through one real `guardian-proxy run` process (default settings, no LLM, a temporary
state dir, `--redirect-upstream`) to a local upstream that records what arrives and answers with the recorded
response (cassettes: recorded status, headers and body bytes, event streams sent as chunked streams; HAR: the
recorded status, headers and decoded body, or a plain 200 when the capture has none). What the upstream received is
compared with what was sent, field by field, and every request is judged by the criteria below. HTTP/2 pseudo
headers, hop-by-hop headers (Connection, Keep-Alive, Transfer-Encoding, Upgrade, Expect, Proxy-*) and
Content-Length (recomputed) are not replayed; a URL with spaces or non-ASCII characters is sent percent-encoded;
these are the request "as sent" that the comparison starts from.

Personal stand-ins (what counts as personal data in the captures)
  scrub.py replaced personal values by stand-ins of known shapes; a request holds personal data when one of these
  is in it (plain, URL-encoded, JSON-escaped, base64 or compressed):
  - e-mail     any address at example.com / example.net
  - phone      a number whose digits hold 55501xx, or +44 7700 900xxx
  - card       a Luhn-valid 13-19 digit number starting 4111
  - address    "<n> Example Street / Sample Road / Test Avenue / Placeholder Lane / Mock Way", with the city,
               state and postcode that follow it (", San Francisco, CA 94102")
  - name       a first name + last name of scrub.py's pools ("Jordan Smith"), or a value made only of pool words
               under a name key (scrub.py's own key rules: first_name, display_name, full_name …)
  - username   under a username key: "user…" / "u…" as scrub.py makes them
  - password   the value under a password key (a credential: never sent raw to a tracker either)
  - IP address 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32 — personal for "needless" (changing it
               is justified) but not counted as a leak: every recipient sees the connection's address anyway.
  Tokens, session cookies, device, anonymous and tracking ids (same-shape random stand-ins) are NOT personal by
  themselves: a pseudonymous identifier is not a person's data (R-TRACKER-ID).

Who the request is for (judged from the capture, not from the proxy's decision)
  - user flow  the page's own site (same registrable domain as the top page of the capture), its own family of
               domains (same owner in the project's recipients table, one related-website set, or a registrable
               name that holds the site's own or starts with the same 6 letters: walmart → walmartimages), the first
               request of a page (the navigation), a request no page made (no Origin, Referer, Sec-Fetch-*: a tool
               addressing that host), an identity provider or payment processor, a developer's own server
               (loopback, private address, non-standard port), every AI-API request of a cassette.
  - AI chat turn  a user flow to an AI host (recipients table `ai_hosts`), or to any host on a public chat API's path
               (/v1/chat/completions, /v1/messages, Ollama's /api/chat …: a self-hosted model server), whose body
               carries a conversation (messages, contents, prompt, input, query, parts, f.req …).
  - tracker    a host the recipients table classes analytics / ad_network / social / data_broker (WhoTracks.Me,
               the broker registry, AdGuard's CNAME list) and not of the page's own registrable domain or related
               set; and any telemetry endpoint, first party included: a path segment telemetry, analytics,
               metrics, beacon, rgstr, collect, gen_204 …; a last segment track, events, log(s), pixel, stats, t;
               Segment-style /v1/t|p|i|b|e|m|identify|track|page|batch; a host label events, telemetry, analytics,
               metrics, stats, log(s), collector, beacon, tracking, pixel, rum; Sec-Fetch-Dest report; Ping-From.
  - other      every other third party (CDNs, widgets, unknown third parties).

Verdicts
  - breakage   a user flow blocked, or any byte of it changed (an AI chat turn: see next).
  - AI exchange broken  an AI chat turn blocked, changed anywhere but where a personal stand-in sat (every changed
               region of the text must overlap a stand-in: a reversible pseudonym there is the product), or the
               reply the client received differs from the recorded one (de-masking must give it back as it was;
               the same JSON or stream events only laid out anew is counted apart, not as broken). Two changes
               of a chat turn are the product too and counted apart: a pseudonym of a person the prompt itself
               names as one, and that person's age ("a person named Alice", "Bob who is 30 years old", "(age
               30)": cues in the words, not the proxy's detection; the reply must still come back as recorded);
               and agent guidance added to the instruction field (systemInstruction, system, instructions,
               preamble; the recorded instruction kept whole at its start) of a turn that carries personal data.
  - leak       a tracker call forwarded with a personal stand-in (not IP) still in it, raw: plain, URL-encoded,
               base64 or compressed (scripts/bench_everyday.py's `visible`).
  - needless   a request altered where the altered text holds no personal stand-in (a changed region of a field
               that overlaps none; the field is shown, as its shape before and after), or a request that is not a
               tracker call blocked with nothing personal in it. A user flow can be both breakage and needless.
  - counted too: a personal stand-in forwarded raw to a third party that is neither a tracker nor a user flow
    (not a leak by the rule above, shown so it can be judged), rewritten with personal data (the change sat on
    personal stand-ins: correct), trackers blocked, replay errors (a capture or request that could not be
    replayed, a timeout, nothing reaching the upstream without a block) — never judged as anything else.

Every failure is printed with what changed (field path, shape before → after, never a value) and the proxy's
rule and explanation from its decision log (state dir `decisions.jsonl`; it holds no raw values).
Rates are of the judged requests (replay errors left out). Targets
(docs/benchmarks.md#replay-of-real-captures): user flows altered or blocked ≤ 0.3 % of requests, needless
≤ 1 %, 0 AI exchanges broken, 0 leaks. The recipient classes come from
guardian_proxy/data/recipients.json as it is when the benchmark runs (built from ../shared/data/recipients).
"""

from __future__ import annotations

import argparse
import base64
import difflib
import gzip
import http.client
import importlib.util
import ipaddress
import json
import os
import re
import socket
import ssl
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, quote, quote_plus, unquote, unquote_plus, urlsplit

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from guardian_proxy import codec  # noqa: E402
from guardian_proxy.domains import is_ip, registrable_domain  # noqa: E402
from guardian_proxy.types import RawRequest  # noqa: E402
from scripts.bench_everyday import visible  # noqa: E402

DATA = Path(os.environ.get("GUARDIAN_SHARED", ROOT.parent / "shared")) / "data" / "realtraffic"
#: captures this project recorded with real clients (scripts/record_captures.py), each HAR with the personal values
#: its scenario planted beside it (`<name>.values.json`, value → kind)
RECORDED = ROOT / "tests" / "fixtures" / "recorded"
LIMIT = 64 * 1024 * 1024  # decoded-body limit for comparisons
HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te",
       "trailer", "transfer-encoding", "upgrade", "expect", "content-length", "http2-settings"}
TRACKERISH = {"analytics", "ad_network", "social", "data_broker"}
UNEXPECTED: list[str] = []

# ---------------------------------------------------------------------------------------------- stand-ins


def load_scrub():
    """The corpus's own scrub.py (key rules, name pools): read at run time from ../shared, never copied."""
    spec = importlib.util.spec_from_file_location("realtraffic_scrub", DATA / "scrub.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_SCRUB = None


def scrub():
    global _SCRUB
    if _SCRUB is None:
        _SCRUB = load_scrub()
    return _SCRUB


EMAIL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@example\.(?:com|net)(?![\w-])", re.I)
PHONE = re.compile(r"(?<![\w])\+?\(?\d[\d ().\-]{5,18}\d(?!\d)")
CARD = re.compile(r"(?<!\d)4111(?:[ -]?\d){9,15}(?!\d)")
#: the stand-in street, with the rest of the postal address that follows it (", San Francisco, CA 94102"): the
#: city and postcode of a person's street address are part of it
ADDRESS = re.compile(r"\b\d{1,3} (?:Example Street|Sample Road|Test Avenue|Placeholder Lane|Mock Way)\b"
                     r"(?:,\s?[A-Z][a-z]+(?:\s[A-Z][a-z]+){0,2}(?:,\s?[A-Z]{2})?(?:\s\d{5}(?:-\d{4})?)?)?")
IPS = re.compile(r"(?<![\w.])(?:192\.0\.2|198\.51\.100|203\.0\.113)\.\d{1,3}(?![\w.])|(?<![\w:])2001:db8::[0-9a-f]{1,4}(?![\w:])",
                 re.I)
_NAME_RX = None


def name_rx() -> re.Pattern:
    global _NAME_RX
    if _NAME_RX is None:
        s = scrub()
        first = "|".join(sorted(map(re.escape, s.FIRST), key=len, reverse=True))
        last = "|".join(sorted(map(re.escape, s.LAST), key=len, reverse=True))
        _NAME_RX = re.compile(rf"\b(?:{first})(?:\s+|%20|\+)(?:{last})\b")
    return _NAME_RX


def pool_words() -> set[str]:
    s = scrub()
    return {w.lower() for w in s.FIRST + s.LAST}


def luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _texts(req: RawRequest) -> list[str]:
    """The request's readable texts, case kept: URL (raw and decoded), headers, body (decoded), base64 parts."""
    body = decoded_body(req.headers, req.body)
    parts = [req.url, unquote(req.url), unquote_plus(req.url)] + [f"{k}: {v}" for k, v in req.headers]
    text = body.decode("utf-8", "replace")
    parts += [text, unquote_plus(text)]
    for blob in list(parts):
        for m in re.findall(r"[A-Za-z0-9+/_-]{16,}={0,2}", blob):
            s = m.replace("-", "+").replace("_", "/")
            try:
                parts.append(base64.b64decode(s + "=" * (-len(s) % 4), validate=True).decode("utf-8"))
            except Exception:
                continue
    return parts


def _leaves(obj, path="$"):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, obj


def _keyed_pairs(req: RawRequest) -> list[tuple[str, str]]:
    """(key, value) of the query, form and JSON body leaves and cookies."""
    pairs: list[tuple[str, str]] = []
    q = urlsplit(req.url).query
    if q:
        pairs += parse_qsl(q, keep_blank_values=True)
    for k, v in req.headers:
        if k.lower() == "cookie":
            for part in v.split(";"):
                if "=" in part:
                    a, b = part.strip().split("=", 1)
                    pairs.append((a, unquote(b)))
    text = decoded_body(req.headers, req.body).decode("utf-8", "replace")
    st = text.lstrip()
    if st[:1] in "{[":
        try:
            obj = json.loads(text)
        except ValueError:
            obj = None
        if obj is not None:
            for p, v in _leaves(obj):
                if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                    key = re.sub(r"\[\d+\]$", "", p).rsplit(".", 1)[-1]
                    pairs.append((key, str(v)))
    elif "=" in text and len(text) < 1_000_000:
        try:
            pairs += parse_qsl(text, keep_blank_values=True)
        except ValueError:
            pass
    return pairs


def personal_values(req: RawRequest, planted: dict[str, str] | None = None) -> dict[str, str]:
    """Personal stand-ins the request carries: value → kind (see the module docstring); `planted`: the values a
    recorded capture's scenario planted (RECORDED), counted wherever the request holds them."""
    found: dict[str, str] = {}
    texts = _texts(req)
    for v, kind in (planted or {}).items():
        if any(v in t for t in texts):
            found[v] = kind
    for t in texts:
        for m in EMAIL.finditer(t):
            found.setdefault(m.group(0), "email")
        for m in CARD.finditer(t):
            d = re.sub(r"\D", "", m.group(0))
            if 13 <= len(d) <= 19 and luhn(d):
                found.setdefault(m.group(0), "card")
        for m in PHONE.finditer(t):
            d = re.sub(r"\D", "", m.group(0))
            if 7 <= len(d) <= 15 and (re.search(r"55501\d\d", d) or "7700900" in d) and not luhn_card(d):
                found.setdefault(m.group(0).strip(), "phone")
        for m in ADDRESS.finditer(t):
            found.setdefault(m.group(0), "address")
        for m in IPS.finditer(t):
            found.setdefault(m.group(0), "ip")
        for m in name_rx().finditer(t):
            found.setdefault(re.sub(r"%20|\+", " ", m.group(0)), "name")
    s, pool = scrub(), pool_words()
    for key, v in _keyed_pairs(req):
        v = v.strip()
        kind = s.classify_key(key) if key else None
        if kind is None and key and key.lower() in _LOCALITY_KEYS:
            kind = "locality"
        if not v or not kind:
            continue
        if kind in ("address", "locality") and len(v) >= 3 and any(
                k == "address" and re.search(rf",\s?{re.escape(v)}\b", a) for a, k in list(found.items())):
            found.setdefault(v, "address")  # the city (or postcode) of a stand-in address, held in its own field
        elif kind in ("name", "name_weak"):
            words = re.findall(r"[^\W\d_]+", v)
            if words and all(w.lower() in pool for w in words) and len(v) <= 60:
                found.setdefault(v, "name")
        elif kind == "username":
            if re.fullmatch(r"user[a-z0-9._-]{1,60}|USER[A-Z0-9._-]{1,60}|u[a-z0-9]{1,3}", v) and s.plausible(kind, v):
                found.setdefault(v, "username")
        elif kind == "password":
            if s.plausible(kind, v) and len(v) >= 4:
                found.setdefault(v, "password")
        elif kind == "address" and s.plausible(kind, v) and re.search(r"\d", v) and len(v) >= 4:
            found.setdefault(v, "address")
    return found


#: keys that hold the city of an address in its own field (the scrubber's key table has no kind for them)
_LOCALITY_KEYS = frozenset({"city", "town", "locality"})


#: the prompt names a person: "a person named X", "called X", "Mr X"; "X who is …", "X (age 30)", "X, aged 30"
_NAMED = re.compile(r"\b(?:named|called|name is|Mr\.?|Mrs\.?|Ms\.?|Dr\.?)\s+([A-Z][a-z]+(?:\s[A-Z][a-z]+)?)\b"
                    r"|\b([A-Z][a-z]+(?:\s[A-Z][a-z]+)?)(?=\s+who\b|\s+\(age\s|,\s+aged\s|\s+is\s+\d{1,3}\s+years?\s+old)")
#: the age of that person in the same sentence: "who is 30 years old", "(age 30)", "aged 30"
_AGE = re.compile(r"\b(?:is|aged|age)\s+(\d{1,3})(?:\s+years?\s+old|\))")
_NOT_NAMES = {"The", "This", "That", "It", "He", "She", "They", "We", "You", "I", "Who", "What", "Add", "Create"}


def prompt_persons(req: RawRequest) -> dict[str, str]:
    """AI chat turns only: the persons the prompt itself names, and their ages ("Create a person named Alice",
    "Add Bob who is 30 years old"), with their values under a name key of the request's JSON (a tool call's
    `"name": "Alice"`). A reversible pseudonym there keeps the exchange's meaning: the model gets a stand-in
    for a person's identifier, the reply is de-masked (checked apart). Read by the oracle from the words
    around the value, never from the proxy's own detection; a country or a fact ("the capital of France") is
    not named as a person by any of these cues, so changing it stays broken."""
    found: dict[str, str] = {}
    text = decoded_body(req.headers, req.body).decode("utf-8", "replace")
    for sentence in re.split(r"(?<=[.!?])\s+|\\n|\n", text):
        names = [" ".join(w for w in n.split() if w not in _NOT_NAMES) for m in _NAMED.finditer(sentence)
                 for n in m.groups() if n]
        names = [n for n in names if n]
        for n in names:
            found.setdefault(n, "named person")
        if names:
            for m in _AGE.finditer(sentence):
                found.setdefault(m.group(0), "named person's age")
    return found


#: the instruction fields of the chat APIs (Gemini, Anthropic, OpenAI Responses, Cohere)
_INSTRUCTION = re.compile(r"body:\$\.(?:systemInstruction|system_instruction|system|instructions|preamble)\b")


def guidance_added(field: str, o: str | None, n: str | None) -> bool:
    """Agent guidance the proxy adds where the provider takes instructions (agents/shapes.py): a
    new or extended instruction field, the recorded instruction kept whole at its start."""
    return bool(_INSTRUCTION.match(field)) and n is not None and (not o or n.startswith(o)) and n != (o or "")


def luhn_card(d: str) -> bool:
    return d.startswith("4111") and 13 <= len(d) <= 19 and luhn(d)


def _variants(v: str) -> list[str]:
    out = [v, quote(v, safe=""), quote_plus(v), json.dumps(v)[1:-1]]
    return [x for i, x in enumerate(out) if x and x not in out[:i]]


# ---------------------------------------------------------------------------------------------- bodies, shapes


def decoded_body(headers, body: bytes) -> bytes:
    enc = next((v for k, v in headers if k.lower() == "content-encoding"), None) or codec.sniff(body)
    if enc and body:
        try:
            return codec.decode(body, enc, LIMIT)
        except Exception:
            return body
    return body


_PLACEHOLDER = re.compile(r"\[[A-Z][A-Z0-9_]*\]")


def shape(s: str, limit: int = 28) -> str:
    """A value's shape, never the value: letters a/A, digits 9, punctuation kept; the proxy's [PLACEHOLDERS] as
    they are (they are not personal)."""
    if s is None:
        return "∅"
    out, i = [], 0
    for m in _PLACEHOLDER.finditer(s):
        out.append(_shape_plain(s[i:m.start()]))
        out.append(m.group(0))
        i = m.end()
    out.append(_shape_plain(s[i:]))
    r = "".join(out)
    return r if len(r) <= limit else r[:limit] + f"…(+{len(r) - limit})"


def _shape_plain(s: str) -> str:
    return "".join("9" if c.isdigit() else ("A" if c.isupper() else "a") if c.isalpha() else
                   {" ": "␣", "\n": "⏎", "\r": "⏎", "\t": "⇥"}.get(c, c) for c in s)


def fields(method: str, url: str, headers: list[tuple[str, str]], body: bytes) -> dict[str, str]:
    """A request as named fields: path, query:KEY, header:NAME, cookie:NAME, body:$.json.path | body:form:KEY |
    body, content-coding."""
    out: dict[str, str] = {"method": method}
    sp = urlsplit(url)
    out["path"] = sp.path
    counts: Counter = Counter()
    for k, v in parse_qsl(sp.query, keep_blank_values=True):
        counts[k] += 1
        out[f"query:{k}" + (f"#{counts[k]}" if counts[k] > 1 else "")] = v
    if sp.query and not parse_qsl(sp.query, keep_blank_values=True):
        out["query"] = sp.query
    out["query(raw)"] = sp.query  # encoding changes only: reported when nothing else in the query changed
    hcount: Counter = Counter()
    for k, v in headers:
        lk = k.lower()
        if lk in HOP:
            continue
        if lk == "cookie":
            for part in v.split(";"):
                if part.strip():
                    a, _, b = part.strip().partition("=")
                    hcount["cookie:" + a] += 1
                    out[f"cookie:{a}" + (f"#{hcount['cookie:' + a]}" if hcount['cookie:' + a] > 1 else "")] = b
            continue
        hcount[lk] += 1
        out[f"header:{lk}" + (f"#{hcount[lk]}" if hcount[lk] > 1 else "")] = v.strip(" \t")
    dec = decoded_body(headers, body)
    coding = next((v for k, v in headers if k.lower() == "content-encoding"), "") or ""
    out["content-coding"] = coding.lower() + ("" if dec == body else "+compressed")
    text = dec.decode("utf-8", "replace") if dec else ""
    st = text.lstrip()
    obj = None
    if st[:1] in "{[":
        try:
            obj = json.loads(text)
        except ValueError:
            obj = None
    if obj is not None and isinstance(obj, (dict, list)):
        for p, v in _leaves(obj):
            out["body:" + p] = v if isinstance(v, str) else json.dumps(v)
        out["body(layout)"] = text  # formatting changes only
    elif text and "=" in text and "\n" not in text.strip() and re.fullmatch(r"[^\s]*", text.strip()):
        c2: Counter = Counter()
        for k, v in parse_qsl(text, keep_blank_values=True):
            c2[k] += 1
            out[f"body:form:{k}" + (f"#{c2[k]}" if c2[k] > 1 else "")] = v
        out["body(raw)"] = text
    elif text:
        out["body"] = text
    return out


def changed_fields(a: dict[str, str], b: dict[str, str]) -> list[str]:
    keys = [k for k in dict.fromkeys(list(a) + list(b)) if a.get(k) != b.get(k)]
    # the raw forms only when nothing else changed in that part
    if any(k.startswith("query:") or k == "query" for k in keys):
        keys = [k for k in keys if k != "query(raw)"]
    if any(k.startswith("body:") or k == "body" for k in keys):
        keys = [k for k in keys if k not in ("body(layout)", "body(raw)")]
    return keys


def unjustified(o: str | None, n: str | None, values: dict[str, str]) -> tuple[bool, str, str]:
    """Is the change from o to n anywhere but on a personal stand-in? → (unjustified, shape before, after) of the
    first unjustified changed region (or of the whole value)."""
    o, n = o if o is not None else "", n if n is not None else ""
    spans = []
    lo = o.lower()
    for v in values:
        for var in _variants(v):
            i = lo.find(var.lower())
            while i >= 0:
                spans.append((i, i + len(var)))
                i = lo.find(var.lower(), i + 1)
    if len(o) + len(n) > 40000:
        return not spans, shape(o), shape(n)
    sm = difflib.SequenceMatcher(None, o, n, autojunk=False)
    first_ok = None
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        hit = any(s <= i2 + 1 and i1 - 1 <= e for s, e in spans)
        if len(o) <= 60 and len(n) <= 60 or not o:
            region = (shape(o), shape(n))
        else:  # the changed part with a little context, placeholders whole
            for m in _PLACEHOLDER.finditer(n):
                if m.start() < j2 and j1 < m.end():
                    j1, j2 = min(j1, m.start()), max(j2, m.end())
            region = ("…" + shape(o[max(0, i1 - 4):i2 + 4]) + "…", "…" + shape(n[max(0, j1 - 4):j2 + 4]) + "…")
        if not hit:
            return True, *region
        first_ok = first_ok or region
    return False, *(first_ok or (shape(o), shape(n)))


# ---------------------------------------------------------------------------------------------- captures


@dataclass
class Item:
    file: str
    idx: int
    method: str = "GET"
    url: str = ""
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    resp_status: int = 200
    resp_headers: list[tuple[str, str]] = field(default_factory=list)
    resp_body: bytes = b""
    resp_stream: bool = False
    page: str = ""  # registrable domain of the capture's top page ("" for cassettes)
    tool: bool = False  # a cassette: an SDK addressing the API
    planted: dict[str, str] = field(default_factory=dict)  # a recorded capture's planted values (value → kind)
    error: str | None = None  # could not be built: a replay error with this reason
    notes: list[str] = field(default_factory=list)
    # results
    t0: float = 0.0
    t1: float = 0.0
    status: int | None = None
    blocked: bool = False
    decision_id: str | None = None
    got_headers: list[tuple[str, str]] = field(default_factory=list)
    got_body: bytes = b""
    arrived: list[dict] = field(default_factory=list)
    key: tuple[str, str] = ("", "")

    @property
    def host(self) -> str:
        return (urlsplit(self.url).hostname or "").lower()

    @property
    def raw(self) -> RawRequest:
        return RawRequest(method=self.method, url=self.url, headers=self.headers, body=self.body)


def _clean_url(url: str) -> str:
    url = url.split("#", 1)[0]
    return re.sub(r"[^\x21-\x7e]", lambda m: quote(m.group(0).encode("utf-8")), url)


def _request_headers(url: str, hdrs: list[tuple[str, str]], notes: list[str]) -> list[tuple[str, str]]:
    out, host, authority = [], None, None
    for k, v in hdrs:
        k = str(k)
        v = re.sub(r"[\r\n]+\s*", " ", str(v)).strip(" \t")  # surrounding whitespace is not part of a value
        if k.startswith(":"):
            if k == ":authority":
                authority = v
            continue
        if k.lower() in HOP:
            continue
        if not re.fullmatch(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+", k):
            notes.append("invalid header name dropped")
            continue
        if k.lower() == "host":
            host = v
        out.append((k, v))
    if host is None:
        out.insert(0, ("Host", authority or urlsplit(url).netloc))
    return out


def _har_body(req: dict, notes: list[str]) -> bytes:
    pd = req.get("postData") or {}
    text = pd.get("text")
    if text is None and pd.get("params"):
        from urllib.parse import urlencode

        return urlencode([(p.get("name", ""), p.get("value", "")) for p in pd["params"]]).encode()
    if not text:
        return b""
    if pd.get("encoding") == "base64":
        return base64.b64decode(text)
    if text[:2] == "\x1f\x8b" and max(map(ord, text)) < 256:
        return text.encode("latin-1")  # a gzip body stored as latin-1 text (Chrome)
    return text.encode("utf-8", "surrogatepass")


def _coherent_coding(headers: list[tuple[str, str]], body: bytes, notes: list[str]) -> bytes:
    """A body whose Content-Encoding the capture states but whose bytes are its decoded text (exports that store
    the text): encode it as declared, so the request on the wire is what the browser sent."""
    enc = next((v for k, v in headers if k.lower() == "content-encoding"), None)
    if not enc or not body or enc.strip().lower() == "identity":
        return body
    try:
        codec.decode(body, enc, LIMIT)
        return body
    except Exception:
        try:
            notes.append(f"body re-encoded as {enc}")
            return codec.encode(body, enc)
        except Exception:
            return body


def load_har(path: Path) -> list[Item]:
    op = gzip.open if path.name.endswith(".gz") else open
    with op(path, "rt", encoding="utf-8-sig") as f:
        har = json.load(f)
    log = har.get("log", har)
    entries = log.get("entries") or []
    pages = {p.get("id"): p for p in log.get("pages") or []}
    page_site: dict = {}
    # the top page of each pageref: the site most of its requests name as Referer / Origin (an iframe's requests
    # are fewer), else the page's title when it is a URL, else its first request
    votes: dict = defaultdict(Counter)
    for e in entries:
        for h in (e.get("request") or {}).get("headers") or []:
            if h.get("name", "").lower() in ("referer", "origin"):
                d = registrable_domain(urlsplit(str(h.get("value", ""))).hostname or "")
                if d:
                    votes[e.get("pageref")][d] += 1
    for e in entries:
        ref = e.get("pageref")
        if ref in page_site:
            continue
        title = (pages.get(ref) or {}).get("title") or ""
        u = title if title.startswith(("http://", "https://")) else (e.get("request") or {}).get("url", "")
        page_site[ref] = votes[ref].most_common(1)[0][0] if votes[ref] else \
            registrable_domain(urlsplit(u).hostname or "")
    first_site = next(iter(page_site.values()), "")
    sidecar = path.with_name(path.name.split(".har")[0] + ".values.json")
    planted = json.loads(sidecar.read_text()) if sidecar.exists() else {}
    items = []
    for i, e in enumerate(entries):
        it = Item(file=path.name, idx=i, planted=planted)
        try:
            req, resp = e["request"], e.get("response") or {}
            it.method = req.get("method", "GET").upper()
            url = req.get("url", "")
            if not url.startswith(("http://", "https://")):
                it.url, it.error = url[:40], "not an HTTP(S) URL"
                items.append(it)
                continue
            it.url = _clean_url(url)
            if it.url != url.split("#", 1)[0]:
                it.notes.append("URL percent-encoded")
            it.headers = _request_headers(it.url, [(h["name"], h["value"]) for h in req.get("headers") or []],
                                          it.notes)
            if not any(k.lower() == "cookie" for k, _ in it.headers) and req.get("cookies"):
                it.headers.append(("Cookie", "; ".join(f"{c['name']}={c['value']}" for c in req["cookies"])))
            it.body = _coherent_coding(it.headers, _har_body(req, it.notes), it.notes)
            it.page = page_site.get(e.get("pageref"), first_site) or first_site
            st = int(resp.get("status") or 0)
            it.resp_status = st if 200 <= st < 600 and st not in (204, 304) else (st if st in (204, 304) else 200)
            content = resp.get("content") or {}
            text = content.get("text") or ""
            if st in (204, 304) or it.method == "HEAD":
                body = b""
            elif content.get("encoding") == "base64":
                try:
                    body = base64.b64decode(text)
                except Exception:
                    body = b""
            else:
                body = text.encode("utf-8", "surrogatepass")
            it.resp_body = body
            it.resp_headers = [(h["name"], re.sub(r"[\r\n]+", " ", str(h["value"])))
                               for h in resp.get("headers") or []
                               if not h["name"].startswith(":") and h["name"].lower() not in HOP
                               and h["name"].lower() != "content-encoding"
                               and re.fullmatch(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+", h["name"])]
            ctype = next((v for k, v in it.resp_headers if k.lower() == "content-type"), "")
            it.resp_stream = "event-stream" in ctype.lower()
        except Exception as ex:  # a malformed entry is a replay error, never a crash
            it.error = f"unreadable entry: {type(ex).__name__}"
        items.append(it)
    return items


def _hdr_list(h) -> list[tuple[str, str]]:
    out = []
    for k, vs in (h or {}).items():
        for v in vs if isinstance(vs, list) else [vs]:
            out.append((str(k), str(v)))
    return out


def _as_bytes(b) -> bytes:
    if b is None:
        return b""
    if isinstance(b, dict):
        b = b.get("string", b"")
    if isinstance(b, bytes):
        return b
    return str(b).encode("utf-8", "surrogatepass")


def load_cassette(path: Path) -> list[Item]:
    import yaml

    op = gzip.open if path.name.endswith(".gz") else open
    with op(path, "rt", encoding="utf-8") as f:
        data = yaml.safe_load(f)
    items = []
    name = f"{path.parent.name}/{path.name}"
    for i, x in enumerate((data or {}).get("interactions") or []):
        it = Item(file=name, idx=i, tool=True)
        try:
            req, resp = x["request"], x["response"]
            it.method = str(req.get("method", "GET")).upper()
            it.url = _clean_url(req["uri"])
            it.headers = _request_headers(it.url, _hdr_list(req.get("headers")), it.notes)
            it.body = _coherent_coding(it.headers, _as_bytes(req.get("body")), it.notes)
            st = resp.get("status") or {}
            it.resp_status = int(st.get("code", 200) if isinstance(st, dict) else st)
            it.resp_headers = [(k, v) for k, v in _hdr_list(resp.get("headers"))
                               if k.lower() not in HOP and re.fullmatch(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+", k)]
            it.resp_body = b"" if it.method == "HEAD" or it.resp_status in (204, 304) else _as_bytes(resp.get("body"))
            ctype = next((v for k, v in it.resp_headers if k.lower() == "content-type"), "").lower()
            it.resp_stream = any(s in ctype for s in ("event-stream", "eventstream", "ndjson", "jsonl"))
        except Exception as ex:
            it.error = f"unreadable interaction: {type(ex).__name__}"
        items.append(it)
    return items


def captures(har: bool, cassettes: bool, only: str | None, recorded: bool = True) -> list[Path]:
    """The public captures (DATA), then this project's own recordings (RECORDED: HAR files, replayed with the HARs);
    `only` is a regex on `har/…`, `cassettes/…` or `recorded/…`."""
    files: list[Path] = []
    if har:
        files += sorted((DATA / "har").glob("*.har*"))
    if cassettes:
        files += sorted((DATA / "cassettes").glob("*/*.yaml*"))
    if har and recorded:
        files += sorted(RECORDED.glob("*.har"))
    if only:
        files = [f for f in files if re.search(only, _rel(f))]
    return files


def _rel(f: Path) -> str:
    return str(f.relative_to(DATA)) if f.is_relative_to(DATA) else f"recorded/{f.name}"


# ---------------------------------------------------------------------------------------------- who is it for

_REC = None


def recipients() -> dict:
    global _REC
    if _REC is None:
        _REC = json.loads((ROOT / "guardian_proxy" / "data" / "recipients.json").read_text())
    return _REC


def _lookup(table: dict, host: str):
    h = host
    while h:
        if h in table:
            return table[h]
        if "." not in h:
            return None
        h = h.split(".", 1)[1]
    return None


def tracker_class(host: str) -> str | None:
    r = recipients()
    t = _lookup(r["trackers"], host)
    if t and t[0] in TRACKERISH:
        return t[0]
    if _lookup(r["brokers"], host):
        return "data_broker"
    if _lookup(r["cname_trackers"], host):
        return "tracker (CNAME)"
    return None


def owner(dom: str) -> str | None:
    r = recipients()
    o = r["owner_sites"].get(dom)
    if o:
        return o
    t = _lookup(r["trackers"], dom)
    return t[1] if t else None


def related(dom: str) -> str:
    return recipients()["related_sets"].get(dom, dom)


def ai_host(host: str) -> bool:
    r = recipients()
    if host in r["ai_hosts"] or _lookup(r["ai_hosts"], host):
        return True
    return any(host.startswith(a) and host.endswith(b) for a, b, _ in r["ai_patterns"])


IDP_PAY = re.compile(r"(^|\.)(login\.microsoftonline\.com|login\.live\.com|accounts\.google\.com|appleid\.apple\.com|"
                     r"auth0\.com|okta\.com|onelogin\.com|b2clogin\.com|paypal\.com|stripe\.com|stripe\.network|"
                     r"msauth\.net|msftauth\.net|microsoftazuread-sso\.com|braintreegateway\.com|adyen\.com|checkout\.com|razorpay\.com|klarna\.com|paytm\.com|"
                     r"paytmpayments\.com|payu\.in|authorize\.net|squareup\.com)$")
IDP_LABEL = re.compile(r"^(login|auth|sso|accounts?|signin|oauth|id|secure|pay|payments?|checkout)\.")
TELEMETRY = re.compile(r"/(?:telemetry|analytics|metrics|beacon|rgstr|collect|tracking|statsc|jserror|csp-report|"
                       r"gen_204|generate_204)(?:/|$)|/(?:track|events?|log|logs|logging|pixel|stats|rum|vitals|"
                       r"impressions?|log_event|t)/?$|/v\d+/(?:[tpibem]|identify|track|page|batch)/?$", re.I)
TELEMETRY_HOST = {"events", "telemetry", "analytics", "metrics", "stats", "log", "logs", "logging", "collector",
                  "beacon", "beacons", "tracking", "track", "pixel", "rum"}
#: the paths of the public chat APIs (OpenAI and every compatible server, Anthropic, Ollama): a request there speaks
#: to a model whatever the host (a self-hosted Ollama or vLLM, a gateway)
CHAT_API_PATHS = ("/v1/chat/completions", "/chat/completions", "/v1/completions", "/v1/responses", "/v1/messages",
                  "/v1/complete", "/api/chat", "/api/generate")
CHAT_KEYS = {"messages", "contents", "prompt", "input", "inputtext", "query", "parts", "message", "text",
             "conversation", "f.req", "query_str", "documents", "texts", "instances"}


def same_name(dom: str, page: str) -> bool:
    """A site's own CDN or service domain by its name: one registrable label holds the other (walmart →
    walmartimages, spotify → spotifycdn, amazon → media-amazon) or both start alike (microsoftonline →
    microsoftazuread-sso). Checked after the tracker lists, so amazon-adsystem stays an ad network."""
    a, b = dom.split(".")[0], page.split(".")[0]
    if len(a) < 4 or len(b) < 4:
        return False
    if a in b or b in a:
        return True
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n >= 6


def _page_made(headers: list[tuple[str, str]]) -> bool:
    names = {k.lower() for k, _ in headers}
    return bool(names & {"origin", "referer", "ping-from"}) or any(n.startswith("sec-fetch-") for n in names)


def _own_server(host: str, port: int | None, scheme: str) -> bool:
    if host in ("localhost",) or host.endswith(".localhost") or host.endswith(".local"):
        return True
    if is_ip(host):
        ip = ipaddress.ip_address(host.strip("[]"))
        if ip.is_loopback or ip.is_private:
            return True
    return port is not None and port not in (80, 443)


def classify(it: Item) -> tuple[str, str]:
    """→ (class, why): class user | ai_chat | tracker | other (see the module docstring)."""
    sp = urlsplit(it.url)
    host, dom = it.host, registrable_domain(it.host)
    h = {k.lower(): v for k, v in it.headers}
    telemetry = bool(TELEMETRY.search(sp.path)) or h.get("sec-fetch-dest") == "report" or "ping-from" in h \
        or bool(set(re.split(r"[.-]", host)[:-2]) & TELEMETRY_HOST)
    tc = tracker_class(host)
    first = bool(it.page) and (dom == it.page or related(dom) == related(it.page))
    if telemetry:
        return "tracker", "telemetry endpoint" + (" (first party)" if first or not tc else f" ({tc})")
    if tc and not first:
        return "tracker", tc
    chat = False
    if ai_host(host) or it.tool or sp.path.rstrip("/").endswith(CHAT_API_PATHS):
        body = decoded_body(it.headers, it.body)
        keys: set[str] = set()
        try:
            obj = json.loads(body) if body[:1] in b"{[" else None
            if isinstance(obj, dict):
                keys = {k.lower() for k in obj}
        except ValueError:
            pass
        if not keys and b"=" in body[:4096]:
            keys = {k.lower() for k, _ in parse_qsl(body[:100000].decode("utf-8", "replace"))}
        chat = bool(keys & CHAT_KEYS) and it.method in ("POST", "PUT")
    if chat:
        return "ai_chat", "AI chat turn"
    if it.tool:
        return "user", "tool (AI API client)"
    if first:
        return "user", "own site" if dom == it.page else "related set"
    o = owner(dom)
    if o and it.page and o == owner(it.page):
        return "user", "same owner"
    if it.page and same_name(dom, it.page):
        return "user", "family (name)"
    if _own_server(host, sp.port, sp.scheme):
        return "user", "own server"
    if IDP_PAY.search(host) or IDP_LABEL.match(host):
        return "user", "identity/payment"
    if not _page_made(it.headers):
        return "user", "tool (no page headers)"
    if it.idx == 0:
        return "user", "navigation"
    if (h.get("sec-fetch-mode") == "navigate") or h.get("sec-fetch-dest") in ("document",):
        return "user", "navigation"
    return "other", "third party"


# ---------------------------------------------------------------------------------------------- upstream


class Upstream:
    """One local server for every host: TLS when the connection starts with a handshake, plain otherwise. The
    request is matched to the one in flight for its (method, Host) — at most one at a time — and answered with
    the recorded response."""

    def __init__(self, tmp: Path):
        from tests.support.upstream import self_signed

        cp, kp = self_signed(tmp, ["localhost"])
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(cp, kp)
        self.lock = threading.Lock()
        self.pending: dict[tuple[str, str], Item] = {}
        self.unexpected: list[str] = []
        up = self

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 64

            def finish_request(self, request, client_address):
                try:
                    request.settimeout(30)
                    first = request.recv(1, socket.MSG_PEEK)
                    if first == b"\x16":
                        request = up.ctx.wrap_socket(request, server_side=True)
                except (OSError, ssl.SSLError):
                    return
                self.RequestHandlerClass(request, client_address, self)

        self.httpd = Server(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _match(self, method: str, host: str) -> Item | None:
        with self.lock:
            it = self.pending.get((method, host.lower()))
            if it is None:
                cands = [v for (m, hh), v in self.pending.items() if m == method and hh.split(":")[0] == host.lower().split(":")[0]]
                it = cands[0] if len(cands) == 1 else None
            return it

    def _handler(self):
        up = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _read_body(self) -> bytes:
                if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
                    out = b""
                    while True:
                        line = self.rfile.readline()
                        n = int(line.split(b";")[0].strip() or b"0", 16)
                        if n == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return out
                        out += self.rfile.read(n)
                        self.rfile.readline()
                n = int(self.headers.get("content-length") or 0)
                return self.rfile.read(n) if n else b""

            def _serve(self):
                body = self._read_body()
                host = self.headers.get("host", "")
                it = up._match(self.command, host)
                rec = {"method": self.command, "path": self.path, "headers": list(self.headers.items()), "body": body}
                if it is None:
                    up.unexpected.append(f"{self.command} {host}")
                    self.send_response(404)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                it.arrived.append(rec)
                self.send_response(it.resp_status)
                for k, v in it.resp_headers:
                    if k.lower() not in ("date", "server"):
                        self.send_header(k, v)
                rb = it.resp_body if self.command != "HEAD" else b""
                if it.resp_stream and rb:
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                    parts = re.split(rb"(?<=\n\n)", rb) if b"\n\n" in rb else [rb[i:i + 512] for i in range(0, len(rb), 512)]
                    for p in parts:
                        if p:
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(p), p))
                            self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                else:
                    self.send_header("content-length", str(len(it.resp_body)) if self.command == "HEAD" or it.resp_status not in (204, 304) else "0")
                    self.end_headers()
                    if rb and it.resp_status not in (204, 304):
                        self.wfile.write(rb)
                self.wfile.flush()

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve

        return H


# ---------------------------------------------------------------------------------------------- client


def _hb(s: str) -> bytes:
    try:
        return s.encode("latin-1")
    except UnicodeEncodeError:
        return s.encode("utf-8")


def send(it: Item, proxy_port: int, timeout: float) -> None:
    sp = urlsplit(it.url)
    port = sp.port or (443 if sp.scheme == "https" else 80)
    host = sp.hostname or ""
    target = (sp.path or "/") + (f"?{sp.query}" if sp.query else "")
    if sp.scheme == "https":
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        conn = http.client.HTTPSConnection("127.0.0.1", proxy_port, timeout=timeout, context=ctx)
        conn.set_tunnel(host if ":" not in host else f"[{host}]", port)
    else:
        conn = http.client.HTTPConnection("127.0.0.1", proxy_port, timeout=timeout)
        target = it.url
    try:
        conn.putrequest(it.method, target, skip_host=True, skip_accept_encoding=True)
        for k, v in it.headers:
            conn.putheader(k, _hb(v))
        if it.body or it.method in ("POST", "PUT", "PATCH"):
            conn.putheader("Content-Length", str(len(it.body)))
        conn.endheaders(it.body or None)
        r = conn.getresponse()
        it.status = r.status
        it.got_headers = list(r.getheaders())
        it.got_body = r.read()
        hd = {k.lower(): v for k, v in it.got_headers}
        it.blocked = "x-guardian-blocked" in hd
        it.decision_id = hd.get("x-guardian-decision")
    except OSError as ex:
        m = re.search(r"Tunnel connection failed: (\d+)", str(ex))
        if m:  # refused at CONNECT
            it.status, it.blocked = int(m.group(1)), int(m.group(1)) in (403, 502)
            it.notes.append(f"CONNECT refused: {ex}"[:120])
        else:
            raise
    finally:
        conn.close()


class Runner:
    """Sends items through the proxy in capture order, a few at a time, at most one in flight per (method, Host)
    (so the upstream knows which recorded exchange an arriving request is)."""

    def __init__(self, up: Upstream, proxy_port: int, concurrency: int, timeout: float):
        self.up, self.port, self.n, self.timeout = up, proxy_port, concurrency, timeout
        self.cv = threading.Condition()
        self.busy: set[tuple[str, str]] = set()
        self.inflight = 0
        self.errors: dict[int, str] = {}

    def _one(self, it: Item) -> None:
        try:
            it.t0 = time.time()
            send(it, self.port, self.timeout)
        except Exception as ex:  # a request that cannot be replayed is a replay error, never a crash
            it.error = f"{type(ex).__name__}: {str(ex)[:100]}"
        finally:
            it.t1 = time.time()
            time.sleep(0.02)  # a late upstream arrival for this key still finds it
            with self.cv:
                with self.up.lock:
                    self.up.pending.pop(it.key, None)
                self.busy.discard(it.key)
                self.inflight -= 1
                self.cv.notify_all()

    def run(self, items: list[Item], progress=None) -> None:
        threads = []
        for n, it in enumerate(items):
            if it.error:
                continue
            host = next((v for k, v in it.headers if k.lower() == "host"), it.host)
            it.key = (it.method, host.lower())
            with self.cv:
                while self.inflight >= self.n or it.key in self.busy:
                    self.cv.wait()
                self.busy.add(it.key)
                self.inflight += 1
                with self.up.lock:
                    self.up.pending[it.key] = it
            t = threading.Thread(target=self._one, args=(it,), daemon=True)
            t.start()
            threads.append(t)
            if progress and n % 100 == 0:
                progress(n)
        for t in threads:
            t.join()


# ---------------------------------------------------------------------------------------------- judging


def judge(it: Item) -> dict:
    cls, why = classify(it) if not it.error else ("-", "-")
    res = {"file": it.file, "idx": it.idx, "method": it.method, "host": it.host, "class": cls, "why": why,
           "verdict": "ok", "flags": [], "changes": [], "personal": {}, "notes": it.notes}
    if it.error:
        res["verdict"], res["reason"] = "replay_error", it.error
        return res
    sent = it.raw
    values = personal_values(sent, it.planted)
    res["personal"] = dict(Counter(values.values()))
    leakable = {v: k for v, k in values.items() if k != "ip"}
    if not it.blocked and not it.arrived:
        res["verdict"], res["reason"] = "replay_error", f"nothing reached the upstream (status {it.status})"
        return res
    flags = res["flags"]
    if it.blocked:
        flags.append("blocked")
        if cls in ("user", "ai_chat"):
            flags.append("breakage")
            if cls == "ai_chat":
                flags.append("ai_broken")
        if cls == "tracker":
            flags.append("tracker_blocked")
        elif not values:
            flags.append("needless")
        else:
            flags.append("blocked_personal")
    else:
        a = it.arrived[0]
        sp = urlsplit(it.url)
        arr_url = f"{sp.scheme}://{sp.netloc}{a['path']}" if a["path"].startswith("/") else a["path"]
        f0 = fields(it.method, it.url, it.headers, it.body)
        f1 = fields(a["method"], arr_url, a["headers"], a["body"])
        changed = changed_fields(f0, f1)
        unj = False
        # an AI chat turn: the persons the prompt names (and their ages) may carry a reversible pseudonym too
        named = prompt_persons(sent) if cls == "ai_chat" else {}
        for k in changed:
            if named or values:
                if cls == "ai_chat" and guidance_added(k, f0.get(k), f1.get(k)):
                    res["changes"].append({"field": k, "from": shape(f0.get(k)), "to": shape(f1.get(k)),
                                           "personal": True, "why": "agent guidance"})
                    flags.append("guidance_added")
                    continue
            bad, s0, s1 = unjustified(f0.get(k), f1.get(k), values)
            if bad and named and not unjustified(f0.get(k), f1.get(k), {**values, **named})[0]:
                bad = False
                flags.append("named_person_pseudonym")
            res["changes"].append({"field": k, "from": s0, "to": s1, "personal": not bad})
            unj = unj or bad
        if changed:
            flags.append("altered")
            if unj:
                flags.append("needless")
            else:
                flags.append("rewritten_personal")
            if cls == "user":
                flags.append("breakage")
            if cls == "ai_chat" and unj:
                flags += ["ai_broken", "breakage"]
        if cls in ("tracker", "other") and leakable:
            seen = visible(RawRequest(method=a["method"], url=arr_url,
                                      headers=[(k, v) for k, v in a["headers"] if k.lower() != "content-encoding"],
                                      body=decoded_body(a["headers"], a["body"])))
            leaked = sorted({k for v, k in leakable.items() if v.lower() in seen})
            if leaked:  # to any other third party: counted apart, not a leak by the criteria above
                flags.append("leak" if cls == "tracker" else "personal_to_third_party")
                res["leaked_kinds"] = leaked
        if len(it.arrived) > 1:
            flags.append("arrived_twice")
        # the reply: what the client got must be what the upstream sent (after de-masking)
        if it.method != "HEAD" and it.resp_status not in (204, 304):
            got = decoded_body(it.got_headers, it.got_body)
            want = decoded_body(it.resp_headers, it.resp_body)
            if got != want:
                layout_only, where = reply_diff(want, got)
                flags.append("reply_layout" if layout_only else "reply_changed")
                res["reply"] = f"reply {len(want)} B recorded → {len(got)} B received" + (f"; {where}" if where else "")
                if cls == "ai_chat" and not layout_only:
                    flags += ["ai_broken", "breakage"]
    v = "ok"
    for name in ("leak", "ai_broken", "breakage", "needless", "rewritten_personal", "blocked_personal",
                 "tracker_blocked", "reply_changed"):
        if name in flags:
            v = name
            break
    res["verdict"] = v
    res["flags"] = sorted(set(flags))
    return res


def reply_diff(want: bytes, got: bytes) -> tuple[bool, str]:
    """(same JSON or the same stream events, only laid out differently; the first changed field as shapes)."""
    def parse(b: bytes):
        t = b.decode("utf-8", "replace")
        try:
            return [json.loads(t)]
        except ValueError:
            pass
        evs = []
        for line in t.splitlines():
            line = line.strip()
            if line.startswith("data:"):
                line = line[5:].strip()
            if not line or line.startswith(("event:", "id:", ":")) or line == "[DONE]":
                continue
            try:
                evs.append(json.loads(line))
            except ValueError:
                evs.append(line)
        return evs
    a, b = parse(want), parse(got)
    if a == b and a:
        return True, "same JSON, other layout"
    if len(a) > 1 and len(b) > 1 and _assembled(a) == _assembled(b):
        return True, "same streamed text, cut into other events"
    fa = dict(x for i, ev in enumerate(a) for x in _leaves(ev, f"$[{i}]"))
    fb = dict(x for i, ev in enumerate(b) for x in _leaves(ev, f"$[{i}]"))
    for k in dict.fromkeys(list(fa) + list(fb)):
        if fa.get(k) != fb.get(k):
            o, n = fa.get(k), fb.get(k)
            return False, f"{k}: {shape(o if isinstance(o, str) else json.dumps(o))} → " \
                          f"{shape(n if isinstance(n, str) else json.dumps(n))}"
    return False, ""


#: the keys of a stream event whose strings a client joins into the reply (OpenAI, Anthropic, Ollama, Gemini, Cohere)
_STREAM_TEXT = frozenset({"content", "text", "partial_json", "arguments", "completion", "response", "thinking",
                          "delta"})


def _assembled(events: list) -> tuple[dict, dict]:
    """A stream as its client reads it: per field (the path with the event's index left out) the joined text of the
    text keys, and the set of every other value. A de-masker may hold back the start of what could be a stand-in
    and send it with the next event: the reply is the same."""
    text: dict[str, str] = defaultdict(str)
    other: dict[str, set] = defaultdict(set)
    for ev in events:
        for k, v in _leaves(ev, "$"):
            if isinstance(v, str) and re.sub(r"\[\d+\]$", "", k).rsplit(".", 1)[-1] in _STREAM_TEXT:
                text[k] += v
            else:
                other[k].add(json.dumps(v))
    return dict(text), dict(other)


def attach_decisions(items: list[Item], results: list[dict], log_path: Path) -> None:
    lines = []
    if log_path.exists():
        for ln in log_path.read_text(errors="replace").splitlines():
            try:
                lines.append(json.loads(ln))
            except ValueError:
                continue
    by_id = {d.get("id"): d for d in lines}
    by_key: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for d in lines:
        by_key[(str(d.get("method", "")).upper(), str(d.get("host", "")).lower())].append(d)
    used: set[int] = set()
    for it, r in zip(items, results, strict=True):
        d = by_id.get(it.decision_id) if it.decision_id else None
        if d is None and it.t0:
            cands = [x for x in by_key.get((it.method, it.host), [])
                     if id(x) not in used and it.t0 - 0.5 <= (x.get("ts") or 0) <= it.t1 + 0.5]
            d = min(cands, key=lambda x: abs((x.get("ts") or 0) - it.t0)) if cands else None
        if d is not None:
            used.add(id(d))
            r["decision"] = {k: d.get(k) for k in ("action", "rule", "recipient", "basis", "purposes", "spans",
                                                    "explanation", "path", "categories", "R", "tier", "flags")}
            if not r["decision"]["rule"]:
                r["decision"]["rule"] = f"risk:{d.get('tier')}" if d.get("R") is not None else None


# ---------------------------------------------------------------------------------------------- report


def summarize(results: list[dict]) -> dict:
    n = len(results)
    f = Counter()
    for r in results:
        for x in r["flags"]:
            f[x] += 1
        f["verdict:" + r["verdict"]] += 1
    errors = sum(1 for r in results if r["verdict"] == "replay_error")
    judged = n - errors
    user_broken = sum(1 for r in results if r["class"] in ("user", "ai_chat") and "breakage" in r["flags"])
    return {
        "requests": n, "judged": judged, "replay_errors": errors,
        "by_class": dict(Counter(r["class"] for r in results)),
        "user_flows_broken": user_broken, "breakage_rate": user_broken / max(1, judged),
        "needless": f["needless"], "needless_rate": f["needless"] / max(1, judged),
        "leaks": f["leak"], "ai_exchanges": sum(1 for r in results if r["class"] == "ai_chat"),
        "ai_broken": f["ai_broken"], "rewritten_personal": f["rewritten_personal"],
        "blocked": f["blocked"], "trackers_blocked": f["tracker_blocked"], "blocked_personal": f["blocked_personal"],
        "personal_to_other_third_parties": f["personal_to_third_party"],
        "replies_changed": f["reply_changed"], "replies_relaid": f["reply_layout"],
        "ai_named_person_pseudonyms": f["named_person_pseudonym"], "ai_guidance_added": f["guidance_added"],
        "unexpected_upstream_requests": len(UNEXPECTED),
        "targets": {"breakage_rate": 0.003, "needless_rate": 0.01, "ai_broken": 0, "leaks": 0},
    }


def failure_line(r: dict) -> str:
    d = r.get("decision") or {}
    ch = "; ".join(f"{c['field'][:60]}: {c['from']} → {c['to']}" for c in r["changes"] if not c["personal"])[:300] \
        or "; ".join(f"{c['field'][:60]}" for c in r["changes"])[:200]
    what = "blocked" if "blocked" in r["flags"] else "; ".join(x for x in (ch, r.get("reply", "")) if x) or r.get("reason", "")
    extra = f" leaked={','.join(r['leaked_kinds'])}" if r.get("leaked_kinds") else ""
    return (f"  {r['verdict']:<12} {r['file'][:44]}#{r['idx']} {r['method']} {r['host']} [{r['class']}: {r['why']}]"
            f"{extra}\n      {what}\n      rule={d.get('rule')} action={d.get('action')} recipient={d.get('recipient')}"
            f" basis={d.get('basis')} — {str(d.get('explanation') or '')[:220]}")


def group_key(r: dict) -> str:
    """verdict | class | the first failing field by name (indices and values dropped) | rule."""
    d = r.get("decision") or {}
    fld = next((c["field"] for c in r["changes"] if not c["personal"]),
               "blocked" if "blocked" in r["flags"] else "reply" if r.get("reply") else "")
    fld = re.sub(r"#\d+$", "", fld)
    if fld.startswith("body:$"):
        fld = "body:…" + re.sub(r"\[\d+\]", "", fld).rsplit(".", 1)[-1]
    return f"{r['verdict']} | {r['class']} | {fld[:50]} | rule={d.get('rule')}"


def report(results: list[dict], s: dict, verbose: bool = True, out=sys.stdout) -> None:
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p(f"replay benchmark: {s['requests']} requests ({s['judged']} judged, {s['replay_errors']} replay errors); "
      f"classes {s['by_class']}")
    p(f"(rates are of the {s['judged']} judged requests; a request can be both breakage and needless)")
    p(f"user flows altered or blocked {s['user_flows_broken']:5d} = {s['breakage_rate']:7.2%}   (target ≤ 0.3 %)")
    p(f"needless changes / blocks     {s['needless']:5d} = {s['needless_rate']:7.2%}   (target ≤ 1 %)")
    p(f"AI exchanges broken           {s['ai_broken']:5d} of {s['ai_exchanges']}   (target 0)")
    p(f"leaks to trackers             {s['leaks']:5d}   (target 0; and {s['personal_to_other_third_parties']} "
      "other third parties got a personal stand-in raw)")
    p(f"rewritten with personal data  {s['rewritten_personal']:5d}; blocked {s['blocked']} (trackers "
      f"{s['trackers_blocked']}, with personal data {s['blocked_personal']}); replies changed {s['replies_changed']} "
      f"(and {s['replies_relaid']} the same JSON laid out anew)")
    p(f"AI chat turns with a person the prompt names pseudonymised {s['ai_named_person_pseudonyms']}; "
      f"agent guidance added {s['ai_guidance_added']}")
    p("\nper capture file: requests / errors / user-broken / needless / leaks / AI broken / rewritten-personal / "
      "blocked")
    per: dict[str, Counter] = defaultdict(Counter)
    for r in results:
        c = per[r["file"]]
        c["n"] += 1
        c["err"] += r["verdict"] == "replay_error"
        c["brk"] += r["class"] in ("user", "ai_chat") and "breakage" in r["flags"]
        for k in ("needless", "leak", "ai_broken", "rewritten_personal", "blocked"):
            c[k] += k in r["flags"]
    rows: dict[str, Counter] = defaultdict(Counter)
    for name, c in per.items():  # cassettes: one row per source repository (the failures name each file)
        rows[name.split("/")[0] + "/ (cassettes)" if "/" in name else name].update(c)
    for name, c in sorted(rows.items()):
        p(f"  {name[:58]:<58} {c['n']:4d} {c['err']:3d} {c['brk']:3d} {c['needless']:3d} {c['leak']:3d} "
          f"{c['ai_broken']:3d} {c['rewritten_personal']:3d} {c['blocked']:3d}")
    fails = [r for r in results if r["verdict"] in ("leak", "ai_broken", "breakage", "needless", "replay_error")]
    groups = Counter(group_key(r) for r in fails if r["verdict"] != "replay_error")
    example: dict[str, dict] = {}
    for r in fails:
        example.setdefault(group_key(r), r)
    if groups:
        p("\nfailure groups (verdict | class | first failing field | rule): count, one example")
        for g, c in groups.most_common(30):
            e = example[g]
            p(f"  {c:4d}  {g}\n        e.g. {e['file'][:60]}#{e['idx']} {e['method']} {e['host']}")
    errs = Counter(r.get("reason", "")[:80] for r in results if r["verdict"] == "replay_error")
    if errs:
        p("\nreplay errors by reason")
        for e, c in errs.most_common(15):
            p(f"  {c:4d}  {e}")
    if verbose and fails:
        p(f"\nfailures ({len(fails)})")
        for r in fails:
            if r["verdict"] != "replay_error":
                p(failure_line(r))


def run(files: list[Path], limit: int | None, concurrency: int, timeout: float, workers: int | None,
        log=print) -> tuple[list[Item], list[dict]]:
    from tests.support.proxy_process import start_proxy

    items: list[Item] = []
    for f in files:
        try:
            got = load_cassette(f) if "/cassettes/" in _rel(f) or _rel(f).startswith("cassettes/") else load_har(f)
        except Exception as ex:
            it = Item(file=f.name if "/har/" in str(f) else f"{f.parent.name}/{f.name}", idx=-1,
                      error=f"unreadable capture: {type(ex).__name__}: {str(ex)[:80]}")
            got = [it]
        items += got
    if limit:
        items = items[:limit]
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
        tmp = Path(tmp)
        up = Upstream(tmp)
        extra = ["--dashboard-port", "0", "-q"] + (["--workers", str(workers)] if workers is not None else [])
        t = time.time()
        px = start_proxy(tmp, up.port, extra=extra, timeout=300)
        log(f"proxy up in {time.time() - t:.0f} s; replaying {len(items)} requests from {len(files)} captures")
        t = time.time()
        try:
            Runner(up, px.port, concurrency, timeout).run(
                items, progress=lambda n: log(f"  {n}/{len(items)} ({time.time() - t:.0f} s)"))
        finally:
            time.sleep(0.5)
            px.stop()
            up.close()
        log(f"replayed in {time.time() - t:.0f} s; {len(up.unexpected)} unexpected upstream requests")
        UNEXPECTED[:] = up.unexpected  # requests that reached the upstream matching nothing sent (should be none)
        results = []
        for it in items:
            try:
                results.append(judge(it))
            except Exception as ex:
                results.append({"file": it.file, "idx": it.idx, "method": it.method, "host": it.host, "class": "-",
                                "why": "-", "verdict": "replay_error", "flags": [], "changes": [], "personal": {},
                                "reason": f"judge failed: {type(ex).__name__}: {ex}"[:120], "notes": it.notes})
                traceback.print_exc()
        attach_decisions(items, results, px.log_path)
    return items, results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--har-only", action="store_true")
    g.add_argument("--cassettes-only", action="store_true")
    ap.add_argument("--only", help="regex on capture paths (har/…, cassettes/… of realtraffic/; recorded/…)")
    ap.add_argument("--no-recorded", action="store_true",
                    help="leave out the project's own recordings (tests/fixtures/recorded, scripts/record_captures.py)")
    ap.add_argument("--limit", type=int, help="replay only the first N requests")
    ap.add_argument("--json", type=Path, help="write the summary and every request's result here")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds per request")
    ap.add_argument("--workers", type=int, default=None, help="proxy evaluation workers (default: 1, as the tests)")
    ap.add_argument("--quiet", action="store_true", help="no per-failure lines, cassettes as one row")
    args = ap.parse_args(argv)
    if not DATA.is_dir():
        print(f"no corpus at {DATA}", file=sys.stderr)
        return 2
    files = captures(not args.cassettes_only, not args.har_only, args.only, not args.no_recorded)
    if not files:
        print("no capture matches", file=sys.stderr)
        return 2
    t = time.time()
    _, results = run(files, args.limit, args.concurrency, args.timeout, args.workers,
                     log=lambda m: print(m, file=sys.stderr, flush=True))
    s = summarize(results)
    s["seconds"] = round(time.time() - t, 1)
    report(results, s, verbose=not args.quiet)
    if args.json:
        args.json.write_text(json.dumps({"summary": s, "results": results}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

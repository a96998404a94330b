"""Benchmark requests and their integrity check, shared by the load driver and the upstream.

Every request is a pure function of (workload, index): the driver sends `case(w, i)` with the header
`x-guardian-bench-case: w:i`, and the upstream (another process) rebuilds the same case and `verify()`s what
arrived: byte-identical (allowed), a valid rewrite of the same shape without any planted value
(transformed), or a mismatch with its reason. Planted values are fake and unique per request. The tag headers
are `x-guardian-*`, which the gateway never reads as data (bodies/headers.py): an `X-…` header it read could hold
free text and would take every bodyless GET off the event-loop fast path, so the benchmark would not measure what
browsing traffic gets (it did, from e48888a until the worker change).

Workloads:
  bodyless  static-asset GETs (no body, no query, no cookie)
  personal  JSON POSTs carrying personal data; by destination 1/3 deny (card → ad network),
            1/3 transform (name + e-mail → service provider), 1/3 allow (e-mail → first party)
  mixed     browsing profile 70/20/10: 40% asset GETs + 30% page GETs with query and cookie;
            10% JSON API POSTs without personal data + 10% personal POSTs; 10% multipart uploads
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote_plus, urlsplit

FIRST = ["John", "Maria", "David", "Sarah", "Michael", "Emma", "James", "Laura", "Robert", "Anna", "Thomas"]
LAST = ["Smith", "Garcia", "Miller", "Johnson", "Brown", "Davis", "Wilson", "Taylor", "Anderson", "Moore"]
WORKLOADS = ("bodyless", "personal", "mixed")


@dataclass
class Case:
    key: str
    method: str
    url: str
    headers: list[tuple[str, str]]
    body: bytes = b""
    fmt: str = "none"  # none|json|form|multipart|binary
    planted: tuple[str, ...] = ()
    expect: str = "allow"  # design intent with the default tables (informational, not an integrity rule)
    resp_size: int = 512
    extra: dict = field(default_factory=dict)

    @property
    def target(self) -> str:
        s = urlsplit(self.url)
        return (s.path or "/") + (f"?{s.query}" if s.query else "")


def luhn_card(i: int) -> str:
    mixed = int(hashlib.sha256(f"card{i}".encode()).hexdigest(), 16) % 10**14
    digits = [4] + [int(c) for c in f"{mixed:014d}"]
    total = 0
    for k, d in enumerate(reversed(digits)):  # check digit goes at the end: positions shift by one
        d = d * 2 if k % 2 == 0 else d
        total += d - 9 if d > 9 else d
    digits.append((10 - total % 10) % 10)
    s = "".join(map(str, digits))
    return " ".join(s[k:k + 4] for k in range(0, 16, 4))


def person(i: int) -> tuple[str, str]:
    f, last = FIRST[i % len(FIRST)], LAST[(i // len(FIRST)) % len(LAST)]
    return f"{f} {last}", f"{f.lower()}.{last.lower()}.{i}@example.com"


BASE = [("user-agent", "Mozilla/5.0 (X11; Linux x86_64) bench"), ("accept-language", "en-US,en;q=0.9")]


def _json(key, url, obj, planted=(), expect="allow", extra_headers=()) -> Case:
    return Case(key, "POST", url, BASE + [("content-type", "application/json"), ("accept", "application/json"),
                                          *extra_headers],
                json.dumps(obj, separators=(",", ":")).encode(), "json", tuple(planted), expect, 256)


def asset(key: str, i: int) -> Case:
    host = ("www.example.org", "cdn.example.net", "static.example.com")[i % 3]
    ext = ("js", "css", "png", "woff2")[i % 4]
    return Case(key, "GET", f"http://{host}/assets/{i % 997}/file.{ext}", BASE + [("accept", "*/*")],
                resp_size=1024 + (i * 7919) % 15000)


def personal(key: str, i: int) -> Case:
    name, email = person(i)
    kind = i % 3
    if kind == 0:
        card = luhn_card(i)
        return _json(key, "http://ads.doubleclick.net/collect", {"pan": card, "ev": "purchase", "uid": f"u{i}"},
                     (card, card.replace(" ", "")), "deny")
    if kind == 1:
        body = {"ticket": {"subject": "Order question", "text": f"Please call {name} back at {email}.",
                           "requester": {"name": name, "email": email}}}
        return _json(key, "http://support.zendesk.com/api/tickets", body, (name, email), "transform")
    return _json(key, "http://shop.example.com/contact", {"email": email, "message": "Where is my parcel?"},
                 (email,), "allow", [("origin", "http://shop.example.com"), ("sec-fetch-user", "?1")])


def multipart(key: str, i: int) -> Case:
    rnd = random.Random(i)
    boundary = f"----benchboundary{i:08x}"
    data = rnd.randbytes(32 * 1024 + (i * 104_729) % (64 * 1024))
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nholiday photo {i % 50}\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"img{i}.jpg\"\r\n"
            f"Content-Type: image/jpeg\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    return Case(key, "POST", "http://upload.example-storage.com/upload",
                BASE + [("content-type", f"multipart/form-data; boundary={boundary}"), ("accept", "*/*")],
                body, "multipart", (), "allow", 128, {"boundary": boundary})


def slow(key: str, i: int) -> Case:
    """A ~90 KB free-text ticket full of names: seconds of NER, used to measure head-of-line blocking."""
    parts = []
    k = 0
    while sum(map(len, parts)) < 90_000:
        name, email = person(i * 1000 + k)
        parts.append(f"Meeting notes {k}: {name} asked about the invoice and wants a call back at {email}. ")
        k += 1
    return _json(key, "http://support.zendesk.com/api/tickets", {"text": "".join(parts)}, (), "transform")


def case(workload: str, i: int) -> Case:
    key = f"{workload}:{i}"
    if workload == "slow":
        return slow(key, i)
    if workload == "bodyless":
        return asset(key, i)
    if workload == "personal":
        return personal(key, i)
    if workload != "mixed":
        raise ValueError(workload)
    r = i % 10
    if r < 4:
        return asset(key, i)
    if r < 7:
        c = Case(key, "GET", f"http://www.example.org/search?q=garden+chairs+{i % 97}&page={i % 5}",
                 BASE + [("accept", "text/html"), ("cookie", f"sid=s{i:x}; theme=dark")], resp_size=8000)
        return c
    if r == 7:
        return _json(key, "http://api.example.org/v1/cart", {"sku": f"A-{i % 500}", "qty": 1 + i % 4, "gift": False})
    if r == 8:
        return personal(key, i // 10)
    return multipart(key, i)


# --------------------------------------------------------------------------- verification


def _shape(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_shape(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_shape, a, b))
    if isinstance(a, str):
        return isinstance(b, str)
    return not isinstance(b, dict | list)


def _leaks(c: Case, text: str) -> list[str]:
    return [p for p in c.planted if p in text]


def _multipart_parts(body: bytes, boundary: str) -> list[bytes] | None:
    delim = b"--" + boundary.encode()
    if not body.startswith(delim) or not body.rstrip(b"\r\n").endswith(delim + b"--"):
        return None
    return body.split(delim)[1:-1]


def verify(c: Case, method: str, target: str, headers: dict[str, str], body: bytes) -> tuple[str, str]:
    """('identical'|'transformed'|'bad', reason) for what the upstream received for case `c`."""
    if method != c.method:
        return "bad", f"method {method} != {c.method}"
    changed = False
    if target != c.target:
        orig, new = urlsplit(c.target), urlsplit(target)
        if orig.path != new.path or [k for k, _ in parse_qsl(orig.query)] != [k for k, _ in parse_qsl(new.query)]:
            return "bad", "URL path or query keys changed"
        if _leaks(c, unquote_plus(new.query)):
            return "bad", "planted value left in the query"
        changed = True
    if "content-length" in headers and int(headers["content-length"]) != len(body):
        return "bad", "content-length does not match the body"
    if body == c.body:
        return ("transformed" if changed else "identical"), ""
    if c.fmt in ("none", "binary"):
        return "bad", f"{c.fmt} body changed"
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if c.fmt == "json":
        try:
            new = json.loads(text)
        except (TypeError, ValueError):
            return "bad", "rewritten JSON is not valid"
        if not _shape(json.loads(c.body), new):
            return "bad", "rewritten JSON changed shape"
    elif c.fmt == "form":
        if text is None or [k for k, _ in parse_qsl(text)] != [k for k, _ in parse_qsl(c.body.decode())]:
            return "bad", "rewritten form lost its keys"
    elif c.fmt == "multipart":
        b = c.extra["boundary"]
        if f"boundary={b}" not in headers.get("content-type", ""):
            return "bad", "multipart boundary changed in content-type"
        old_parts, new_parts = _multipart_parts(c.body, b), _multipart_parts(body, b)
        if new_parts is None or len(new_parts) != len(old_parts):
            return "bad", "multipart framing broken"
        hdr = re.compile(rb"^\r\n(.*?)\r\n\r\n", re.S)
        if [hdr.match(p).group(1) if hdr.match(p) else None for p in new_parts] != \
                [hdr.match(p).group(1) for p in old_parts]:
            return "bad", "multipart part headers changed"
        text = body.decode("utf-8", "replace")
    leaks = _leaks(c, text or "")
    if leaks:
        return "bad", f"planted value left in rewritten body ({len(leaks)})"
    return "transformed", ""

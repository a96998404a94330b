"""Format integrity of rewrites on real captures (docs/design/anonymization.md: the format kept, stand-ins no
one holds).

Every HAR request of ../shared/data/realtraffic/har is evaluated in process by a Gateway (detector without NER,
so it runs in minutes on a shared 2-core machine); each request the gateway rewrites is compared with what it
sent, value by value (JSON leaves, query and form parameters), and counted:

- `number_to_text`: a JSON number written back as a string;
- `uuid_broken`: a value that was a UUID written back as something that is not a UUID;
- `ownable_email`: an e-mail in the rewrite that was not in the original and is not on a reserved domain
  (example.com/.net/.org): a stand-in a real person could own;
- `decompressed`: a body sent compressed without a Content-Encoding header that would leave decompressed
  (the rewrite as the addon puts it on the wire: `codec.as_sent` where the code has it).

Then both surrogate makers (anonymize L4 and the session vault) get 200 synthetic values per type and each
stand-in is judged: `held_by_no_one` counts e-mails on reserved domains, phones in the 555-01xx / Ofcom drama
ranges, Luhn cards on test BINs, SSNs in area 9xx with group 01–49 (or 000/666), IPs in the documentation
ranges, and UUIDs that are valid UUIDs of the original's version (a UUID counts as "no one's" when valid).

    .venv/bin/python scripts/bench_formats.py [--har-dir DIR] [--limit N]

Prints one JSON object. Run it on two trees (PYTHONPATH=<tree>) to compare before and after.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

HAR_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "realtraffic" / "har"
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
RESERVED = ("example.com", "example.net", "example.org")


def requests(har_dir: Path):
    for path in sorted(har_dir.iterdir()):
        op = gzip.open if path.name.endswith(".gz") else open
        try:
            har = json.load(op(path, "rt", encoding="utf-8-sig"))
        except (OSError, ValueError):
            continue
        for e in har.get("log", {}).get("entries", []):
            r = e.get("request", {})
            url = r.get("url", "")
            if not url.startswith(("http://", "https://")):
                continue
            headers = [(h["name"], h["value"]) for h in r.get("headers", []) if not h["name"].startswith(":")]
            text = (r.get("postData") or {}).get("text") or ""
            body = text.encode("latin-1", "replace") if text.startswith("\x1f\x8b") else text.encode()
            yield path.name, r.get("method", "GET"), url, headers, body


def leaves(v, path=()):
    if isinstance(v, dict):
        for k, x in v.items():
            yield from leaves(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from leaves(x, path + (i,))
    else:
        yield path, v


def compare(before: dict, after: dict, out: dict, orig_text: str, new_text: str) -> None:
    for k, old in before.items():
        new = after.get(k, old)
        if isinstance(old, int | float) and not isinstance(old, bool) and isinstance(new, str):
            out["number_to_text"] += 1
        if isinstance(old, str) and UUID.fullmatch(old.strip()) and new != old and \
                not (isinstance(new, str) and UUID.fullmatch(new.strip())):
            out["uuid_broken"] += 1
    for m in EMAIL.findall(new_text):
        dom = m.rsplit("@", 1)[1].lower()
        if m not in orig_text and not any(dom == d or dom.endswith("." + d) for d in RESERVED):
            out["ownable_email"] += 1


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--har-dir", type=Path, default=HAR_DIR)
    ap.add_argument("--limit", type=int, default=0)
    a = ap.parse_args()
    if not a.har_dir.is_dir():
        print(f"no captures in {a.har_dir}", file=sys.stderr)
        return 2
    from guardian_proxy import codec
    from guardian_proxy.config import load_settings
    from guardian_proxy.pipeline import Gateway
    from guardian_proxy.types import RawRequest

    tmp = Path(tempfile.mkdtemp())
    cfg = tmp / "config.yaml"
    cfg.write_text(f"state_dir: {tmp}\ndetector: {{ner: false}}\n")
    gw = Gateway.from_settings(load_settings(cfg), with_log=False)
    out = {"requests": 0, "rewritten": 0, "number_to_text": 0, "uuid_broken": 0, "ownable_email": 0,
           "sniffed_compressed_rewritten": 0, "decompressed": 0}
    t0 = time.time()
    for n, (_, method, url, headers, body) in enumerate(requests(a.har_dir)):
        if a.limit and n >= a.limit:
            break
        out["requests"] += 1
        req = RawRequest(method=method, url=url, headers=headers, body=body)
        try:
            dec = gw.evaluate(req)
        except Exception:  # noqa: BLE001 - a failure is not a format measurement
            continue
        rw = dec.rewrite
        if dec.action != "transform" or rw is None:
            continue
        out["rewritten"] += 1
        ce = req.header("content-encoding")
        if rw.body is not None and body:
            wire = codec.as_sent(body, ce, rw.body, 1 << 24) if hasattr(codec, "as_sent") else rw.body
            sniffed = None if ce else codec.sniff(body)
            try:
                old_plain = codec.decode(body, ce or sniffed, 1 << 24)
            except Exception:  # noqa: BLE001
                old_plain, sniffed = body, None
            if sniffed:
                out["sniffed_compressed_rewritten"] += 1
                if codec.sniff(wire) != sniffed:
                    out["decompressed"] += 1
            try:
                new_plain = codec.decode(wire, ce or codec.sniff(wire), 1 << 24)
            except Exception:  # noqa: BLE001
                new_plain = wire
            ot, nt = old_plain.decode("utf-8", "replace"), new_plain.decode("utf-8", "replace")
            try:
                compare(dict(leaves(json.loads(ot))), dict(leaves(json.loads(nt))), out, ot, nt)
            except ValueError:
                compare(dict(parse_qsl(ot)), dict(parse_qsl(nt)), out, ot, nt)
        if rw.url:
            compare(dict(parse_qsl(urlsplit(url).query)), dict(parse_qsl(urlsplit(rw.url).query)), out, url, rw.url)
    out["seconds"] = round(time.time() - t0, 1)
    out["makers"] = makers()
    print(json.dumps(out))
    return 0


def _luhn(d: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(d)):
        x = int(c) * (2 if i % 2 else 1)
        total += x - 9 if x > 9 else x
    return total % 10 == 0


_TEST_BINS = ("411111", "424242", "378282", "371449", "555555", "222300", "510510", "601111", "601100", "305693",
              "362272", "356600", "353011", "620000")


def _no_ones(kind: str, value: str, orig: str) -> bool:
    import ipaddress
    import uuid

    d = "".join(c for c in value if c.isdigit())
    if kind == "email":
        dom = value.rsplit("@", 1)[-1].lower()
        return any(dom == x or dom.endswith("." + x) for x in RESERVED)
    if kind == "phone":
        return re.fullmatch(r"1?[2-9]\d{2}55501\d{2}|(?:44|0)(?:7700900|2079460|1632960)\d{3}", d) is not None
    if kind == "card":
        return _luhn(d) and d.startswith(_TEST_BINS) and len(d) == sum(c.isdigit() for c in orig)
    if kind == "ssn":
        return len(d) == 9 and (d[0] == "9" and 1 <= int(d[3:5]) <= 49 or d[:3] in ("000", "666"))
    if kind == "ip":
        try:
            a = ipaddress.ip_address(value)
        except ValueError:
            return False
        nets = ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
        return any(a.version == n.version and a in n for n in map(ipaddress.ip_network, nets))
    if kind == "uuid":
        try:
            return uuid.UUID(value).version == uuid.UUID(orig).version and len(value) == 36
        except ValueError:
            return False
    return False


def makers() -> dict:
    import random
    import uuid

    from guardian_proxy.anonymize.surrogates import Surrogates
    from guardian_proxy.session.surrogates import SurrogateMaker

    rnd = random.Random(7)
    entity = {"email": "EMAIL_ADDRESS", "phone": "PHONE_NUMBER", "card": "CREDIT_CARD", "ssn": "US_SSN",
              "ip": "IP_ADDRESS", "uuid": "DEVICE_ID"}

    def sample(kind: str) -> str:
        if kind == "email":
            return f"{''.join(rnd.choices('abcdefghij', k=7))}{rnd.randint(1, 99)}@{rnd.choice(['gmail.com', 'yahoo.com', 'web.de'])}"
        if kind == "phone":
            return rnd.choice([f"+1 {rnd.randint(201, 989)}-{rnd.randint(200, 999)}-{rnd.randint(1000, 9999)}",
                               f"07{rnd.randint(100, 999)} {rnd.randint(100000, 999999)}"])
        if kind == "card":
            body = "4" + "".join(rnd.choices("0123456789", k=14))
            for c in "0123456789":
                if _luhn(body + c):
                    return " ".join((body + c)[i:i + 4] for i in range(0, 16, 4))
        if kind == "ssn":
            return f"{rnd.randint(1, 665):03d}-{rnd.randint(1, 99):02d}-{rnd.randint(1, 9999):04d}"
        if kind == "ip":
            return f"{rnd.randint(11, 99)}.{rnd.randint(0, 255)}.{rnd.randint(0, 255)}.{rnd.randint(1, 254)}"
        return str(uuid.UUID(int=rnd.getrandbits(128), version=4))

    res = {}
    for kind, ent in entity.items():
        ok_a = ok_s = 0
        for i in range(200):
            v = sample(kind)
            a = Surrogates("", seed=b"bench").render(ent, v) or ""
            s = SurrogateMaker().make(ent, v, i, {}, lambda c: False, lambda: 1)
            ok_a += _no_ones(kind, a, v)
            ok_s += _no_ones(kind, s, v)
        res[kind] = {"anonymize_held_by_no_one": ok_a / 200, "session_held_by_no_one": ok_s / 200}
    return res


if __name__ == "__main__":
    raise SystemExit(main())

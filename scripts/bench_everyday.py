"""Everyday-traffic benchmark: breakage and leaks on realistic requests (tests/fixtures/everyday).

Every case is evaluated by the real Gateway with the default settings (no LLM) and a fresh state dir, the
decision applied as the addon applies it, and the outgoing request compared with what the user meant:

  breakage  an `intended` request (the user's own sign-in, payment, message, search, upload …) was blocked or
            any byte of it changed (`expect: not_blocked`: AI chats, where a reversible pseudonymisation is
            the product, count only a block)
  leak      an `unintended` request (personal data to a party the user did not address) was not blocked and
            one of its identifiers still leaves raw: in the URL, a header or the body, plain, URL-encoded,
            base64 or compressed
  needless  a `no_personal` request (nothing personal in it) that was changed, or blocked on its way to anyone but
            a tracker (a tracker call without personal data that is blocked is counted apart, `tracker_blocked`:
            the user loses nothing, the page gets a silent 204)

    .venv/bin/python scripts/bench_everyday.py            # summary, confusion by flow, every failure
    .venv/bin/python scripts/bench_everyday.py --learn    # first learn every first-party policy page the
                                                          # corpus names (a site whose policy is known)
    .venv/bin/python scripts/bench_everyday.py --json out.json

Targets with the default settings and no LLM: breakage ≤ 1 %, leak ≤ 2 %.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import importlib.util
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import unquote, unquote_plus

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from guardian_proxy import codec  # noqa: E402
from guardian_proxy.types import TRACKER_CLASSES, Decision, RawRequest  # noqa: E402

_B64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")


def _loader():
    spec = importlib.util.spec_from_file_location("everyday", ROOT / "tests" / "fixtures" / "everyday" / "loader.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def outgoing(req: RawRequest, d: Decision) -> RawRequest | None:
    """The request as it leaves the proxy (None: blocked), applied as mitm/blocking.py `apply_decision` applies it."""
    if d.action == "deny":
        return None
    if d.action != "transform" or d.rewrite is None:
        return req
    rw = d.rewrite
    headers = [(k, v) for k, v in req.headers if k.lower() not in {h.lower() for h in rw.remove_headers}
               and k.lower() not in {h.lower() for h in rw.set_headers}]
    headers += list(rw.set_headers.items())
    return RawRequest(method=req.method, url=rw.url or req.url, headers=headers,
                      body=rw.body if rw.body is not None else req.body)


def visible(req: RawRequest) -> str:
    """Every text a recipient can read in the request, decoded the ways trackers encode it."""
    body = req.body
    enc = req.header("content-encoding") or codec.sniff(body)
    if enc:
        try:
            body = codec.decode(body, enc, 64 << 20)
        except Exception:  # a body that does not decode is read as sent
            pass
    parts = [req.url, unquote(req.url), unquote_plus(req.url)]
    parts += [f"{k}: {v}" for k, v in req.headers]
    text = body.decode("utf-8", "replace")
    parts += [text, unquote_plus(text)]
    for blob in list(parts):
        for m in _B64.findall(blob):
            s = m.replace("-", "+").replace("_", "/")
            try:
                dec = base64.b64decode(s + "=" * (-len(s) % 4), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError, ValueError):
                continue
            parts += [dec, unquote_plus(dec)]
    return "\n".join(parts).lower()


def judge(case: dict, d: Decision) -> str:
    """ok | breakage | leak | needless | tracker_blocked"""
    req: RawRequest = case["raw"]
    out = outgoing(req, d)
    if case["label"] == "intended":
        if out is None:
            return "breakage"
        if case.get("expect") == "not_blocked":
            return "ok"
        changed = out.url != req.url or out.body != req.body or sorted(out.headers) != sorted(req.headers)
        return "breakage" if changed else "ok"
    if case["label"] == "unintended":
        if out is None:
            return "ok"
        seen = visible(out)
        return "leak" if any(v.lower() in seen for v in case["values"] if v) else "ok"
    if out is None:  # a tracker call blocked with nothing personal in it costs the user nothing (a silent 204)
        return "tracker_blocked" if case.get("recipient") in TRACKER_CLASSES else "needless"
    return "needless" if out.url != req.url or out.body != req.body else "ok"


def learn_policies(gw, cases: list[dict]) -> int:
    """Learn a privacy policy for each first-party site of the corpus, as if the user had opened its /privacy
    page (what browsing does with `learn_policies` on): the policy names the data the service needs, as real
    policies do, and never says it "discloses" a password."""
    from guardian_proxy.domains import registrable_domain

    n = 0
    for dom in sorted({registrable_domain(c["raw"].host) for c in cases if c["label"] == "intended"}):
        text = (f"# Privacy Policy\n\n{dom} collects your name, e-mail address, phone number, shipping address "
                "and payment card details when you create an account, place an order or contact us. We use them "
                "to provide the service, process your payments and answer your messages. We share payment data "
                "with our payment processor. We use cookies to keep you signed in. We do not sell your personal "
                "information.\n")
        if gw.learn_policy(f"https://{dom}/privacy", "text/markdown", text) is not None:
            n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--learn", action="store_true", help="learn a policy for every first-party site first")
    ap.add_argument("--json", type=Path, help="write per-case results here")
    ap.add_argument("--only", help="regex on case ids")
    ap.add_argument("--quiet", action="store_true", help="no per-failure lines")
    args = ap.parse_args(argv)

    from guardian_proxy.config import load_settings
    from guardian_proxy.pipeline import Gateway

    cases = _loader().load_all()
    if args.only:
        cases = [c for c in cases if re.search(args.only, c["id"])]
    with tempfile.TemporaryDirectory(prefix="bench-everyday-") as tmp:
        t0 = time.perf_counter()
        gw = Gateway.from_settings(load_settings(state_dir=Path(tmp)), with_log=False)
        gw.warm_up()
        load_s = time.perf_counter() - t0
        learned = learn_policies(gw, cases) if args.learn else 0
        results = []
        lat = []
        for c in cases:
            t = time.perf_counter()
            d = gw.evaluate(c["raw"], log=False)
            lat.append((time.perf_counter() - t) * 1000)
            verdict = judge(dict(c, recipient=d.six.recipient), d)
            results.append({"id": c["id"], "file": c["file"], "flow": c["flow"], "label": c["label"],
                            "service": c.get("service"), "action": d.action, "verdict": verdict,
                            "recipient": d.six.recipient, "basis": d.six.basis, "purposes": d.six.purposes,
                            "norm": d.extra.get("norm"), "rule": d.rule,
                            "R": round(d.risk.R, 3) if d.risk else None, "explanation": d.explanation})

    by_label = Counter(r["label"] for r in results)
    bad = Counter(r["verdict"] for r in results)
    n_int, n_un, n_np = by_label["intended"], by_label["unintended"], by_label["no_personal"]
    print(f"everyday corpus: {len(results)} requests ({n_int} intended, {n_un} unintended, {n_np} no personal "
          f"data); gateway loaded in {load_s:.1f} s{f'; {learned} policies learned' if args.learn else ''}")
    print(f"breakage  {bad['breakage']:4d} / {n_int:<4d} = {bad['breakage'] / max(1, n_int):6.1%}   (target ≤ 1 %)")
    print(f"leak      {bad['leak']:4d} / {n_un:<4d} = {bad['leak'] / max(1, n_un):6.1%}   (target ≤ 2 %)")
    print(f"needless  {bad['needless']:4d} / {n_np:<4d} = {bad['needless'] / max(1, n_np):6.1%}   "
          f"(and {bad['tracker_blocked']} tracker calls without personal data blocked)")
    lat.sort()
    print(f"latency per request: p50 {lat[len(lat) // 2]:.1f} ms, p95 {lat[int(len(lat) * 0.95)]:.1f} ms")
    print("\nby flow (label: allow / transform / deny; failures)")
    table: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for r in results:
        table[(r["flow"], r["label"])][r["action"]] += 1
        if r["verdict"] not in ("ok", "tracker_blocked"):
            table[(r["flow"], r["label"])]["fail"] += 1
    for (flow, label), cnt in sorted(table.items()):
        print(f"  {flow:16s} {label:12s} {cnt['allow']:4d} / {cnt['transform']:4d} / {cnt['deny']:4d};  "
              f"{cnt['fail']} failed")
    print("\nconfusion by recipient class (label → action)")
    conf: dict[str, Counter] = defaultdict(Counter)
    for r in results:
        conf[r["recipient"]][f"{r['label']}→{r['action']}"] += 1
    for rec, cnt in sorted(conf.items()):
        print(f"  {rec:20s} " + ", ".join(f"{k} {v}" for k, v in sorted(cnt.items())))
    if not args.quiet:
        fails = [r for r in results if r["verdict"] not in ("ok", "tracker_blocked")]
        if fails:
            print(f"\nfailures ({len(fails)})")
        for r in fails:
            print(f"  {r['verdict']:8s} {r['id']}: {r['action']} {r['recipient']}/{r['basis']}/"
                  f"{','.join(r['purposes'])} norm={r['norm']} — {r['explanation'][:160]}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

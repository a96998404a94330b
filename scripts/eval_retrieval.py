#!/usr/bin/env python3
"""Evaluate policy-evidence retrieval on OPP-115 (read from ../shared/data/opp115; never shipped).

    .venv/bin/python scripts/eval_retrieval.py [--opp115 DIR] [--alpha 0.6] [--limit N]
    .venv/bin/python scripts/eval_retrieval.py --bench        # retrieval latency, 500-statement domain

Units: each OPP-115 segment of a policy becomes one statement: its text, and the union of the fields
our segmenter (`guardian_proxy.policy.segment`) reads from its sentences (the practice is the most
frequent one). Queries: each distinct (policy, category, attribute values) of the consolidated
annotations (threshold 0.75) in the six practice categories, mapped to our vocabularies — Personal
Information Type → data categories, Third Party Entity → recipients (first party for First Party
Collection/Use), Purpose / Retention Purpose → purposes, the category → practices — exactly what an
Action gives the stage. Relevant: the policy's segments annotated with the same category and the same
Personal Information Type (the category alone when the query has none). Scored per query inside its
own policy: precision@8 and recall@8 for BM25 alone (α = 0), field overlap alone (α = 1) and the
hybrid (α = 0.6); ties keep document order. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from guardian_proxy.policy.documents import to_text  # noqa: E402
from guardian_proxy.policy.retrieval import ALPHA, TOP_K, PolicyIndex, Query  # noqa: E402
from guardian_proxy.policy.segment import Segmenter  # noqa: E402
from guardian_proxy.policy.store import policy_index  # noqa: E402
from guardian_proxy.types import PRACTICES, Statement  # noqa: E402

PRACTICE_OF = {
    "First Party Collection/Use": ("collect", "use"),
    "Third Party Sharing/Collection": ("share", "sell"),
    "Data Retention": ("retain",),
    "Data Security": ("protect",),
    "User Choice/Control": ("choice",),
    "User Access, Edit and Deletion": ("delete",),
}
PIT = {"Financial": "financial", "Health": "health", "Contact": "contact", "Location": "precise_location",
       "Demographic": "demographic", "Personal identifier": "government_id", "User online activities": "behavioural",
       "User profile": "identity", "User Profile": "identity", "Social media data": "identity",
       "IP address and device IDs": "device_id", "Cookies and tracking elements": "cookie",
       "Computer information": "device_id", "Survey data": "other", "Generic personal information": "other",
       "Other": "other"}
ENTITY = {"Unnamed third party": "unknown_third_party", "Named third party": "unknown_third_party",
          "Other part of company/affiliate": "first_party", "Other users": "social", "Public": "social"}
PURPOSE = {"Basic service/feature": "functionality", "Additional service/feature": "functionality",
           "Perform service": "functionality", "Advertising": "advertising", "Marketing": "advertising",
           "Analytics/Research": "analytics", "Personalization/Customization": "personalization",
           "Service Operation and Security": "security", "Service operation and security": "security",
           "Legal requirement": "security"}


def _value(attrs: dict, name: str) -> str | None:
    v = (attrs.get(name) or {}).get("value")
    return None if v in (None, "Unspecified", "not-selected") else v


def segment_statement(seg: Segmenter, pid: str, i: int, html: str) -> Statement:
    doc = to_text(html, "text/html")
    sts = seg.segment(doc, pid)
    practices = Counter(s.practice for s in sts)
    best = max(practices, key=lambda p: (practices[p], -PRACTICES.index(p))) if practices else "none"
    union = lambda attr: sorted({v for s in sts for v in getattr(s, attr)})  # noqa: E731
    return Statement(id=f"{pid}:{i}", domain=pid, text=doc.text or " ", practice=best,
                     data_categories=union("data_categories"), recipients=union("recipients"),
                     purposes=union("purposes"), negated=any(s.negated for s in sts))


def load(opp: Path, limit: int | None):
    seg = Segmenter()
    policies = []
    files = sorted((opp / "consolidation-0.75").glob("*.csv"))[:limit]
    for f in files:
        html_path = opp / "sanitized_policies" / (f.stem + ".html")
        if not html_path.exists():
            continue
        segments = html_path.read_text(encoding="utf-8", errors="replace").split("|||")
        labels: dict[int, set] = defaultdict(set)
        queries: set = set()
        for row in csv.reader(f.open(encoding="utf-8", errors="replace")):
            cat, sid = row[5], int(row[4])
            if cat not in PRACTICE_OF or sid >= len(segments):
                continue
            attrs = json.loads(row[6])
            pit = PIT.get(_value(attrs, "Personal Information Type") or "")
            labels[sid].add((cat, None))
            if pit:
                labels[sid].add((cat, pit))
            recs = ("first_party",) if cat == "First Party Collection/Use" else \
                tuple(filter(None, [ENTITY.get(_value(attrs, "Third Party Entity") or "")]))
            purp = tuple(filter(None, [PURPOSE.get(_value(attrs, "Purpose") or _value(attrs, "Retention Purpose") or "")]))
            queries.add((cat, pit, recs, purp))
        if not queries:
            continue
        statements = [segment_statement(seg, f.stem, i, re.sub(r"<br\s*/?>", "\n", s)) for i, s in enumerate(segments)]
        policies.append((f.stem, PolicyIndex(statements), labels, sorted(queries, key=str)))
    return policies


def evaluate(policies, alphas: dict[str, float]):
    sums = {k: [0.0, 0.0] for k in [*alphas, "random"]}
    n = 0
    for _pid, index, labels, queries in policies:
        for cat, pit, recs, purp in queries:
            key = (cat, pit)
            relevant = {sid for sid, ls in labels.items() if key in ls}
            if not relevant:
                continue
            q = Query.of([pit] if pit else [], recs, purp, PRACTICE_OF[cat])
            n += 1
            size = len(index.statements)  # a random ranking, in expectation
            sums["random"][0] += len(relevant) / size * min(TOP_K, size) / TOP_K
            sums["random"][1] += min(TOP_K, size) / size
            for name, a in alphas.items():
                top = [i for i, _ in index.top(q, TOP_K, a)]
                hits = len(relevant & set(top))
                sums[name][0] += hits / TOP_K
                sums[name][1] += hits / len(relevant)
    return n, {k: {"p@8": round(v[0] / max(n, 1), 4), "r@8": round(v[1] / max(n, 1), 4)} for k, v in sums.items()}


def bench(n_statements: int = 500, rounds: int = 20) -> dict:
    """p50/p95 of EvidenceStage.retrieve (top-8 + transparency) for one domain with n statements."""
    import tempfile

    import numpy as np

    from guardian_proxy.policy import EvidenceStage
    from guardian_proxy.types import Action

    data = ROOT.parent / "shared" / "data" / "policies"
    src = data / "ota-pga-versions" / "policies" / "Facebook_Privacy_Policy.md"
    doc = to_text(src.read_text(encoding="utf-8"), "text/markdown", src.name)
    sts = Segmenter().segment(doc, "bench.example")[:n_statements]
    with tempfile.TemporaryDirectory() as tmp:
        stage = EvidenceStage.from_dirs(None, Path(tmp))
        stage.store.add("bench.example", sts, {"title": "bench", "origin": str(src)})
        policy = stage.store.find("bench.example")
        t0 = time.perf_counter()
        policy_index(policy)  # built once per policy, on first use
        build_ms = (time.perf_counter() - t0) * 1000
        cats = ["contact", "identity", "precise_location", "device_id", "cookie", "behavioural", "financial", "health"]
        recs = ["first_party", "ad_network", "analytics", "social", "service_provider", "data_broker"]
        purps = [["unknown"], ["advertising"], ["analytics"], ["functionality"], ["profiling"]]
        actions = [Action(domain="bench.example", host="bench.example", categories={c: 1, cats[(i + 3) % 8]: 1},
                          recipient=r, purposes=p) for i, c in enumerate(cats) for r in recs for p in purps]
        cold, warm = [], []
        for a in actions[:rounds * 12]:
            policy_index(policy).cache.clear()
            t = time.perf_counter()
            ev = stage.retrieve(a)
            cold.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            stage.retrieve(a)
            warm.append((time.perf_counter() - t) * 1000)
            assert len(ev.statements) == TOP_K
    return {"statements": len(sts), "actions": len(cold), "index_build_ms": round(build_ms, 1),
            "p50_ms": round(float(np.percentile(cold, 50)), 3), "p95_ms": round(float(np.percentile(cold, 95)), 3),
            "cached_p50_ms": round(float(np.percentile(warm, 50)), 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--opp115", type=Path, default=ROOT.parent / "shared" / "data" / "opp115")
    ap.add_argument("--alpha", type=float, default=ALPHA)
    ap.add_argument("--limit", type=int, default=None, help="only the first N policies (quick check)")
    ap.add_argument("--bench", action="store_true", help="measure retrieval latency instead")
    args = ap.parse_args()
    if args.bench:
        r = bench()
        print(f"retrieval over {r['statements']} statements, {r['actions']} actions: p50 {r['p50_ms']} ms, "
              f"p95 {r['p95_ms']} ms (uncached), cached p50 {r['cached_p50_ms']} ms; index build {r['index_build_ms']} ms")
        print(json.dumps(r))
        return
    t = time.perf_counter()
    policies = load(args.opp115, args.limit)
    n, res = evaluate(policies, {"bm25": 0.0, "fields": 1.0, "hybrid": args.alpha})
    rnd = res.pop("random")
    print(f"OPP-115: {len(policies)} policies, {n} queries, {time.perf_counter() - t:.0f} s")
    print("| method | P@8 | R@8 |\n|---|---|---|")
    print(f"| random ranking (expected) | {rnd['p@8']:.3f} | {rnd['r@8']:.3f} |")
    for name, label in (("bm25", "BM25 (BM25Plus) alone"), ("fields", "field overlap alone"),
                        ("hybrid", f"hybrid α={args.alpha}")):
        print(f"| {label} | {res[name]['p@8']:.3f} | {res[name]['r@8']:.3f} |")
    print(json.dumps({"queries": n, **res}))


if __name__ == "__main__":
    main()

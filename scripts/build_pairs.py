#!/usr/bin/env python3
"""Build labelled (action, evidence) pairs for the violation-likelihood classifier.

    build_pairs.py opp115 [--opp115 ../shared/data/opp115] [--fields annotations|text] [--out FILE]
                          [--statements-out FILE]   (every statement with its gold annotations)
    build_pairs.py seed   [--policies guardian_proxy/policies/] [--out guardian_proxy/models/seed.local.pairs.jsonl]

Each line: {"id", "source", "policy", "split", "label" (0 compliant, 1 risky), "why", "action", "evidence"}
with `action`/`evidence` in the shapes of guardian_proxy.types (Action, Evidence). Evidence is what the
evidence stage would return: the top 8 statements by the hybrid retriever (guardian_proxy.policy.retrieval).

opp115 (research-only data: the output stays local, hence the git-ignored default guardian_proxy/models/*.local.*):
  statements  every sentence / list item of the sanitized policies' segments;
  fields      --fields annotations (default): each statement's structured fields are those of the gold
              annotations whose Personal Information Type span lies in it (the published setup: atomic
              statements with structured fields); --fields text: the fields the evidence stage's lexicon
              reads from the text, as at run time (harder: the lexicon is no annotator);
  actions     (category, recipient, purpose, basis) from the First Party Collection/Use and Third Party
              Sharing/Collection annotations and one-field perturbations of them;
  labels      from the gold annotations of the statements shown (top 8), see `label_of`: risky when a
              "Does Not" annotation covers the action, when no annotation shown names its category, or
              when it goes to a third party and none shown shares that category; compliant when a "Does"
              annotation covers it; other pairs are ambiguous and left out. Coverage: same category,
              recipient class and purpose ("Unspecified" purpose covers every purpose).
  split       policies whose numeric id is divisible by 5 are the test set.
seed (redistributable: the shipped corpus, synthetic actions): weak labels from the statements' fields by
  the same rule (guardian_proxy/likelihood/weak.py); owners with crc32(domain) % 5 == 0 are held out.
"""

from __future__ import annotations

import argparse
import csv
import html
import json
import random
import re
import sys
import zlib
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from guardian_proxy.likelihood.pairs import write_pairs  # noqa: E402
from guardian_proxy.policy.lexicon import analyse  # noqa: E402
from guardian_proxy.policy.retrieval import PolicyIndex, query_from_action  # noqa: E402
from guardian_proxy.types import Action, Evidence, ScoredStatement, Statement  # noqa: E402


def statement_from_text(sid: str, domain: str, text: str) -> Statement:
    """A statement with the fields the evidence stage's lexicon reads from its text (as at run time)."""
    f = analyse(text)
    return Statement(id=sid, domain=domain, text=text, practice=f.practice or "collect", negated=f.negated,
                     data_categories=f.data_categories, recipients=f.recipients, purposes=f.purposes,
                     condition=f.condition, retention=f.retention)


def retrieve(action: dict, index: PolicyIndex) -> dict:
    """Top-8 evidence as the evidence stage computes it (hybrid α = 0.6, guardian_proxy.policy.retrieval)."""
    q = query_from_action(Action.model_validate(action))
    top = [ScoredStatement(statement=index.statements[i], score=round(sc, 4)) for i, sc in index.top(q)]
    return Evidence(statements=top, transparency="partial").model_dump(exclude_defaults=True)

PI_TYPE = {
    "Contact": "contact", "Financial": "financial", "Health": "health", "Location": "precise_location",
    "Demographic": "demographic", "IP address and device IDs": "device_id", "Computer information": "device_id",
    "Cookies and tracking elements": "cookie", "User online activities": "behavioural",
    "User profile": "identity", "User Profile": "identity", "Social media data": "identity",
    "Personal identifier": "government_id", "Survey data": "other",
    "Generic personal information": "generic",
}
PURPOSE = {
    "Basic service/feature": "functionality", "Additional service/feature": "functionality",
    "Analytics/Research": "analytics", "Personalization/Customization": "personalization",
    "Advertising": "advertising", "Marketing": "advertising",
    "Service Operation and Security": "security", "Service operation and security": "security",
    "Unspecified": None,  # covers every purpose
}
ACTION_CATEGORIES = ("contact", "financial", "health", "precise_location", "demographic", "device_id", "cookie",
                     "behavioural", "identity", "government_id", "other")
ACTION_RECIPIENTS = ("first_party", "service_provider", "analytics", "ad_network", "social", "unknown_third_party")
ACTION_PURPOSES = ("functionality", "analytics", "advertising", "personalization", "security")
THIRD_BY_PURPOSE = {"advertising": {"ad_network"}, "analytics": {"analytics"}, "functionality": {"service_provider"},
                    "security": {"service_provider"}, "personalization": {"service_provider"}}
ANY_THIRD = {"service_provider", "analytics", "ad_network", "social", "unknown_third_party"}


class Ann:
    """One gold practice annotation reduced to what coverage needs."""

    __slots__ = ("segment", "does", "category", "recipients", "purpose", "spans")

    def __init__(self, segment: int, does: bool, category: str, recipients: set[str], purpose: str | None,
                 spans: list[tuple[int, int]]):
        self.segment, self.does, self.category, self.recipients, self.purpose, self.spans = (
            segment, does, category, recipients, purpose, spans)


def parse_annotation(row: list[str]) -> Ann | None:
    kind, attrs = row[5], json.loads(row[6])
    if kind not in ("First Party Collection/Use", "Third Party Sharing/Collection"):
        return None
    val = {k: v.get("value") for k, v in attrs.items()}
    category = PI_TYPE.get(val.get("Personal Information Type", ""))
    purpose_raw = val.get("Purpose", "Unspecified")
    if category is None or purpose_raw not in PURPOSE:
        return None
    purpose = PURPOSE[purpose_raw]
    if kind.startswith("First"):
        recipients = {"first_party"}
    else:
        entity = val.get("Third Party Entity", "Unspecified")
        if entity == "Other part of company/affiliate":
            recipients = {"first_party"}
        elif entity in ("Public", "Other users"):
            recipients = {"social"}
        else:
            recipients = (THIRD_BY_PURPOSE[purpose] | {"unknown_third_party"}) if purpose else set(ANY_THIRD)
    spans = [(v["startIndexInSegment"], v["endIndexInSegment"]) for k, v in attrs.items()
             if isinstance(v.get("startIndexInSegment"), int) and v["startIndexInSegment"] >= 0]
    pit = attrs.get("Personal Information Type", {})
    if isinstance(pit.get("startIndexInSegment"), int) and pit["startIndexInSegment"] >= 0:
        spans = [(pit["startIndexInSegment"], pit["endIndexInSegment"])]  # where the data is named
    return Ann(int(row[4]), val.get("Does/Does Not") != "Does Not", category, recipients, purpose, spans)


def covers(ann: Ann, cat: str, rec: str, pur: str) -> bool:
    return ann.category == cat and rec in ann.recipients and (ann.purpose is None or ann.purpose == pur)


def label_of(anns: list[Ann], cat: str, rec: str, pur: str) -> tuple[int, str] | None:
    """(label, why), or None when the annotations disagree (a Does and a Does Not both cover it)."""
    does = any(a.does and covers(a, cat, rec, pur) for a in anns)
    denied = any(not a.does and covers(a, cat, rec, pur) for a in anns)
    if does and denied:
        return None
    if denied:
        return 1, "denied"
    if does:
        return 0, "disclosed"
    if not any(a.category == cat for a in anns):
        return 1, "undisclosed_category"
    if rec != "first_party" and not any(a.category == cat and a.recipients - {"first_party"} for a in anns):
        return 1, "undisclosed_sharing"
    return None  # the category is disclosed for other recipients or purposes: left out as ambiguous


_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])|<\s*(?:br|/?li|/?p|/?ul|/?ol|/?div|/?h\d)[^>]*>", re.I)


def clean(raw: str) -> str:
    text = re.sub(r"<[^>]+>", " ", raw)
    return re.sub(r"\s+", " ", html.unescape(text)).strip()


def sentences(raw: str, min_chars: int = 40) -> list[tuple[int, int, str]]:
    """Atomic statements of one segment: sentences and list items as (raw start, raw end, clean text);
    pieces shorter than `min_chars` are merged into the next one (headings, "e.g." splits)."""
    out: list[tuple[int, int, str]] = []
    start = 0
    pending: tuple[int, str] | None = None
    for m in [*_BREAK.finditer(raw), None]:
        end = m.start() if m else len(raw)
        text = clean(raw[start:end])
        if text:
            if pending is not None:
                start, text = pending[0], pending[1] + " " + text
                pending = None
            if len(text) < min_chars and m is not None:
                pending = (start, text)
            else:
                out.append((start, end, text))
        if m is not None:
            start = m.end()
    if pending is not None:
        out.append((pending[0], len(raw), pending[1]))
    return out


def load_policies(opp: Path) -> list[tuple[int, str, list[str], list[Ann]]]:
    out = []
    for f in sorted((opp / "consolidation-0.75").glob("*.csv")):
        pid, name = f.stem.split("_", 1)
        segments = (opp / "sanitized_policies" / f"{f.stem}.html").read_text(
            encoding="utf-8", errors="replace").split("|||")
        with f.open(newline="", encoding="utf-8") as fh:
            anns = [a for a in (parse_annotation(r) for r in csv.reader(fh)) if a is not None]
        out.append((int(pid), name, segments, anns))
    return out


def candidate_actions(anns: list[Ann], rng: random.Random) -> list[tuple[str, str, str]]:
    """Actions drawn from the annotations (mostly compliant) and one-field perturbations (mostly risky)."""
    seeds = []
    for a in anns:
        if a.category == "generic":
            continue
        purs = [a.purpose] if a.purpose else list(ACTION_PURPOSES)
        seeds.append((a.category, rng.choice(sorted(a.recipients)), rng.choice(purs)))
    out = set(seeds)
    for cat, rec, pur in seeds:
        out.add((rng.choice(ACTION_CATEGORIES), rec, pur))
        out.add((cat, rng.choice(ACTION_RECIPIENTS), pur))
        out.add((cat, rec, rng.choice(ACTION_PURPOSES)))
    return sorted(out)


def gold_statement(st, anns: list[Ann]):
    """The statement's fields from the gold annotations that name their data in it (--fields annotations)."""
    if not anns:
        return st
    cats = sorted({a.category for a in anns} - {"generic"} | ({"other"} if any(a.category == "generic" for a in anns) else set()))
    recs = sorted({r for a in anns for r in a.recipients})
    purs = sorted({a.purpose for a in anns if a.purpose})
    practice = "share" if any(r != "first_party" for r in recs) else "collect"
    return st.model_copy(update={"data_categories": cats, "recipients": recs, "purposes": purs, "practice": practice,
                                 "negated": any(not a.does for a in anns)})


def policy_statements(pid: int, domain: str, segments: list[str], anns: list[Ann]):
    """Sentence-level statements of a policy and, per annotation, the ids of the statements its spans touch."""
    statements, where = [], {}
    for seg_no, raw in enumerate(segments):
        for k, (start, end, text) in enumerate(sentences(raw)):
            sid = f"opp115:{pid}:{seg_no}:{k}"
            statements.append(statement_from_text(sid, domain, text))
            where[sid] = (seg_no, start, end)
    touched: dict[int, set[str]] = defaultdict(set)
    for i, a in enumerate(anns):
        for sid, (seg_no, start, end) in where.items():
            if seg_no == a.segment and any(s < end and e > start for s, e in a.spans):
                touched[i].add(sid)
    return statements, touched


def opp115_pairs(opp: Path, per_class: int, seed: int, fields: str = "annotations", label: str = "local") -> list[dict]:
    pairs = []
    for pid, name, segments, anns in load_policies(opp):
        rng = random.Random(seed * 100_003 + pid)
        domain = name.lower()
        statements, touched = policy_statements(pid, domain, segments, anns)
        if fields == "annotations":
            by_sid: dict[str, list[Ann]] = defaultdict(list)
            for i, sids in touched.items():
                for sid in sids:
                    by_sid[sid].append(anns[i])
            statements = [gold_statement(st, by_sid.get(st.id, [])) for st in statements]
        index = PolicyIndex(statements)
        by_label: dict[int, list] = defaultdict(list)
        for cat, rec, pur in candidate_actions(anns, rng):
            action = {"domain": domain, "host": domain, "categories": {cat: 1}, "recipient": rec,
                      "purposes": [pur], "basis": rng.choice(("user", "default", "background"))}
            evidence = retrieve(action, index)
            if label == "local":
                shown = {s["statement"]["id"] for s in evidence["statements"]}
                labelled = label_of([a for i, a in enumerate(anns) if touched.get(i, set()) & shown], cat, rec, pur)
            else:
                labelled = label_of(anns, cat, rec, pur)
            if labelled is not None:
                by_label[labelled[0]].append((action, evidence, labelled[1]))
        for y, items in sorted(by_label.items()):
            rng.shuffle(items)
            for action, evidence, why in items[:per_class]:
                pairs.append({"id": f"opp115-{pid}-{len(pairs)}", "source": "opp115", "policy": pid,
                              "split": "test" if pid % 5 == 0 else "train", "label": y, "why": why,
                              "action": action, "evidence": evidence})
    return pairs


def opp115_statements(opp: Path) -> list[dict]:
    """Every statement of every policy with the gold annotations whose data span lies in it: the supervision
    of the statement reader (guardian_proxy/likelihood/reader.py). A statement no annotation touches has
    an empty `anns` (it names no practice for the annotators)."""
    out = []
    for pid, name, segments, anns in load_policies(opp):
        statements, touched = policy_statements(pid, name.lower(), segments, anns)
        by_sid: dict[str, list[Ann]] = defaultdict(list)
        for i, sids in touched.items():
            for sid in sids:
                by_sid[sid].append(anns[i])
        for st in statements:
            out.append({"id": st.id, "policy": pid, "split": "test" if pid % 5 == 0 else "train", "text": st.text,
                        "anns": [{"category": a.category, "does": a.does, "recipients": sorted(a.recipients),
                                  "purpose": a.purpose} for a in by_sid.get(st.id, [])]})
    return out


def seed_pairs(policies: Path, per_domain: int, seed: int) -> list[dict]:
    from guardian_proxy.likelihood.weak import seed_actions, weak_label
    from guardian_proxy.policy.store import PolicyStore, policy_index

    pairs: list[dict] = []
    for policy in PolicyStore(policies).all():
        rng = random.Random(seed * 100_003 + zlib.crc32(policy.domain.encode()))
        split = "test" if zlib.crc32(policy.domain.encode()) % 5 == 0 else "train"
        by_label: dict[int, list] = defaultdict(list)
        for cat, rec, pur in seed_actions(policy.statements, rng, 6 * per_domain):
            action = {"domain": policy.domain, "host": policy.domain, "categories": {cat: 1}, "recipient": rec,
                      "purposes": [pur], "basis": rng.choice(("user", "default", "background"))}
            evidence = retrieve(action, policy_index(policy))
            if rng.random() < 0.04:  # a destination with no known policy
                evidence = Evidence(transparency="none").model_dump(exclude_defaults=True)
            shown = [Statement.model_validate(s["statement"]) for s in evidence.get("statements", [])]
            labelled = weak_label(shown, cat, rec, pur)
            if labelled is not None:
                by_label[labelled[0]].append((action, evidence, labelled[1]))
        for y, items in sorted(by_label.items()):
            rng.shuffle(items)
            for action, evidence, why in items[: per_domain // 2]:
                pairs.append({"id": f"seed-{policy.domain}-{len(pairs)}", "source": "seed", "policy": policy.domain,
                              "split": split, "label": y, "why": why, "action": action, "evidence": evidence})
    return pairs


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="source", required=True)
    o = sub.add_parser("opp115")
    o.add_argument("--opp115", type=Path, default=ROOT.parent / "shared" / "data" / "opp115")
    o.add_argument("--out", type=Path, default=ROOT / "guardian_proxy" / "models" / "opp115.local.pairs.jsonl")
    o.add_argument("--per-class", type=int, default=36, help="pairs per label per policy (at most)")
    o.add_argument("--seed", type=int, default=0)
    o.add_argument("--label", choices=("local", "policy"), default="local",
                   help="label from the annotations of the shown evidence (local) or of the whole policy")
    o.add_argument("--fields", choices=("annotations", "text"), default="annotations",
                   help="statement fields from the gold annotations (published setup) or read from the text")
    o.add_argument("--statements-out", type=Path, default=None,
                   help="also write every statement with its gold annotations (the statement reader's data)")
    s = sub.add_parser("seed")
    s.add_argument("--policies", type=Path, default=ROOT / "guardian_proxy" / "policies")
    s.add_argument("--out", type=Path, default=ROOT / "guardian_proxy" / "models" / "seed.local.pairs.jsonl")
    s.add_argument("--per-domain", type=int, default=60, help="pairs per owner (at most)")
    s.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.source == "opp115":
        pairs = opp115_pairs(args.opp115, args.per_class, args.seed, args.fields, args.label)
        if args.statements_out:
            write_pairs(args.statements_out, opp115_statements(args.opp115))
    else:
        pairs = seed_pairs(args.policies, args.per_domain, args.seed)
    n = write_pairs(args.out, pairs)
    labels = Counter(p["label"] for p in pairs)
    print(json.dumps({"out": str(args.out), "pairs": n, "test_pairs": sum(p["split"] == "test" for p in pairs),
                      "risky": labels[1], "compliant": labels[0], "why": dict(Counter(p["why"] for p in pairs))}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Benchmark the anonymizer on TAB and PANORAMA (development split) and print the tables of
docs/design/anonymization.md.

1. The controller, through the batch interface exactly as a user runs it:
       guardian-proxy anonymize --input GOLD --output OUT --context medium --likelihood 0.7
   scored with `python3 ../shared/score.py GOLD OUT` (privacy, utility, near-empty share), plus the
   decision mix, mean start/final level and time per text (wall and CPU of the whole process, model
   loading excluded by timing the lines).
2. Fixed levels L1..L5 (privacy must rise monotonically) and the ablation of the paper — NER only (every
   detected span a typed tag), + guesser (tags plus the residue the guesser verifies), + levels (the full
   L1-L5 escalation from the controller's start level), verification on/off with the upgrade rate — run
   in-process on the same extracted spans, scored with the same score.py.

    .venv/bin/python scripts/bench_anonymize.py [--data ../shared/data/bench] [--sets tab,panorama,synth] [--limit N]
        [--controller-only]

Every table has the text precision: of the original's word tokens the output does not keep (a token alignment),
the share that lie in a gold string (what score.py counts as personal). `synth` is a PII-Masking-style set
generated with Faker at bench time (sex, titles, ID-card numbers, states, times …; no dataset row is used).
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_scorer(shared: Path):
    spec = importlib.util.spec_from_file_location("score", shared / "score.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_TOK = re.compile(r"\w+", re.UNICODE)


def _gold_mask(text: str, gold: list[str], scorer) -> list[tuple[int, int]]:
    """Character ranges of every occurrence of a gold string in the original (score.py's matching:
    case-insensitive, word-bounded): what the scorer counts as personal."""
    out = []
    for g in gold:
        if g and g.strip():
            out += [m.span() for m in re.finditer(scorer._pat(g), text, re.IGNORECASE)]
    return out


def changed_tokens(original: str, output: str) -> list[tuple[int, int]]:
    """Character ranges of the original's word tokens that the output does not keep (a token alignment:
    difflib over lower-cased \\w+ tokens, so a kept word that moved is not counted as changed)."""
    a = [(m.group().lower(), m.start(), m.end()) for m in _TOK.finditer(original)]
    b = [m.group().lower() for m in _TOK.finditer(output)]
    sm = difflib.SequenceMatcher(None, [t for t, _, _ in a], b, autojunk=False)
    kept = set()
    for blk in sm.get_matching_blocks():
        kept.update(range(blk.a, blk.a + blk.size))
    return [(s, e) for i, (_, s, e) in enumerate(a) if i not in kept]


def text_precision(gold_rows: list[dict], out_rows: list[dict], scorer) -> dict:
    """Text precision = changed tokens that are personal ÷ all changed tokens (micro over the set); a token is
    personal when it lies in an occurrence of a gold string. Also the token recall (personal tokens changed ÷
    personal tokens) and the changed share of all tokens."""
    out = {str(r["id"]): r["text"] for r in out_rows}
    changed = personal_changed = personal = total = 0
    for g in gold_rows:
        text = g["text"]
        mask = _gold_mask(text, g.get("gold", []), scorer)
        toks = [(m.start(), m.end()) for m in _TOK.finditer(text)]
        is_personal = {t for t in toks if any(a < t[1] and t[0] < b for a, b in mask)}
        ch = changed_tokens(text, out.get(str(g["id"]), text))
        total += len(toks)
        personal += len(is_personal)
        changed += len(ch)
        personal_changed += sum(1 for t in ch if t in is_personal)
    return {"precision": personal_changed / changed if changed else 1.0,
            "token_recall": personal_changed / personal if personal else 1.0,
            "changed_share": changed / total if total else 0.0, "changed": changed}


#: PII-Masking-style templates (the ai4privacy dataset card's labels: PREFIX, FIRSTNAME, LASTNAME, SEX, GENDER,
#: JOBTITLE, EMAIL, PHONENUMBER, STREET, BUILDINGNUMBER, CITY, STATE, ZIPCODE, DOB, DATE, TIME, SSN, IDCARD,
#: ACCOUNTNUMBER, IBAN, USERNAME, IP …): written for this benchmark, filled by Faker; no row of the dataset is used.
#: {x} is a personal value (gold), the rest of each sentence is ordinary text that must stay.
SYNTH_TEMPLATES = [
    "Dear {prefix} {last}, your appointment on {date} at {time} has been confirmed. Please bring your ID card {idcard}.",
    "Patient {first} {last}, sex: {sex}, date of birth {dob}, was admitted to the ward for observation.",
    "Please update the records for {prefix} {first} {last} ({sex}), who moved to {street} {building}, {city}, {state} {zip}.",
    "Hi team, {first} will present the quarterly results at {time}. Questions can be sent to {email}.",
    "The applicant, {prefix} {last}, a {job} from {city}, submitted the form with social security number {ssn}.",
    "Account {account} belongs to {first} {last}; the statement for {date} is attached. Contact {phone} for help.",
    "Welcome back, {username}! Your last login was from {ip} on {date} at {time}.",
    "Gender: {gender}. Name: {first} {last}. Email: {email}. Phone: {phone}.",
    "{prefix} {first} {last} works as a {job} and lives in {state}. The newsletter is sent every Monday.",
    "Transfer the refund to IBAN {iban} in the name of {first} {last} before the end of the month.",
    "Our records show that {first}, born on {dob}, holds identity card number {idcard} issued in {state}.",
    "Reminder: {prefix} {last} has a meeting with the school counsellor at {time} on {date} in room 4.",
]


def synth_rows(n: int = 120, seed: int = 7) -> list[dict]:
    """A PII-Masking-style development set generated at bench time ({"id", "text", "gold"}). Dates and times are drawn
    between fixed bounds: Faker's own default ends today, which made the set (and its numbers) change with the clock."""
    import random
    from datetime import datetime

    from faker import Faker

    start, end = datetime(1970, 1, 1), datetime(2024, 6, 30)

    fk = Faker("en_US")
    Faker.seed(seed)
    rnd = random.Random(seed)
    rows = []
    for i in range(n):
        sex = rnd.choice(["M", "F", "Male", "Female"])
        vals = {"prefix": rnd.choice(["Mr", "Mrs", "Ms", "Dr", "Mr.", "Dr."]), "first": fk.first_name(),
                "last": fk.last_name(), "sex": sex, "gender": rnd.choice(["Male", "Female", "Non-binary"]),
                "date": fk.date_time_between_dates(start, end).strftime(rnd.choice(["%d/%m/%Y", "%B %d, %Y", "%Y-%m-%d"])),
                "dob": fk.date_time_between_dates(datetime(1934, 1, 1), datetime(2006, 6, 30)).strftime(
                    rnd.choice(["%d/%m/%Y", "%B %d, %Y"])),
                "time": fk.date_time_between_dates(start, end).strftime(rnd.choice(["%H:%M", "%I:%M %p"])),
                "idcard": fk.bothify(rnd.choice(["??######", "#########", "?#######?"])).upper(),
                "street": fk.street_name(), "building": fk.building_number(), "city": fk.city(),
                "state": fk.state(), "zip": fk.postcode(), "email": fk.email(), "job": fk.job().split(",")[0].lower(),
                "ssn": fk.ssn(), "account": fk.bban(), "phone": fk.phone_number(), "username": fk.user_name(),
                "ip": fk.ipv4_public(), "iban": fk.iban()}
        tpl = SYNTH_TEMPLATES[i % len(SYNTH_TEMPLATES)]
        keys = re.findall(r"\{(\w+)\}", tpl)
        rows.append({"id": f"synth-{i}", "text": tpl.format(**vals), "gold": sorted({vals[k] for k in keys})})
    return rows


def gold_ceiling(rows: list[dict], scorer) -> float:
    """The utility of the best possible output: every gold string (and nothing else) replaced by one tag. A set
    whose texts are mostly personal values cannot score above it."""
    util = []
    for r in rows:
        text = r["text"]
        for g in sorted((g for g in r.get("gold", []) if g and g.strip()), key=len, reverse=True):
            text = re.sub(scorer._pat(g), "[X]", text, flags=re.IGNORECASE)
        util.append(scorer.jaccard(r["text"], text))
    return statistics.mean(util) if util else 1.0


def utility_parts(gold_rows: list[dict], out_rows: list[dict], scorer) -> dict:
    """What the utility (token-set Jaccard of original and output) is made of, mean over texts: `kept` = the share of
    the original's word types the output keeps (|A ∩ B| / |A|: the utility if the rewrite wrote no word of its own),
    `ceiling_kept` = the same when exactly the gold strings are taken out, and `written` = the mean number of word types
    the output writes that the original did not have (tags such as "person_1", "date"; stand-ins; "1990s"), each of
    which enlarges the union. On short texts full of values (PII-Masking) the written words, not needless masking,
    are most of the gap between utility and the ceiling."""
    out = {str(r["id"]): r["text"] for r in out_rows}
    kept, ceil, written = [], [], []
    for g in gold_rows:
        a = scorer.toks(g["text"])
        b = scorer.toks(out.get(str(g["id"]), g["text"]))
        text = g["text"]
        for v in sorted((v for v in g.get("gold", []) if v and v.strip()), key=len, reverse=True):
            text = re.sub(scorer._pat(v), " ", text, flags=re.IGNORECASE)
        c = scorer.toks(text)
        kept.append(len(a & b) / len(a) if a else 1.0)
        ceil.append(len(a & c) / len(a) if a else 1.0)
        written.append(len(b - a))
    n = max(1, len(gold_rows))
    return {"kept": sum(kept) / n, "ceiling_kept": sum(ceil) / n, "written": sum(written) / n}


def write_jsonl(path: Path, rows) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def controller(gold: Path, out: Path, limit: int | None, tmp: Path) -> dict:
    src = gold
    if limit:
        src = tmp / f"{gold.stem}.head.jsonl"
        write_jsonl(src, [json.loads(x) for x in gold.read_text().splitlines()[:limit]])
    exe = ROOT / ".venv" / "bin" / "guardian-proxy"
    cmd = [str(exe) if exe.exists() else "guardian-proxy", "anonymize", "--input", str(src), "--output", str(out),
           "--context", "medium", "--likelihood", "0.7", "--seed", "bench"]
    t0, c0 = time.perf_counter(), os.times()
    subprocess.run(cmd, check=True)
    c1 = os.times()
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    cpu = (c1.children_user + c1.children_system) - (c0.children_user + c0.children_system)
    return {"src": src, "rows": rows, "wall_s": time.perf_counter() - t0, "cpu_s": cpu}


def extracted(gw, texts: list[dict]):
    from guardian_proxy.cli.anonymize import _request

    out = []
    for r in texts:
        req = _request(r["text"], 20000)
        out.append(gw.extractor.extract(req))
    return out


def run_fixed(tr, actions, texts, level: int, max_rounds: int = 0) -> tuple[list[dict], list]:
    rows, outcomes = [], []
    for r, a in zip(texts, actions, strict=True):
        oc = tr.anonymize(a.fields, a.spans, level, max_rounds=max_rounds)
        rows.append({"id": r["id"], "text": "".join(oc.texts.get(f.path, f.text) for f in a.fields)})
        outcomes.append(oc)
    return rows, outcomes


def ner_only(actions, texts, with_guesser: bool):
    from guardian_proxy.anonymize.generalize import REMOVED, tag
    from guardian_proxy.anonymize.operators import apply_spans
    from guardian_proxy.anonymize.residue import scan
    from guardian_proxy.anonymize.spans import merge
    from guardian_proxy.anonymize.verifier import LexicalVerifier

    rows = []
    for r, a in zip(texts, actions, strict=True):
        parts = []
        for f in a.fields:
            spans = merge([s for s in a.spans if s.path == f.path and s.entity != "NARRATIVE"])
            text = apply_spans(f.text, spans, lambda s: tag(s.entity))
            if with_guesser:
                ver = LexicalVerifier(f.text)
                cues = [c for c in scan(text) if c.confidence >= 0.6 and ver.verified(_guess(c))]
                for c in sorted(cues, key=lambda c: -c.start):
                    text = text[: c.start] + REMOVED + text[c.end:]
            parts.append(text)
        rows.append({"id": r["id"], "text": "".join(parts)})
    return rows


def _guess(c):
    from guardian_proxy.anonymize.verifier import Guess

    return Guess(c.value, c.confidence, c.kind)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "bench"))
    ap.add_argument("--sets", default="tab,panorama")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--skip-controller", action="store_true")
    ap.add_argument("--controller-only", action="store_true", help="Skip the fixed levels and the ablation.")
    args = ap.parse_args()
    data = Path(args.data)
    scorer = load_scorer(data.parent.parent)
    tmp = Path(tempfile.mkdtemp(prefix="bench-anon-"))

    from guardian_proxy.anonymize import Transformer
    from guardian_proxy.config import AnonymizeSettings, load_settings
    from guardian_proxy.pipeline import Gateway

    gw = None if args.controller_only else Gateway.from_settings(load_settings(state_dir=tmp / "state"), with_log=False)
    for name in args.sets.split(","):
        gold = data / f"{name}.dev.gold.jsonl"
        if name == "synth":  # PII-Masking-style, generated here (see SYNTH_TEMPLATES)
            gold = tmp / "synth.dev.gold.jsonl"
            write_jsonl(gold, synth_rows())
        texts = [json.loads(x) for x in gold.read_text().splitlines()][: args.limit]
        print(f"\n## {name} ({len(texts)} texts; utility ceiling, gold strings replaced by a tag: "
              f"{gold_ceiling(texts, scorer):.3f})\n")
        if not args.skip_controller:
            c = controller(gold, tmp / f"{name}.controller.jsonl", args.limit, tmp)
            sc = scorer.score(str(c["src"]), str(tmp / f"{name}.controller.jsonl"))
            rows = c["rows"]
            ms = [r["ms"] for r in rows]
            tp = text_precision(texts, c["rows"], scorer)
            print("| run | text precision | token recall | privacy (micro) | privacy (macro) | utility | near-empty | decisions | start → final level | ms/text (median, mean) | CPU ms/text |")
            print("|---|---|---|---|---|---|---|---|---|---|---|")
            dec = Counter(r["decision"] for r in rows)
            lv = [(r["start_level"], r["final_level"]) for r in rows if r["final_level"]]
            mean_s = statistics.mean(a for a, _ in lv) if lv else 0
            mean_f = statistics.mean(b for _, b in lv) if lv else 0
            print(f"| controller medium, L=0.7 | {tp['precision']:.3f} | {tp['token_recall']:.3f} | {sc['privacy_micro']:.3f} | {sc['privacy_macro']:.3f} | "
                  f"{sc['utility_jaccard']:.3f} | {sc['near_empty_share']:.1%} | "
                  f"{', '.join(f'{k} {v}' for k, v in sorted(dec.items()))} | {mean_s:.2f} → {mean_f:.2f} | "
                  f"{statistics.median(ms):.0f}, {statistics.mean(ms):.0f} | {1000 * c['cpu_s'] / len(rows):.0f} (incl. start-up) |")
            up = utility_parts(texts, rows, scorer)
            print(f"\nutility parts: the output keeps {up['kept']:.3f} of the original's word types (exactly the gold "
                  f"strings taken out: {up['ceiling_kept']:.3f}) and writes {up['written']:.1f} word types of its own "
                  f"per text (tags, stand-ins), which the Jaccard counts against it")
        if args.controller_only:
            continue
        actions = extracted(gw, texts)
        gold_sub = tmp / f"{name}.gold.jsonl"
        write_jsonl(gold_sub, texts)

        def score_rows(rows, tag, name=name, gold_sub=gold_sub, texts=texts):
            p = tmp / f"{name}.{tag}.jsonl"
            write_jsonl(p, rows)
            return {**scorer.score(str(gold_sub), str(p)), **text_precision(texts, rows, scorer)}

        tr = Transformer(AnonymizeSettings(), seed=b"bench")
        print("\n| fixed level | text precision | privacy (micro) | privacy (macro) | utility | near-empty |")
        print("|---|---|---|---|---|---|")
        for lvl in range(1, 6):
            rows, _ = run_fixed(tr, actions, texts, lvl)
            s = score_rows(rows, f"L{lvl}")
            print(f"| L{lvl} | {s['precision']:.3f} | {s['privacy_micro']:.3f} | {s['privacy_macro']:.3f} | {s['utility_jaccard']:.3f} | "
                  f"{s['near_empty_share']:.1%} |")
        print("\n| ablation | text precision | privacy (micro) | utility | upgrade rate | mean final level |")
        print("|---|---|---|---|---|---|")
        for label, with_guesser in (("NER only (every span a typed tag)", False), ("+ guesser (verified residue hidden)", True)):
            s = score_rows(ner_only(actions, texts, with_guesser), label[:6].strip())
            print(f"| {label} | {s['precision']:.3f} | {s['privacy_micro']:.3f} | {s['utility_jaccard']:.3f} | – | – |")
        for verify in (True, False):
            t = Transformer(AnonymizeSettings(verify=verify), seed=b"bench")
            rows, ocs = run_fixed(t, actions, texts, 3, max_rounds=5)
            s = score_rows(rows, f"esc{verify}")
            up = sum(o.upgrades > 0 for o in ocs) / max(1, len(ocs))
            print(f"| + levels L3→L5, verification {'on' if verify else 'off'} | {s['precision']:.3f} | "
                  f"{s['privacy_micro']:.3f} | "
                  f"{s['utility_jaccard']:.3f} | {up:.2f} | {statistics.mean(o.level for o in ocs):.2f} |")
    print(f"\n(outputs in {tmp})")


if __name__ == "__main__":
    sys.exit(main())

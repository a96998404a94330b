#!/usr/bin/env python3
"""Evaluate the likelihood stage on the OPP-115 test split (policies whose id is divisible by 5).

    eval_likelihood.py [--pairs guardian_proxy/models/opp115.local.pairs.jsonl] [--model guardian_proxy/models/opp115.local.pt]
                       [--shipped guardian_proxy/models/likelihood.pt] [--llm-backend none|llama_cpp|transformers --llm-model PATH]

Every test pair goes through the real router (`EvidentialLikelihood.estimate`, one pair at a time);
a pair counts as predicted risky when L ≥ 0.5. Prints one JSON object:
  pairs               all pairs in the file (train + test)
  test_pairs          pairs of the test policies
  accuracy            every test pair, each decided by the path the router chose (escalated pairs by the
                      LLM when one is given, else by the conservative fallback)
  accuracy_fast_only  the pairs the fast path decided (u < threshold)
  accuracy_all_fast   the classifier's risky mass alone on every test pair (no routing)
  escalation_rate     share of test pairs with u ≥ threshold
  ms_per_pair_fast    mean wall time of estimate() for fast-path pairs (features + forward), CPU
  cpu_ms_per_estimate mean process CPU time of estimate() over every test pair (one thread)
  ece                 expected calibration error of the risky mass against the labels (10 equal bins)
  escalation_sweep    fast-path accuracy (risky mass ≥ 0.5 vs the label) when the most uncertain 0 / 3.5 / 10 / 20 /
                      30 / 40 % of the test pairs (largest u) are escalated: how honestly u ranks the errors
With --statements FILE (scripts/build_pairs.py opp115 --statements-out) also:
  reader              the model's statement reader on the test policies' statements: mean average precision over
                      its outputs with ≥ 3 positive statements, and its mean log-loss
  duplicate_sentences the annotators' own consistency: statements whose text occurs in several policies and is
                      annotated in at least one copy, and the share annotated alike in every copy (any practice,
                      each data category named); the ceiling of any reader that sees one sentence's text
With --calibration FILE.svg a reliability diagram of the risky mass against the annotators' labels is
written (an SVG drawn here: no plotting library needed).
and the same numbers for the shipped model under "shipped" (when --shipped exists), on --shipped-pairs
(OPP-115 test pairs whose statement fields are read from the text, as the shipped model sees them).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from guardian_proxy.likelihood.pairs import read_pairs  # noqa: E402

SWEEP = (0.0, 0.035, 0.1, 0.2, 0.3, 0.4)


def evaluate(model_file: Path, test, backend=None) -> dict:
    from guardian_proxy.likelihood.router import EvidentialLikelihood

    stage = EvidentialLikelihood(model_file, backend=backend)
    n = len(test)
    correct = fast_correct = fast_n = all_fast_correct = 0
    fast_ms: list[float] = []
    paths: dict[str, int] = {}
    masses: list[tuple[float, int, bool]] = []
    records: list[tuple[float, float, int]] = []  # (risky mass, u, label) for the escalation sweep
    cpu = 0.0
    for p in test:
        c0 = time.process_time()
        t0 = time.perf_counter()
        lk = stage.estimate(p.action, p.evidence)
        ms = (time.perf_counter() - t0) * 1000
        cpu += time.process_time() - c0
        if lk.risky_mass is not None:
            masses.append((lk.risky_mass, p.label, lk.path == "fast"))
            records.append((lk.risky_mass, lk.u if lk.u is not None else 1.0, p.label))
        paths[lk.path] = paths.get(lk.path, 0) + 1
        ok = int(lk.value >= 0.5) == p.label
        correct += ok
        if lk.risky_mass is not None:
            all_fast_correct += int(lk.risky_mass >= 0.5) == p.label
        if lk.path == "fast":
            fast_n += 1
            fast_correct += ok
            fast_ms.append(ms)
    evaluate.masses = masses  # for the reliability diagram
    evaluate.stage = stage
    return {
        "model": str(model_file), "test_pairs": n, "accuracy": round(correct / n, 4),
        "accuracy_fast_only": round(fast_correct / max(1, fast_n), 4),
        "accuracy_all_fast": round(all_fast_correct / n, 4),
        "escalation_rate": round(1 - fast_n / n, 4),
        "ms_per_pair_fast": round(statistics.fmean(fast_ms), 3) if fast_ms else None,
        "ms_p95_fast": round(sorted(fast_ms)[int(0.95 * (len(fast_ms) - 1))], 3) if fast_ms else None,
        "cpu_ms_per_estimate": round(1000 * cpu / max(1, n), 3), "ece": round(ece(masses), 4),
        "u_threshold": round(stage.u_threshold, 4), "paths": paths, "escalation_sweep": escalation_sweep(records),
        "trained_on": stage.loaded.meta.get("trained_on"),
    }


def escalation_sweep(records, shares=SWEEP) -> dict[str, float]:
    """{share escalated: accuracy of the risky mass on the rest} when the pairs with the largest u are escalated."""
    ranked = sorted(records, key=lambda r: -r[1])
    out = {}
    for share in shares:
        kept = ranked[int(round(share * len(ranked))):]
        out[f"{100 * share:g}%"] = round(sum((m >= 0.5) == y for m, _, y in kept) / max(1, len(kept)), 4)
    return out


def average_precision(y, score) -> float:
    """Average precision (scikit-learn's definition: Σ (R_n − R_{n−1}) P_n over distinct score thresholds)."""
    import numpy as np

    y, score = np.asarray(y, dtype=float), np.asarray(score, dtype=float)
    order = np.argsort(-score, kind="mergesort")
    y, score = y[order], score[order]
    last = np.r_[np.flatnonzero(np.diff(score)), len(score) - 1]  # the last row of each distinct score
    tp = np.cumsum(y)[last]
    precision, recall = tp / (last + 1), tp / max(1.0, y.sum())
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def reader_quality(reader, rows: list[dict]) -> dict:
    """The statement reader on annotated statements (build_pairs.py opp115_statements rows)."""
    import numpy as np

    from guardian_proxy.likelihood import reader as rd

    y = np.stack([rd.targets(r["anns"]) for r in rows])
    p = np.clip(np.stack([reader.probs(r["text"]) for r in rows]).astype(float), 1e-6, 1 - 1e-6)
    aps = {k: average_precision(y[:, j], p[:, j]) for j, k in enumerate(rd.OUTPUTS) if y[:, j].sum() >= 3}
    loss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    return {"statements": len(rows), "mean_average_precision": round(float(np.mean(list(aps.values()))), 4),
            "log_loss": round(float(loss), 4), "average_precision": {k: round(v, 3) for k, v in aps.items()}}


def duplicate_agreement(rows: list[dict]) -> dict:
    """How alike the annotators mark one sentence's text in different policies (see the module docstring)."""
    import re
    from collections import defaultdict

    from guardian_proxy.likelihood import reader as rd

    copies: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        copies[re.sub(r"\W+", " ", r["text"].lower()).strip()].append(r)
    groups = [g for g in copies.values() if len({r["policy"] for r in g}) > 1]
    facts = ["any", *(f"named:{c}" for c in rd.READ_CATS)]
    marked = alike = 0
    any_marked = any_alike = 0
    for g in groups:
        ys = [rd.targets(r["anns"]) for r in g]
        for k in facts:
            on = [bool(y[rd.INDEX[k]]) for y in ys]
            if any(on):
                marked += 1
                alike += all(on)
                if k == "any":
                    any_marked += 1
                    any_alike += all(on)
    return {"texts_in_several_policies": len(groups), "annotated_somewhere": any_marked,
            "annotated_in_every_copy": round(any_alike / max(1, any_marked), 3),
            "category_named_in_every_copy": round((alike - any_alike) / max(1, marked - any_marked), 3)}


def bins(masses, k: int = 10) -> list[tuple[float, float, int]]:
    """(mean risky mass, share labelled risky, count) per equal-width bin of the risky mass."""
    out = []
    for b in range(k):
        sel = [(m, y) for m, y, _ in masses if min(int(m * k), k - 1) == b]
        if sel:
            out.append((sum(m for m, _ in sel) / len(sel), sum(y for _, y in sel) / len(sel), len(sel)))
    return out


def ece(masses) -> float:
    n = max(1, len(masses))
    return sum(c / n * abs(m - y) for m, y, c in bins(masses))


def reliability_svg(masses, title: str) -> str:
    """A reliability diagram: per bin, the share of pairs the annotators label risky against the mean risky
    mass (dots, area ∝ pairs), the diagonal, and a histogram of the risky mass below."""
    w, h, pad, hist_h = 420, 470, 50, 70
    side = w - 2 * pad

    def xy(x: float, y: float) -> tuple[float, float]:
        return pad + x * side, pad + (1 - y) * side

    bs = bins(masses)
    fast = [(m, y, f) for m, y, f in masses if f]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
             f'font-size="11"><rect width="{w}" height="{h}" fill="white"/>',
             f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="13">{title}</text>',
             f'<rect x="{pad}" y="{pad}" width="{side}" height="{side}" fill="none" stroke="#444"/>']
    for t in range(0, 11, 2):
        x0, y0 = xy(t / 10, 0)
        x1, y1 = xy(0, t / 10)
        parts += [f'<text x="{x0}" y="{y0 + 14}" text-anchor="middle">{t / 10:.1f}</text>',
                  f'<text x="{x1 - 6}" y="{y1 + 4}" text-anchor="end">{t / 10:.1f}</text>',
                  f'<line x1="{pad}" y1="{y1}" x2="{pad + side}" y2="{y1}" stroke="#eee"/>']
    (ax, ay), (bx, by) = xy(0, 0), xy(1, 1)
    parts.append(f'<line x1="{ax}" y1="{ay}" x2="{bx}" y2="{by}" stroke="#999" stroke-dasharray="4 3"/>')
    pts = [xy(m, y) for m, y, _ in bs]
    parts.append('<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="'
                 + " ".join(f"{x:.1f},{y:.1f}" for x, y in pts) + '"/>')
    top = max(c for _, _, c in bs) if bs else 1
    for (m, y, c), (x, yy) in zip(bs, pts, strict=True):
        parts.append(f'<circle cx="{x:.1f}" cy="{yy:.1f}" r="{2 + 6 * (c / top) ** 0.5:.1f}" fill="#1f77b4" '
                     f'fill-opacity="0.7"><title>mass {m:.2f}: {y:.2f} risky of {c}</title></circle>')
    base = pad + side + 30
    for b in range(10):
        c = sum(1 for m, _, _ in masses if min(int(m * 10), 9) == b)
        cf = sum(1 for m, _, _ in fast if min(int(m * 10), 9) == b)
        hh = hist_h * c / max(1, len(masses)) * 2
        hf = hist_h * cf / max(1, len(masses)) * 2
        x = pad + b * side / 10
        parts += [f'<rect x="{x + 2:.1f}" y="{base + hist_h - hh:.1f}" width="{side / 10 - 4:.1f}" height="{hh:.1f}" '
                  f'fill="#ccc"/>',
                  f'<rect x="{x + 2:.1f}" y="{base + hist_h - hf:.1f}" width="{side / 10 - 4:.1f}" height="{hf:.1f}" '
                  f'fill="#1f77b4" fill-opacity="0.5"/>']
    parts += [f'<text x="{w / 2}" y="{pad + side + 26}" text-anchor="middle">risky mass m = α_risky / S</text>',
              f'<text x="14" y="{pad + side / 2}" transform="rotate(-90 14 {pad + side / 2})" '
              f'text-anchor="middle">share labelled risky by the annotators</text>',
              f'<text x="{pad}" y="{h - 4}">pairs per bin (grey: all {len(masses)}, blue: fast path {len(fast)}); '
              f'ECE {ece(masses):.3f}</text>', "</svg>"]
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=Path, default=ROOT / "guardian_proxy" / "models" / "opp115.local.pairs.jsonl")
    ap.add_argument("--model", type=Path, default=ROOT / "guardian_proxy" / "models" / "opp115.local.pt")
    ap.add_argument("--shipped", type=Path, default=ROOT / "guardian_proxy" / "models" / "likelihood.pt")
    ap.add_argument("--shipped-pairs", type=Path, default=ROOT / "guardian_proxy" / "models" / "opp115-text.local.pairs.jsonl",
                    help="pairs for the shipped model: statement fields read from the text, as at run time")
    ap.add_argument("--llm-backend", default="none", choices=("none", "llama_cpp", "transformers"))
    ap.add_argument("--llm-model", default=None)
    ap.add_argument("--limit", type=int, default=0, help="evaluate only the first N test pairs")
    ap.add_argument("--calibration", type=Path, default=None, help="write the reliability diagram (SVG) here")
    ap.add_argument("--statements", type=Path, default=None,
                    help="statements with gold annotations (build_pairs.py --statements-out): score the reader and "
                         "the annotators' consistency on repeated sentences")
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    backend = None
    if args.llm_backend != "none":
        from guardian_proxy.config import LLMSettings
        from guardian_proxy.llm import make_backend

        backend = make_backend(LLMSettings(backend=args.llm_backend, model_path=args.llm_model))
        backend.load()
    pairs = read_pairs(args.pairs)
    test = [p for p in pairs if p.split == "test"]
    if args.limit:
        test = test[: args.limit]
    main_res = evaluate(args.model, test, backend)
    out = {"pairs": len(pairs), **{k: v for k, v in main_res.items() if k != "model"}, "model": main_res["model"]}
    if args.calibration:
        args.calibration.parent.mkdir(parents=True, exist_ok=True)
        args.calibration.write_text(reliability_svg(evaluate.masses, f"{args.model.name} on OPP-115 test pairs "
                                                    f"({len(test)})"), encoding="utf-8")
    if args.statements:
        rows = [json.loads(line) for line in args.statements.read_text(encoding="utf-8").splitlines() if line.strip()]
        reader = evaluate.stage.loaded.spec.reader
        if reader is not None:
            out["reader"] = reader_quality(reader, [r for r in rows if r.get("split") == "test"])
        out["duplicate_sentences"] = duplicate_agreement(rows)
    if args.shipped.is_file() and args.shipped.resolve() != args.model.resolve():
        sp = args.shipped_pairs if args.shipped_pairs.is_file() else args.pairs
        stest = [p for p in read_pairs(sp) if p.split == "test"][: args.limit or None]
        out["shipped"] = {"pairs_file": sp.name, **evaluate(args.shipped, stest, backend)}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()

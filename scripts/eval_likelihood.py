#!/usr/bin/env python3
"""Evaluate the likelihood stage on the OPP-115 test split (policies whose id is divisible by 5).

    eval_likelihood.py [--pairs models/opp115.local.pairs.jsonl] [--model models/opp115.local.pt]
                       [--shipped models/likelihood.pt] [--llm-backend none|llama_cpp|transformers --llm-model PATH]

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


def evaluate(model_file: Path, test, backend=None) -> dict:
    from guardian_proxy.likelihood.router import EvidentialLikelihood

    stage = EvidentialLikelihood(model_file, backend=backend)
    n = len(test)
    correct = fast_correct = fast_n = all_fast_correct = 0
    fast_ms: list[float] = []
    paths: dict[str, int] = {}
    for p in test:
        t0 = time.perf_counter()
        lk = stage.estimate(p.action, p.evidence)
        ms = (time.perf_counter() - t0) * 1000
        paths[lk.path] = paths.get(lk.path, 0) + 1
        ok = int(lk.value >= 0.5) == p.label
        correct += ok
        if lk.risky_mass is not None:
            all_fast_correct += int(lk.risky_mass >= 0.5) == p.label
        if lk.path == "fast":
            fast_n += 1
            fast_correct += ok
            fast_ms.append(ms)
    return {
        "model": str(model_file), "test_pairs": n, "accuracy": round(correct / n, 4),
        "accuracy_fast_only": round(fast_correct / max(1, fast_n), 4),
        "accuracy_all_fast": round(all_fast_correct / n, 4),
        "escalation_rate": round(1 - fast_n / n, 4),
        "ms_per_pair_fast": round(statistics.fmean(fast_ms), 3) if fast_ms else None,
        "ms_p95_fast": round(sorted(fast_ms)[int(0.95 * (len(fast_ms) - 1))], 3) if fast_ms else None,
        "u_threshold": round(stage.u_threshold, 4), "paths": paths,
        "trained_on": stage.loaded.meta.get("trained_on"),
    }


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=Path, default=ROOT / "models" / "opp115.local.pairs.jsonl")
    ap.add_argument("--model", type=Path, default=ROOT / "models" / "opp115.local.pt")
    ap.add_argument("--shipped", type=Path, default=ROOT / "models" / "likelihood.pt")
    ap.add_argument("--shipped-pairs", type=Path, default=ROOT / "models" / "opp115-text.local.pairs.jsonl",
                    help="pairs for the shipped model: statement fields read from the text, as at run time")
    ap.add_argument("--llm-backend", default="none", choices=("none", "llama_cpp", "transformers"))
    ap.add_argument("--llm-model", default=None)
    ap.add_argument("--limit", type=int, default=0, help="evaluate only the first N test pairs")
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
    if args.shipped.is_file() and args.shipped.resolve() != args.model.resolve():
        sp = args.shipped_pairs if args.shipped_pairs.is_file() else args.pairs
        stest = [p for p in read_pairs(sp) if p.split == "test"][: args.limit or None]
        out["shipped"] = {"pairs_file": sp.name, **evaluate(args.shipped, stest, backend)}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()

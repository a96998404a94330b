#!/usr/bin/env python3
"""Train the evidential likelihood classifier on labelled pairs (scripts/build_pairs.py).

    train_likelihood.py --pairs models/opp115.local.pairs.jsonl --out models/opp115.local.pt
    train_likelihood.py --pairs models/seed.local.pairs.jsonl --out models/likelihood.pt   # shipped model

Only pairs with split "train" are used. The u threshold is chosen on the training split: 5-fold
out-of-fold predictions (folds grouped by policy), the threshold with the best fast-path accuracy that
escalates at most --max-escalation of the pairs. The final model is then trained on the whole training
split and saved with that threshold. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from guardian_proxy.likelihood import checkpoint  # noqa: E402
from guardian_proxy.likelihood.features import FeatureSpec, featurize_many  # noqa: E402
from guardian_proxy.likelihood.pairs import read_pairs  # noqa: E402
from guardian_proxy.likelihood.training import TrainConfig, choose_threshold, cross_fit, fit  # noqa: E402


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=Path, nargs="+", required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--hash-bits", type=int, default=0, help="hashed n-gram block (0 = off: it overfits here)")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--dropout", type=float, default=0.2)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--weight-decay", type=float, default=1e-4)
    ap.add_argument("--anneal-epochs", type=int, default=10)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--max-escalation", type=float, default=0.03)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(1)  # a small network: threads only add contention
    pairs = [p for path in args.pairs for p in read_pairs(path) if p.split == "train"]
    if not pairs:
        sys.exit("no training pairs")
    spec = FeatureSpec(hash_bits=args.hash_bits)
    t0 = time.perf_counter()
    x = featurize_many(((p.action, p.evidence) for p in pairs), spec)
    y = np.array([p.label for p in pairs])
    groups = np.array([f"{p.source}:{p.policy}" for p in pairs])
    t_feat = time.perf_counter() - t0
    cfg = TrainConfig(hidden=args.hidden, dropout=args.dropout, epochs=args.epochs, lr=args.lr,
                      weight_decay=args.weight_decay, anneal_epochs=args.anneal_epochs, seed=args.seed)
    t0 = time.perf_counter()
    mass, u = cross_fit(x, y, groups, cfg, folds=args.folds, layout=spec.layout())
    choice = choose_threshold(mass, u, y, args.max_escalation)
    model = fit(x, y, cfg, spec.layout())
    t_train = time.perf_counter() - t0
    meta = {
        "trained_on": sorted({p.source for p in pairs}), "pairs": len(pairs), "risky_share": float(y.mean()),
        "policies": len(set(groups.tolist())), "train": cfg.as_dict(), "max_escalation": args.max_escalation,
        "oof_accuracy": float(((mass >= 0.5).astype(int) == y).mean()), "oof_threshold": choice,
        "pairs_files": [p.name for p in args.pairs],
    }
    checkpoint.save(args.out, model, spec, choice["u_threshold"], meta)
    report = {"out": str(args.out), "dim": spec.dim, "feature_s": round(t_feat, 2), "train_s": round(t_train, 2),
              **{k: meta[k] for k in ("pairs", "policies", "risky_share", "oof_accuracy", "oof_threshold")}}
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    main()

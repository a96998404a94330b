#!/usr/bin/env python3
"""Train the evidential likelihood classifier on labelled pairs (scripts/build_pairs.py).

    train_likelihood.py --pairs guardian_proxy/models/opp115.local.pairs.jsonl --out guardian_proxy/models/opp115.local.pt
    train_likelihood.py --pairs guardian_proxy/models/opp115-text.local.pairs.jsonl \
        --statements guardian_proxy/models/opp115-statements.local.jsonl --out guardian_proxy/models/likelihood.pt    # shipped model

With --statements (scripts/build_pairs.py opp115 --statements-out) a statement reader (reader.py) is trained
on the training policies' statements and its probabilities join the features. It is stacked without
leakage: for the pairs of each fold the reader's probabilities come from a reader trained on the other
folds' policies, and the classifier is trained on those out-of-fold readings (the shipped reader is then
trained on every training statement), so the classifier learns how far the reader can be trusted on
policies it has not read.

Writes --out (a torch checkpoint, .pt) and its numpy twin beside it (.npz, what the proxy loads: the workers run
the network in numpy and import no torch; likelihood/checkpoint.py). torch is needed here, for training only.
`--export-npz PT` writes the .npz of an existing .pt and exits.

Only pairs with split "train" are used. The u threshold is chosen on the training split: 5-fold
out-of-fold predictions (folds grouped by policy), the threshold with the best fast-path accuracy that
escalates at most --max-escalation of the pairs (of --pairs, not --fill-pairs). The final model is then trained on the whole training
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
from guardian_proxy.likelihood.training import TrainConfig, choose_threshold, cross_fit, fit, fold_of  # noqa: E402


def stacked_features(pairs, groups: np.ndarray, args):
    """(spec with the final reader, out-of-fold features, reader meta); see the module docstring."""
    from guardian_proxy.likelihood import reader as rd
    rows = [json.loads(line) for line in args.statements.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r.get("split", "train") == "train"]
    fo = fold_of(groups, args.folds)
    st_fold = [fo.get(f"opp115:{r['policy']}", -1) for r in rows]
    texts = [r["text"] for r in rows]
    ys = np.stack([rd.targets(r["anns"]) for r in rows])
    pair_fold = np.array([fo[g] for g in groups.tolist()])
    x = None
    for k in range(args.folds):
        keep = [i for i, f in enumerate(st_fold) if f != k]
        reader_k = rd.train([texts[i] for i in keep], ys[keep], bits=args.reader_bits, epochs=args.reader_epochs,
                            seed=args.seed, chars=args.reader_chars)
        spec_k = FeatureSpec(hash_bits=args.hash_bits, reader=reader_k)
        idx = np.flatnonzero(pair_fold == k)
        xk = featurize_many(((pairs[i].action, pairs[i].evidence) for i in idx), spec_k)
        if x is None:
            x = np.zeros((len(pairs), spec_k.dim), dtype=np.float32)
        x[idx] = xk
    final = rd.train(texts, ys, bits=args.reader_bits, epochs=args.reader_epochs, seed=args.seed, chars=args.reader_chars)
    meta = {"statements": len(rows), "annotated": int((ys[:, rd.INDEX["any"]] > 0).sum()), "bits": args.reader_bits,
            "epochs": args.reader_epochs, "chars": args.reader_chars, "file": args.statements.name}
    return FeatureSpec(hash_bits=args.hash_bits, reader=final), x, meta


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=Path, nargs="+")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--export-npz", type=Path, default=None, metavar="PT",
                    help="write the .npz twin of an existing .pt checkpoint and exit")
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
    ap.add_argument("--statements", type=Path, default=None, help="statements with gold annotations: train a reader")
    ap.add_argument("--reader-bits", type=int, default=15)
    ap.add_argument("--reader-epochs", type=int, default=8)
    ap.add_argument("--reader-chars", action="store_true",
                    help="the reader also reads character 2-5-grams inside words (reader log-loss on a validation fold "
                         "of the training policies 0.0867 -> 0.0828, but test pairs 0.834 -> 0.833 at twice the CPU: off)")
    ap.add_argument("--fill-pairs", type=Path, nargs="*", default=[],
                    help="pairs added only where their action uses a category, recipient or purpose that no "
                         "--pairs action has (OPP-115 knows no credentials, data brokers, AI services, unknown purpose)")
    args = ap.parse_args(argv)
    if args.export_npz:
        out = checkpoint.export_npz(args.export_npz)
        report = {"out": str(out), "from": str(args.export_npz)}
        print(json.dumps(report))
        return report
    if not (args.pairs and args.out):
        ap.error("--pairs and --out are required (or --export-npz PT)")

    import torch

    torch.set_num_threads(1)  # a small network: threads only add contention
    pairs = [p for path in args.pairs for p in read_pairs(path) if p.split == "train"]
    if not pairs:
        sys.exit("no training pairs")
    seen = {v for p in pairs for v in (*p.action.categories, p.action.recipient, *p.action.purposes)}
    fill = [p for path in args.fill_pairs for p in read_pairs(path) if p.split == "train" and p.evidence.statements
            and not {*p.action.categories, p.action.recipient, *p.action.purposes} <= seen]
    pairs += fill
    y = np.array([p.label for p in pairs])
    groups = np.array([f"{p.source}:{p.policy}" for p in pairs])
    t0 = time.perf_counter()
    reader_meta = None
    if args.statements:
        spec, x, reader_meta = stacked_features(pairs, groups, args)
    else:
        spec = FeatureSpec(hash_bits=args.hash_bits)
        x = featurize_many(((p.action, p.evidence) for p in pairs), spec)
    t_feat = time.perf_counter() - t0
    cfg = TrainConfig(hidden=args.hidden, dropout=args.dropout, epochs=args.epochs, lr=args.lr,
                      weight_decay=args.weight_decay, anneal_epochs=args.anneal_epochs, seed=args.seed)
    t0 = time.perf_counter()
    mass, u = cross_fit(x, y, groups, cfg, folds=args.folds, layout=spec.layout())
    own = np.arange(len(pairs)) < len(pairs) - len(fill)  # the threshold is chosen on the --pairs data only
    choice = choose_threshold(mass[own], u[own], y[own], args.max_escalation)
    model = fit(x, y, cfg, spec.layout())
    t_train = time.perf_counter() - t0
    meta = {
        "trained_on": sorted({p.source for p in pairs}), "pairs": len(pairs), "risky_share": float(y.mean()),
        "policies": len(set(groups.tolist())), "train": cfg.as_dict(), "max_escalation": args.max_escalation,
        "oof_accuracy": float(((mass[own] >= 0.5).astype(int) == y[own]).mean()), "oof_threshold": choice,
        "pairs_files": [p.name for p in args.pairs + args.fill_pairs], "fill_pairs": len(fill), "reader": reader_meta,
    }
    checkpoint.save(args.out, model, spec, choice["u_threshold"], meta)
    report = {"out": str(args.out), "npz": str(checkpoint.npz_path(args.out)), "fill_pairs": len(fill), "dim": spec.dim, "feature_s": round(t_feat, 2), "train_s": round(t_train, 2),
              **{k: meta[k] for k in ("pairs", "policies", "risky_share", "oof_accuracy", "oof_threshold")}}
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    main()

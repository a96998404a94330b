"""Train the session's message reader (guardian_proxy/session/message_reader.py) on the labelled prompt sets.

Each prompt of tests/fixtures/prompts/ (scripts/bench_prompts.py CORPORA) is one message; its label is whether
it holds someone's data (its `personal` values), whatever its kind (a code question may name a colleague). Sets not yet scored (bench_prompts
UNSCORED) and those named by --hold-out are left out, so that they stay a fair test. The threshold is chosen out of
fold, leaving one set out at a time: the largest at which at most --max-missed (default 0.5 %) of the messages that
hold someone's data read as questions about the world. Prints the out-of-fold numbers, then, for each held-out
set, how its messages read; the last line is one JSON object. Seeded: a retrain gives the same file.

    .venv/bin/python scripts/train_message_reader.py                      # guardian_proxy/models/message_reader.npz
    .venv/bin/python scripts/train_message_reader.py --hold-out holdout26,holdout27 --out /tmp/r.npz
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_prompts as BP  # noqa: E402

from guardian_proxy.hashing import signed_buckets  # noqa: E402
from guardian_proxy.resources import models_dir  # noqa: E402
from guardian_proxy.session.message_reader import FILE, MessageReader, grams  # noqa: E402


def matrix(texts: list[str], bits: int) -> csr_matrix:
    rows, cols, vals = [], [], []
    for i, t in enumerate(texts):
        ids, w = signed_buckets(grams(t), bits)
        rows += [i] * len(ids)
        cols += ids.tolist()
        vals += w.tolist()
    return csr_matrix((vals, (rows, cols)), shape=(len(texts), 1 << bits), dtype=np.float64)


def fit(x, y: np.ndarray, c: float) -> LogisticRegression:
    return LogisticRegression(C=c, max_iter=5000, class_weight="balanced", random_state=0).fit(x, y)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=models_dir() / FILE)
    ap.add_argument("--hold-out", default="", help="comma-separated sets left out of training (scored at the end)")
    ap.add_argument("--bits", type=int, default=16)
    ap.add_argument("--c", type=float, default=8.0, help="inverse L2 strength (default 8)")
    ap.add_argument("--max-missed", type=float, default=0.005,
                    help="share of the messages holding someone's data that may read as questions (default 0.005)")
    args = ap.parse_args(argv)

    held = {s for s in args.hold_out.split(",") if s} | set(BP.UNSCORED)
    unknown = held - set(BP.CORPORA)
    if unknown:
        ap.error(f"unknown sets: {', '.join(sorted(unknown))}")
    train = [s for s in BP.CORPORA if s not in held]
    msgs = [(s, c["text"], bool(c.get("personal"))) for s in train for c in BP.load(s)]
    sets = np.array([m[0] for m in msgs])
    y = np.array([m[2] for m in msgs])
    x = matrix([m[1] for m in msgs], args.bits)

    oof = np.zeros(len(msgs))
    for s in train:
        part = sets == s
        oof[part] = fit(x[~part], y[~part], args.c).predict_proba(x[part])[:, 1]
    allowed = int(args.max_missed * y.sum())
    grid = np.round(np.arange(0.01, 0.9, 0.01), 2)
    threshold = float(max((t for t in grid if ((oof < t) & y).sum() <= allowed), default=0.01))
    clf = fit(x, y, args.c)
    reader = MessageReader(clf.coef_[0].astype(np.float32), float(clf.intercept_[0]), args.bits, threshold)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    reader.save(args.out, sets=",".join(train), c=np.float32(args.c), messages=np.int32(len(msgs)))

    missed = int(((oof < threshold) & y).sum())
    read = int(((oof < threshold) & ~y).sum())
    print(f"message reader: {len(msgs)} messages of {len(train)} sets ({int(y.sum())} hold someone's data), "
          f"{args.bits} bits, C {args.c:g}")
    print(f"threshold {threshold:.2f} (out of fold, one set left out at a time): {read} / {int((~y).sum())} "
          f"messages without anyone's data read as questions about the world; {missed} / {int(y.sum())} with "
          "someone's data do")
    held_out = {}
    for s in sorted(held, key=list(BP.CORPORA).index):
        cases = BP.load(s)
        p = np.array([reader.private(c["text"]) for c in cases])
        yy = np.array([bool(c.get("personal")) for c in cases])
        held_out[s] = {"without_data_read_as_questions": int(((p < threshold) & ~yy).sum()),
                       "without_data": int((~yy).sum()),
                       "with_data_read_as_questions": int(((p < threshold) & yy).sum()), "with_data": int(yy.sum())}
        print(f"{s}: {held_out[s]['without_data_read_as_questions']} / {held_out[s]['without_data']} without anyone's "
              f"data read as questions; {held_out[s]['with_data_read_as_questions']} / {held_out[s]['with_data']} "
              "with someone's data do")
    print(json.dumps({"out": str(args.out), "messages": len(msgs), "threshold": threshold, "oof_missed": missed,
                      "oof_read": read, "held_out": held_out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Train the agent record model (guardian_proxy/agents/records.py) on PrivacyLens trajectories.

What it learns is what the benchmark scores, item by item (scripts/privacylens.py): a record is *positive* when
it lets out one of the item's `sensitive_info_items` on its own (the benchmark's judge finds the item in the
record's text), *negative* when it is no source of one (its sentences are the shareable items N_s). A record
that is a source by the word-overlap rule but lets out no item on its own (it shares vocabulary with one: a
note on therapy methods beside the session note) is left out of the fit, and so is a record the norms table lets
through whatever the model says (the user's own information to family, a schedule to a coworker); it still counts among its step's
records in the context features. Each record is weighted by its share of its item's score: a positive by the
share of the item's sensitive items it lets out, a negative by the share of the item's shareable sentences it
holds, so each item weighs the same and a long shareable note weighs more than a one-line greeting, as in the
macro-averaged PP and HS.

Stage 1 (TF-IDF logistic regression on record texts) is fitted on all training items; stage 2 (context
logistic regression) is fitted on stage-1 logits predicted out of fold (grouped by item), so it learns from
scores like the ones it sees at run time, and on the records' similarities to the instruction and to the step's
other records in the final stage-1 TF-IDF space (`records.similarities`, no labels involved). The threshold is chosen on the training items only: stage 2 is
predicted out of fold too, and the threshold is the highest one at which those predictions keep the
benchmark's PP (per item, from the records each decision lets out) at or above `--pp-target`. Needs
scikit-learn (dev extra).

    .venv/bin/python scripts/train_record_model.py            # writes guardian_proxy/data/agent_records.json.gz

scripts/eval_agents.py calls `fit` per cross-validation fold, so the benchmark never scores a model on
the items it was trained on, nor chooses its threshold on them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import privacylens as PL  # noqa: E402

from guardian_proxy.agents import default_norms  # noqa: E402
from guardian_proxy.agents.instructor import flagged_types  # noqa: E402
from guardian_proxy.agents.items import content_words  # noqa: E402
from guardian_proxy.agents.norms import Norms  # noqa: E402
from guardian_proxy.agents.records import (  # noqa: E402
    MODEL_FILE,
    N_CONTEXT,
    RecordModel,
    classify_records,
    context_features,
    norms_flags,
)

C_TEXT = 4.0
PP_TARGET = 0.9
THRESHOLDS = tuple(round(x, 2) for x in np.arange(0.05, 0.96, 0.01))


def dataset(items: list[dict], norms: Norms) -> list[dict]:
    """One row per item: its record texts, labels, fit weights, what each record lets out, the user's instruction
    and the norms flags."""
    rows = []
    for item in items:
        recs = PL.records(item)
        if not recs:
            continue
        bad = PL.non_shareable(item, recs)
        sensitive = item["trajectory"]["sensitive_info_items"]
        instruction = item["trajectory"]["user_instruction"]
        texts = [r.text for r in recs]
        leaks = [{k for k, s in enumerate(sensitive) if PL.shared([s], r.text)} for r in recs]
        shares = [0 if r.key in bad else sum(1 for i in r.items if len(content_words(i.text)) >= PL.MIN_WORDS)
                  for r in recs]
        n_u, n_s = len(sensitive), sum(shares)
        weights = [len(lk) / n_u if lk else (0.0 if r.key in bad else (ns / n_s if n_s else 0.0))
                   for r, lk, ns in zip(recs, leaks, shares, strict=True)]
        rel = norms.relationship(instruction, item["trajectory"]["final_action"])
        classified = classify_records(norms, texts)
        # what the norms let through even when the model flags it (the user's own information to family, a
        # schedule to a coworker): the model's score does not decide it, so it is not fitted
        released = [not flagged_types(norms, c, rel) for c in classified]
        rows.append({"texts": texts, "labels": [int(bool(lk)) for lk in leaks],
                     "weights": [0.0 if rl else w for w, rl in zip(weights, released, strict=True)], "leaks": leaks,
                     "released": released, "shares": shares, "n_sensitive": n_u, "instruction": instruction,
                     "flags": norms_flags(norms, classified, rel)})
    return rows


def item_pp(rows: list[dict], probs: np.ndarray, threshold: float) -> float:
    """The benchmark's PP, macro-averaged by item, when the records at or above `threshold` are withheld (unless
    the norms release them) and the others let out what they hold."""
    pps, k = [], 0
    for r in rows:
        n = len(r["texts"])
        out = set().union(*(lk for lk, p, rl in zip(r["leaks"], probs[k:k + n], r["released"], strict=True)
                            if p < threshold or rl))
        pps.append(1 - len(out) / r["n_sensitive"] if r["n_sensitive"] else 1.0)
        k += n
    return float(np.mean(pps)) if pps else 1.0


def _text_model(texts: list[str], labels: list[int], weights: list[float], c: float):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, lowercase=True)
    x = vec.fit_transform(texts)
    clf = LogisticRegression(C=c, max_iter=3000, class_weight="balanced").fit(x, labels, sample_weight=weights)
    return vec, clf


def _context_model(x, labels, weights):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=3000, class_weight="balanced").fit(x, labels, sample_weight=weights)


def fit(rows: list[dict], c: float = C_TEXT, pp_target: float = PP_TARGET, folds: int = 5, seed: int = 0
        ) -> RecordModel:
    from sklearn.model_selection import GroupKFold

    texts = [t for r in rows for t in r["texts"]]
    labels = np.array([y for r in rows for y in r["labels"]])
    weights = np.array([w for r in rows for w in r["weights"]])
    groups = np.array([g for g, r in enumerate(rows) for _ in r["texts"]])
    fitted = weights > 0  # records that let out no item yet are a source of one are left out of the fit
    split = list(GroupKFold(min(folds, len(rows))).split(texts, labels, groups))
    oof = np.zeros(len(texts))
    for tr, te in split:
        tr = tr[fitted[tr]]
        vec, clf = _text_model([texts[i] for i in tr], labels[tr], weights[tr], c)
        oof[te] = clf.decision_function(vec.transform([texts[i] for i in te]))
    # the similarities (to the instruction, to the step's other records) in the final stage-1 TF-IDF space, the one
    # the shipped model computes them in at run time
    vec, clf = _text_model([t for t, f in zip(texts, fitted, strict=True) if f], labels[fitted], weights[fitted], c)
    model = RecordModel({
        "vocabulary": {term: int(j) for term, j in vec.vocabulary_.items()}, "idf": [float(x) for x in vec.idf_],
        "coef": [float(x) for x in clf.coef_[0]], "intercept": float(clf.intercept_[0]),
        "context_coef": [0.0] * N_CONTEXT, "context_intercept": 0.0, "threshold": 0.5})
    ctx, k = [], 0
    for r in rows:
        n = len(r["texts"])
        ctx += context_features(list(oof[k:k + n]), r["texts"], r["instruction"], r["flags"],
                                model.similarities(r["texts"], r["instruction"]))
        k += n
    ctx = np.array(ctx)
    # the threshold: stage 2 predicted out of fold on the training items
    probs = np.zeros(len(texts))
    for tr, te in split:
        tr = tr[fitted[tr]]
        probs[te] = _context_model(ctx[tr], labels[tr], weights[tr]).predict_proba(ctx[te])[:, 1]
    ok = [th for th in THRESHOLDS if item_pp(rows, probs, th) >= pp_target]
    threshold = max(ok) if ok else THRESHOLDS[0]
    stage2 = _context_model(ctx[fitted], labels[fitted], weights[fitted])
    return RecordModel({
        **model.to_dict(), "context_coef": [float(x) for x in stage2.coef_[0]],
        "context_intercept": float(stage2.intercept_[0]), "threshold": threshold,
        "meta": {"trained_on": "PrivacyLens main_data.json (MIT)", "items": len(rows), "records": len(texts),
                 "positives": int(labels.sum()), "fitted": int(fitted.sum()), "C": c, "seed": seed,
                 "pp_target": pp_target, "threshold_pp_on_training_folds": round(item_pp(rows, probs, threshold), 4)}})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=PL.DATA)
    ap.add_argument("--out", type=Path, default=MODEL_FILE)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--pp-target", type=float, default=PP_TARGET,
                    help="the threshold is the highest that keeps PP (out of fold, training items) at or above this")
    args = ap.parse_args()
    rows = dataset(PL.load(args.data, args.limit), default_norms())
    model = fit(rows, pp_target=args.pp_target)
    model.save(args.out)
    print(f"{model.meta['items']} items, {model.meta['records']} records ({model.meta['positives']} positive, "
          f"{model.meta['fitted']} fitted), {len(model.vocab)} terms, threshold {model.threshold} "
          f"(PP {model.meta['threshold_pp_on_training_folds']} out of fold) -> {args.out} "
          f"({args.out.stat().st_size / 1024:.0f} KB)")


if __name__ == "__main__":
    main()

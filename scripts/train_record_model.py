"""Train the agent record model (guardian_proxy/agents/records.py) on PrivacyLens trajectories.

Labels come from scripts/privacylens.py: a record is positive when it is a source of one of the item's
`sensitive_info_items`. Stage 1 (TF-IDF logistic regression on record texts) is fitted on all training
items; stage 2 (context logistic regression) is fitted on stage-1 logits predicted out of fold (grouped
by item), so it learns from scores like the ones it sees at run time. Needs scikit-learn (dev extra).

    .venv/bin/python scripts/train_record_model.py            # writes guardian_proxy/data/agent_records.json.gz

scripts/eval_agents.py calls `fit` per cross-validation fold, so the benchmark never scores a model on
the items it was trained on.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import privacylens as PL  # noqa: E402

from guardian_proxy.agents import default_norms  # noqa: E402
from guardian_proxy.agents.norms import Norms  # noqa: E402
from guardian_proxy.agents.records import (  # noqa: E402
    MODEL_FILE,
    RecordModel,
    classify_records,
    context_features,
    norms_flags,
)

C_TEXT = 4.0
THRESHOLD = 0.6


def dataset(items: list[dict], norms: Norms) -> list[dict]:
    """One row per item: its record texts, labels, the user's instruction and the norms flags."""
    rows = []
    for item in items:
        recs = PL.records(item)
        if not recs:
            continue
        bad = PL.non_shareable(item, recs)
        instruction = item["trajectory"]["user_instruction"]
        texts = [r.text for r in recs]
        rel = norms.relationship(instruction)
        rows.append({"texts": texts, "labels": [int(r.key in bad) for r in recs], "instruction": instruction,
                     "flags": norms_flags(norms, classify_records(norms, texts), rel)})
    return rows


def _text_model(texts: list[str], labels: list[int], c: float):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, lowercase=True)
    x = vec.fit_transform(texts)
    clf = LogisticRegression(C=c, max_iter=3000, class_weight="balanced").fit(x, labels)
    return vec, clf


def fit(rows: list[dict], c: float = C_TEXT, threshold: float = THRESHOLD, folds: int = 5, seed: int = 0
        ) -> RecordModel:
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    texts = [t for r in rows for t in r["texts"]]
    labels = [y for r in rows for y in r["labels"]]
    groups = [g for g, r in enumerate(rows) for _ in r["texts"]]
    oof = np.zeros(len(texts))
    for tr, te in GroupKFold(folds).split(texts, labels, groups):
        vec, clf = _text_model([texts[i] for i in tr], [labels[i] for i in tr], c)
        oof[te] = clf.decision_function(vec.transform([texts[i] for i in te]))
    ctx, k = [], 0
    for r in rows:
        n = len(r["texts"])
        ctx += context_features(list(oof[k:k + n]), r["texts"], r["instruction"], r["flags"])
        k += n
    stage2 = LogisticRegression(max_iter=3000, class_weight="balanced").fit(np.array(ctx), labels)
    vec, clf = _text_model(texts, labels, c)
    vocab = {term: int(j) for term, j in vec.vocabulary_.items()}
    return RecordModel({
        "vocabulary": vocab, "idf": [float(x) for x in vec.idf_], "coef": [float(x) for x in clf.coef_[0]],
        "intercept": float(clf.intercept_[0]), "context_coef": [float(x) for x in stage2.coef_[0]],
        "context_intercept": float(stage2.intercept_[0]), "threshold": threshold,
        "meta": {"trained_on": "PrivacyLens main_data.json (MIT)", "items": len(rows), "records": len(texts),
                 "positives": int(sum(labels)), "C": c, "seed": seed}})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=PL.DATA)
    ap.add_argument("--out", type=Path, default=MODEL_FILE)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--threshold", type=float, default=THRESHOLD)
    args = ap.parse_args()
    rows = dataset(PL.load(args.data, args.limit), default_norms())
    model = fit(rows, threshold=args.threshold)
    model.save(args.out)
    print(f"{model.meta['items']} items, {model.meta['records']} records ({model.meta['positives']} positive), "
          f"{len(model.vocab)} terms -> {args.out} ({args.out.stat().st_size / 1024:.0f} KB)")


if __name__ == "__main__":
    main()

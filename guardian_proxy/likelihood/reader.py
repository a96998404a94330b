"""The statement reader: a policy statement's text → what OPP-115's annotators would have marked in it.

A linear multi-label model over signed hashed word unigrams and bigrams (crc32, 2^bits buckets, weights
1/√n) predicts, per statement, the probability of each annotation fact the likelihood label is made of
(scripts/build_pairs.py `label_of`): which data categories it names (`named:<cat>`, "generic" for
"personal information"), which it says go to a third party (`third:<cat>`), whether it names the first
party, the public/other users, a purpose of its first-party or third-party practice (`first_purpose:<p>`,
`third_purpose:<p>`; "unspecified" = no purpose stated, which covers every purpose) and whether it is a "Does Not" statement. The evidential classifier reads these as slot
features (features.py), so its decision rests on the statement's wording, not on keyword fields alone.

Trained by scripts/train_likelihood.py on the OPP-115 training policies' statements (`--statements`);
stored inside the likelihood checkpoint (weights float16). Runtime is numpy only: one gather and sum per
statement, cached per text. The reader never sees the request: only policy text.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from ..hashing import signed_buckets

READ_CATS = ("contact", "financial", "health", "precise_location", "demographic", "device_id", "cookie",
             "behavioural", "identity", "government_id", "other", "generic")
READ_PURPOSES = ("functionality", "analytics", "advertising", "personalization", "security", "unspecified")
OUTPUTS = (tuple(f"named:{c}" for c in READ_CATS) + tuple(f"third:{c}" for c in READ_CATS)
           + ("first_party", "social", "does_not", "any") + tuple(f"first_purpose:{p}" for p in READ_PURPOSES)
           + tuple(f"third_purpose:{p}" for p in READ_PURPOSES))
INDEX = {k: i for i, k in enumerate(OUTPUTS)}
THIRD_PARTY = frozenset({"service_provider", "analytics", "ad_network", "unknown_third_party"})
_TOKEN = re.compile(r"[a-z][a-z0-9']*|\d+")


def grams(text: str) -> list[str]:
    toks = _TOKEN.findall(text.lower())
    return toks + [f"{a} {b}" for a, b in zip(toks, toks[1:], strict=False)]


def char_grams(text: str, lo: int = 2, hi: int = 5) -> set[str]:
    """Character n-grams (lo..hi) inside each word padded with spaces (scikit-learn's "char_wb"), marked with
    a leading "#" so they never share a hash with a word: "e-mail", "emails" and "email" share most of them."""
    out: set[str] = set()
    for t in set(_TOKEN.findall(text.lower())):
        s = f" {t} "
        for n in range(lo, min(hi, len(s)) + 1):
            out.update("#" + s[i: i + n] for i in range(len(s) - n + 1))
    return out


def hashed(text: str, bits: int, idf: np.ndarray | None = None, chars: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(bucket ids, signed weights) of the text's distinct word grams: ±idf of the bucket (1 without idf),
    L2-normalised; with `chars` the character n-grams are a second block, normalised alike, in the same
    buckets (each block weighs 1/√2, so the whole stays of norm ≈ 1)."""
    ids, w = signed_buckets(grams(text), bits, idf)
    if not chars:
        return ids, w
    cids, cw = signed_buckets(char_grams(text), bits, idf)
    half = np.float32(np.sqrt(0.5))
    return np.concatenate([ids, cids]), np.concatenate([w * half, cw * half])


def idf_of(texts: list[str], bits: int, chars: bool = False) -> np.ndarray:
    """Smoothed inverse document frequency per bucket: log((1 + n) / (1 + df)) + 1."""
    df = np.zeros(1 << bits, dtype=np.float64)
    for t in texts:
        ids, _ = hashed(t, bits, chars=chars)
        df[np.unique(ids)] += 1
    return (np.log((1 + len(texts)) / (1 + df)) + 1).astype(np.float32)


def targets(anns: list[dict]) -> np.ndarray:
    """The OUTPUTS of one statement from its gold annotations (scripts/build_pairs.py opp115_statements)."""
    y = np.zeros(len(OUTPUTS), dtype=np.float32)
    for a in anns:
        c = a["category"] if a["category"] in READ_CATS else "other"
        recs = set(a["recipients"])
        y[INDEX[f"named:{c}"]] = 1
        if recs & THIRD_PARTY:
            y[INDEX[f"third:{c}"]] = 1
        if "first_party" in recs:
            y[INDEX["first_party"]] = 1
        if "social" in recs:
            y[INDEX["social"]] = 1
        if not a["does"]:
            y[INDEX["does_not"]] = 1
        y[INDEX["any"]] = 1
        pur = a["purpose"] or "unspecified"
        if "first_party" in recs or "social" in recs:
            y[INDEX[f"first_purpose:{pur}"]] = 1
        if recs & THIRD_PARTY:
            y[INDEX[f"third_purpose:{pur}"]] = 1
    return y


class Reader:
    """Weights (2^bits, len(OUTPUTS)) and bias; `probs(text)` → float32 probabilities, cached per text."""

    def __init__(self, weight: np.ndarray, bias: np.ndarray, bits: int, idf: np.ndarray | None = None,
                 chars: bool = False):
        if weight.shape != (1 << bits, len(OUTPUTS)) or bias.shape != (len(OUTPUTS),):
            raise ValueError(f"reader weights {weight.shape}/{bias.shape} do not fit {bits} bits × {len(OUTPUTS)}")
        if idf is not None and idf.shape != (1 << bits,):
            raise ValueError(f"reader idf {idf.shape} does not fit {bits} bits")
        self.weight = np.ascontiguousarray(weight, dtype=np.float32)
        self.bias = np.asarray(bias, dtype=np.float32)
        self.idf = None if idf is None else np.asarray(idf, dtype=np.float32)
        self.bits, self.chars = bits, bool(chars)
        self.probs = lru_cache(maxsize=16384)(self._probs)

    def _probs(self, text: str) -> np.ndarray:
        ids, w = hashed(text, self.bits, self.idf, self.chars)
        z = self.bias + w @ self.weight[ids]
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
        p.setflags(write=False)
        return p

    def state(self) -> dict:
        return {"bits": self.bits, "outputs": list(OUTPUTS), "idf": self.idf is not None, "chars": self.chars}


class ReaderTable:
    """Fixed probabilities per text (out-of-fold predictions while training); unknown text → `fallback`."""

    def __init__(self, table: dict[str, np.ndarray], fallback: Reader | None = None):
        self.table, self.fallback = table, fallback

    def probs(self, text: str) -> np.ndarray:
        p = self.table.get(text)
        if p is None:
            if self.fallback is None:
                raise KeyError("text not in the reader table")
            return self.fallback.probs(text)
        return p


def train(texts: list[str], y: np.ndarray, bits: int = 15, epochs: int = 12, lr: float = 0.05,
          weight_decay: float = 1e-6, seed: int = 0, use_idf: bool = False, chars: bool = False) -> Reader:
    """Multi-label logistic regression (torch EmbeddingBag, Adam, seeded). idf weighting (`use_idf`) did not
    help on the held-out policies (log-loss 0.0875 vs 0.0843 without) and is off."""
    import torch

    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    idf = idf_of(texts, bits, chars) if use_idf else None
    rows = [hashed(t, bits, idf, chars) for t in texts]
    emb = torch.nn.EmbeddingBag(1 << bits, len(OUTPUTS), mode="sum")
    torch.nn.init.zeros_(emb.weight)
    prior = np.clip(y.mean(axis=0) if len(y) else np.zeros(len(OUTPUTS)), 1e-4, 1 - 1e-4)  # nothing read: all rare
    bias = torch.nn.Parameter(torch.from_numpy(np.log(prior / (1 - prior)).astype(np.float32)))
    opt = torch.optim.Adam([emb.weight, bias], lr=lr)
    yt = torch.from_numpy(y.astype(np.float32))
    loss_fn = torch.nn.BCEWithLogitsLoss()
    for _ in range(epochs):
        for idx in torch.randperm(len(rows), generator=gen).split(256):
            ids = [torch.from_numpy(rows[i][0]) for i in idx.tolist()]
            ws = [torch.from_numpy(rows[i][1]) for i in idx.tolist()]
            offsets = torch.tensor([0] + [len(t) for t in ids[:-1]]).cumsum(0)
            opt.zero_grad()
            z = emb(torch.cat(ids), offsets, per_sample_weights=torch.cat(ws)) + bias
            loss = loss_fn(z, yt[idx]) + weight_decay * (emb.weight ** 2).sum()
            loss.backward()
            opt.step()
    return Reader(emb.weight.detach().numpy().copy(), bias.detach().numpy().copy(), bits, idf, chars)

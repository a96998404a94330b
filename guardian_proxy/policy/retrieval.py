"""Hybrid retrieval: score = α·field_overlap(query, statement) + (1−α)·BM25(query terms, statement), α = 0.6.

BM25 is rank-bm25's `BM25Plus` (our "BM25Lite": BM25 with a lower bound on term-frequency
normalisation, so long statements are not starved), min–max normalised per query to [0, 1]. BM25 is
additive over query terms, so the index caches one score vector per term and a query is a sum of cached
vectors. Field overlap is computed on boolean matrices (statements × vocabulary) with numpy:

    field_overlap = Σ_w w_f · overlap_f / Σ_w w_f   over the fields the query states
    categories  w 0.45: |Q ∩ S| / |Q|  ("other" in S, generic "personal information", counts 0.3)
    recipients  w 0.25: 1 if the class is named, 0.3 if S only says "third parties"
    purposes    w 0.20: |Q ∩ S| / |Q|  (the query's "unknown" purpose is not stated)
    practices   w 0.10: 1 if the statement's practice is one the query asks about

The practice term is ours: an action implies a practice (a third-party destination receives = share
or collect; a first party collects or uses), and the evaluation asks for category *and* practice.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

import numpy as np
from rank_bm25 import BM25Plus

from ..types import CATEGORIES, PRACTICES, PURPOSES, RECIPIENT_CLASSES, Action, Statement

ALPHA = 0.6
TOP_K = 8
WEIGHTS = {"categories": 0.45, "recipients": 0.25, "purposes": 0.20, "practices": 0.10}
GENERIC_CREDIT = 0.3

_STOP = frozenset("a an the and or of to in on for with by from as at is are be been was were this that these those "
                  "it its we us our you your they their them he she his her i me my may will can could would should "
                  "such any all some other not no do does did have has had which who whom what when where how if than "
                  "also into about over under more most each per via etc e g ie".split())

QUERY_WORDS: dict[str, str] = {
    # categories
    "credentials": "password credentials login authentication security code",
    "health": "health medical condition medication fitness",
    "financial": "payment financial credit card billing bank transaction purchase",
    "government_id": "social security number passport driver license government identification",
    "precise_location": "precise location gps geolocation address",
    "contact": "email address phone number contact information",
    "identity": "name username account profile photo identity",
    "demographic": "age gender demographic birth country language",
    "behavioural": "browsing history usage activity interactions pages visited interests",
    "device_id": "ip address device identifier advertising id browser",
    "cookie": "cookies pixels web beacons tracking technologies",
    "other": "personal information data",
    # recipients
    "first_party": "we collect use",
    "service_provider": "service providers vendors processors behalf",
    "analytics": "analytics measurement partners",  # also a purpose
    "ad_network": "advertisers advertising partners ad networks",
    "social": "social media networks facebook twitter",
    "data_broker": "data brokers sell",
    "ai_service": "artificial intelligence ai model providers",
    "unknown_third_party": "third parties partners share disclose",
    # purposes
    "functionality": "provide services operate features",
    "authentication": "authenticate verify identity account login",
    "payment": "payment process transactions billing",
    "advertising": "advertising ads marketing targeted",
    "profiling": "profile interests inferences",
    "personalization": "personalize recommendations customize content",
    "security": "security fraud protect safety",
    "ai_processing": "machine learning artificial intelligence train models",
    # practices
    "collect": "collect", "use": "use", "share": "share disclose", "sell": "sell", "retain": "retain keep retention",
    "delete": "delete access", "protect": "security protect", "choice": "opt out choices",
}
_AN_ANALYTICS = "analytics measure analyze statistics"


def stem(w: str) -> str:
    """A light suffix stripper: share/shares/shared/sharing → shar, cookie/cookies → cooki, party/parties → parti."""
    for suf, rep in (("ies", "i"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if w.endswith(suf) and len(w) - len(suf) >= 3 and not (suf == "s" and w.endswith("ss")):
            w = w[: len(w) - len(suf)] + rep
            break
    if len(w) > 3 and w[-1] in "ey":
        w = w[:-1] + ("i" if w[-1] == "y" else "")
    return w


def tokenize(text: str) -> list[str]:
    return [stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 1]


QUERY_TERMS: frozenset[str] = frozenset(tokenize(" ".join(QUERY_WORDS.values()) + " " + _AN_ANALYTICS))


@dataclass(frozen=True)
class Query:
    categories: tuple[str, ...] = ()
    recipients: tuple[str, ...] = ()
    purposes: tuple[str, ...] = ()
    practices: tuple[str, ...] = ()
    terms: tuple[str, ...] = field(default=())

    @classmethod
    def of(cls, categories=(), recipients=(), purposes=(), practices=(), extra: str = "") -> Query:
        cats = tuple(sorted(c for c in set(categories) if c in CATEGORIES))
        recs = tuple(sorted(r for r in set(recipients) if r in RECIPIENT_CLASSES))
        purps = tuple(sorted(p for p in set(purposes) if p in PURPOSES and p != "unknown"))
        pracs = tuple(sorted(p for p in set(practices) if p in PRACTICES))
        words = [QUERY_WORDS.get(v, "") for v in (*cats, *recs, *pracs)]
        words += [(_AN_ANALYTICS if p == "analytics" else QUERY_WORDS.get(p, "")) for p in purps]
        return cls(cats, recs, purps, pracs, tuple(sorted(set(tokenize(" ".join(words) + " " + extra)))))


def query_from_action(action: Action) -> Query:
    third = action.recipient != "first_party"
    practices = ("share", "collect", "sell") if third else ("collect", "use")
    cats = [c for c, n in action.categories.items() if n > 0]
    return Query.of(cats, [action.recipient], action.purposes, practices)


class PolicyIndex:
    """The retrieval index of one policy's statements (built once, then read-only but for caches)."""

    def __init__(self, statements: list[Statement]):
        self.statements = statements
        n = len(statements)
        self.cat = _matrix(statements, "data_categories", CATEGORIES)
        self.rec = _matrix(statements, "recipients", RECIPIENT_CLASSES)
        self.purp = _matrix(statements, "purposes", PURPOSES)
        self.prac = np.zeros((n, len(PRACTICES)), dtype=np.float32)
        self.negated = np.array([s.negated for s in statements], dtype=bool)
        for i, s in enumerate(statements):
            if s.practice in PRACTICES:
                self.prac[i, PRACTICES.index(s.practice)] = 1.0
        self._other = CATEGORIES.index("other")
        self._unknown_tp = RECIPIENT_CLASSES.index("unknown_third_party")
        docs = [tokenize(s.text + " " + (s.section or "")) or ["_"] for s in statements]
        self.bm25 = BM25Plus(docs) if n else None
        self._terms: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self.cache: dict = {}  # Query → (top statements, transparency), kept by the evidence stage
        if n:  # every term an action's query can hold, scored once now (a few ms), so lookups stay sub-ms
            for t in QUERY_TERMS:
                self.term_scores(t)

    def term_scores(self, term: str) -> np.ndarray:
        v = self._terms.get(term)
        if v is None:
            v = np.asarray(self.bm25.get_scores([term]), dtype=np.float32)
            with self._lock:
                if len(self._terms) > 4096:
                    self._terms.clear()
                self._terms[term] = v
        return v

    def bm25_scores(self, q: Query) -> np.ndarray:
        n = len(self.statements)
        if not n or not q.terms:
            return np.zeros(n, dtype=np.float32)
        s = np.zeros(n, dtype=np.float32)
        for t in q.terms:
            s += self.term_scores(t)
        lo, hi = float(s.min()), float(s.max())
        return (s - lo) / (hi - lo) if hi > lo else np.zeros(n, dtype=np.float32)

    def field_scores(self, q: Query) -> np.ndarray:
        n = len(self.statements)
        total = np.zeros(n, dtype=np.float32)
        wsum = 0.0
        if q.categories:
            cols = [CATEGORIES.index(c) for c in q.categories]
            hit = self.cat[:, cols].sum(axis=1) / len(cols)
            generic = self.cat[:, self._other] * GENERIC_CREDIT
            total += WEIGHTS["categories"] * np.maximum(hit, generic)
            wsum += WEIGHTS["categories"]
        if q.recipients:
            cols = [RECIPIENT_CLASSES.index(r) for r in q.recipients]
            hit = self.rec[:, cols].max(axis=1)
            generic = self.rec[:, self._unknown_tp] * GENERIC_CREDIT
            total += WEIGHTS["recipients"] * np.maximum(hit, generic)
            wsum += WEIGHTS["recipients"]
        if q.purposes:
            cols = [PURPOSES.index(p) for p in q.purposes]
            total += WEIGHTS["purposes"] * self.purp[:, cols].sum(axis=1) / len(cols)
            wsum += WEIGHTS["purposes"]
        if q.practices:
            cols = [PRACTICES.index(p) for p in q.practices]
            total += WEIGHTS["practices"] * self.prac[:, cols].max(axis=1)
            wsum += WEIGHTS["practices"]
        return total / wsum if wsum else total

    def scores(self, q: Query, alpha: float = ALPHA) -> np.ndarray:
        if alpha >= 1.0:
            return self.field_scores(q)
        if alpha <= 0.0:
            return self.bm25_scores(q)
        return alpha * self.field_scores(q) + (1 - alpha) * self.bm25_scores(q)

    def top(self, q: Query, k: int = TOP_K, alpha: float = ALPHA) -> list[tuple[int, float]]:
        """Indices and scores of the k best statements with a positive score, best first (ties: document order)."""
        s = self.scores(q, alpha)
        if not len(s):
            return []
        order = np.argsort(-s, kind="stable")[:k]
        return [(int(i), float(s[i])) for i in order if s[i] > 0]


def _matrix(statements: list[Statement], attr: str, vocab: tuple[str, ...]) -> np.ndarray:
    m = np.zeros((len(statements), len(vocab)), dtype=np.float32)
    pos = {v: i for i, v in enumerate(vocab)}
    for i, s in enumerate(statements):
        for v in getattr(s, attr):
            j = pos.get(v)
            if j is not None:
                m[i, j] = 1.0
    return m

"""(Action, Evidence) → a fixed-size float32 feature vector for the evidential classifier.

Four blocks (the spec, with its size, is stored in the checkpoint and checked at load):
  action    one-hot category, recipient class, purposes, basis (shared vocabularies of types.py);
  slots     per evidence statement, in rank order (8 slots): retrieval score and whether the statement's
            structured fields and the lexicon's reading of its text match the action's category,
            recipient and purpose, plus practice, negation and condition cues and their conjunctions;
  summary   maxima and score-weighted sums of the slot conjunctions over the 8 statements;
  reader    (when the checkpoint has a statement reader, reader.py) per slot the reader's probabilities of
            the annotation facts read from the statement's text, and their reading for this action
            (names its category, gives it to its recipient class, states its purpose or none, "does not"),
            with maxima and noisy-ORs over the slots in the summary;
  hashed    signed feature hashing (crc32) of the statements' unigrams/bigrams, alone and crossed with
            the action's category, recipient and purpose (so "hipaa" can count for health only).
No outgoing text, host or value of the action enters the features: only its vocabulary fields.
"""

from __future__ import annotations

import math
import re
import zlib
from functools import lru_cache

import numpy as np

from ..types import BASES, CATEGORIES, PURPOSES, RECIPIENT_CLASSES, Action, Evidence
from .lexicon import read
from .reader import INDEX, OUTPUTS, READ_CATS
from .weak import THIRD, recipients_of  # the weak labels and the features read statements alike

SLOTS = 8
_TOKEN = re.compile(r"[a-z][a-z0-9']+")
_STOP = frozenset("the a an and or of to in on for with by as is are be this that we our you your it its "
                  "from at may will can any such other which these those has have not".split())
_READ = ("cat", "rec", "rec_generic", "pur", "pur_open", "neg", "full", "full_pos", "full_neg", "cat_rec")
SLOT_NAMES = ("present", "score", "generic", "share", "sell", "collect", "use", "opt_in", "opt_out", "legal",
              "aggregated") + tuple(f"{k}_field" for k in _READ) + tuple(f"{k}_lex" for k in _READ) + (
              "full_any", "full_pos_any", "full_neg_any")
SUMMARY_OF = ("cat_field", "cat_lex", "cat_rec_field", "cat_rec_lex", "full_field", "full_lex", "full_pos_field",
              "full_pos_lex", "full_neg_field", "full_neg_lex", "full_any", "full_pos_any", "full_neg_any", "generic")


READ_SLOT_NAMES = tuple(f"read_{k}" for k in OUTPUTS) + (
    "read_cat", "read_cat_rec", "read_pur", "read_full", "read_full_pos", "read_full_neg")
#: a specific third-party class is covered by an annotated purpose only where OPP-115's labels put it
#: (scripts/build_pairs.py THIRD_BY_PURPOSE: advertising → ad networks, analytics → analytics, …)
THIRD_BY_PURPOSE = {"ad_network": ("advertising",), "analytics": ("analytics",),
                    "service_provider": ("functionality", "security", "personalization")}
READ_SUMMARY_OF = ("read_cat", "read_cat_rec", "read_full", "read_full_pos", "read_full_neg", "read_named:generic")
#: an action purpose outside OPP-115's scheme is read as the nearest purposes the annotators had
PURPOSE_READS = {"functionality": ("functionality",), "authentication": ("security", "functionality"),
                 "payment": ("functionality",), "analytics": ("analytics",), "advertising": ("advertising",),
                 "profiling": ("advertising", "personalization"), "personalization": ("personalization",),
                 "security": ("security",), "ai_processing": ("functionality", "analytics")}


class FeatureSpec:
    """Sizes of the blocks; `dim` is what the checkpoint records. `reader`: a statement reader (reader.py)
    whose probabilities join every slot, or None."""

    def __init__(self, hash_bits: int = 0, slots: int = SLOTS, reader=None):
        self.hash_bits = hash_bits
        self.slots = slots
        self.reader = reader
        self.n_action = len(CATEGORIES) + len(RECIPIENT_CLASSES) + len(PURPOSES) + len(BASES)
        self.n_slot = len(SLOT_NAMES) + (len(READ_SLOT_NAMES) if reader is not None else 0)
        self.n_summary = 2 * len(SUMMARY_OF) + 1 + (2 * len(READ_SUMMARY_OF) if reader is not None else 0)
        self.n_hash = (1 << hash_bits) if hash_bits else 0
        self.dim = self.n_action + slots * self.n_slot + self.n_summary + self.n_hash

    def layout(self) -> dict:
        return {"n_action": self.n_action, "slots": self.slots, "n_slot": self.n_slot,
                "n_summary": self.n_summary, "n_hash": self.n_hash}

    def as_dict(self) -> dict:
        return {"hash_bits": self.hash_bits, "slots": self.slots, "dim": self.dim, "version": 3,
                "reader": self.reader is not None, **self.layout()}


def _onehots(action: Action) -> list[float]:
    cats = {c for c, n in action.categories.items() if n > 0}
    purs = set(action.purposes or ["unknown"])
    return ([1.0 if c in cats else 0.0 for c in CATEGORIES]
            + [1.0 if r == action.recipient else 0.0 for r in RECIPIENT_CLASSES]
            + [1.0 if p in purs else 0.0 for p in PURPOSES]
            + [1.0 if b == action.basis else 0.0 for b in BASES])


def _match(cats: set[str], rec: str, purs: set[str], st_cats, st_recs, st_purs, neg: bool, sfx: str) -> dict:
    cat = bool(cats & st_cats)
    rec_strict = rec in st_recs
    rec_generic = rec in THIRD and "unknown_third_party" in st_recs
    rec_ok = rec_strict or rec_generic
    pur_open = not st_purs  # a statement naming no purpose covers every purpose
    pur = bool(purs & st_purs) or pur_open
    full = cat and rec_ok and pur
    return {f"cat_{sfx}": cat, f"rec_{sfx}": rec_strict, f"rec_generic_{sfx}": rec_generic, f"pur_{sfx}": pur,
            f"pur_open_{sfx}": pur_open, f"neg_{sfx}": neg, f"full_{sfx}": full, f"full_pos_{sfx}": full and not neg,
            f"full_neg_{sfx}": full and neg, f"cat_rec_{sfx}": cat and rec_ok}


class _Stmt:
    """What a statement contributes whatever the action: its readings (lexicon, structured fields, statement
    reader), computed once per statement and shared by every (category, purpose) item of a request."""

    __slots__ = ("st", "score", "r", "st_recs", "lex_recs", "neg_field", "base", "p", "read", "st_cats", "st_purs",
                 "lex_cats", "lex_purs")

    def __init__(self, st, score: float, reader):
        r = read(st.text)
        self.st, self.score, self.r = st, score, r
        self.st_recs = recipients_of(st)  # "we collect …" with no recipient named: the first party
        self.lex_recs = set(r.recipients) or ({"first_party"} if r.practices & {"collect", "use"} else set())
        self.neg_field = bool(getattr(st, "negated", False))
        self.st_cats, self.st_purs = set(st.data_categories), set(st.purposes)
        self.lex_cats, self.lex_purs = set(r.categories), set(r.purposes)
        self.base = {"present": 1.0, "score": score, "generic": r.generic or "other" in st.data_categories,
                     "share": "share" in r.practices, "sell": "sell" in r.practices,
                     "collect": "collect" in r.practices, "use": "use" in r.practices,
                     "opt_in": "opt_in" in r.conditions, "opt_out": "opt_out" in r.conditions,
                     "legal": "legal" in r.conditions, "aggregated": "aggregated" in r.conditions}
        self.p = self.read = None
        if reader is not None:
            self.p = reader.probs(st.text)
            self.read = {f"read_{k}": float(v) for k, v in zip(OUTPUTS, self.p.tolist(), strict=True)}


def _slot(cats: set[str], rec: str, purs: set[str], st, score: float | _Stmt) -> dict[str, float]:
    """One statement's slot features for an action; `score` may be the statement's _Stmt (its readings)."""
    s = score if isinstance(score, _Stmt) else _Stmt(st, float(score), None)
    r = s.r
    f = dict(s.base)
    f.update(_match(cats, rec, purs, s.st_cats, s.st_recs, s.st_purs, s.neg_field, "field"))
    f.update(_match(cats, rec, purs, s.lex_cats, s.lex_recs, s.lex_purs, r.negated, "lex"))
    f["full_any"] = f["full_field"] or f["full_lex"]
    f["full_pos_any"] = f["full_any"] and not (s.neg_field or r.negated)
    f["full_neg_any"] = f["full_any"] and (s.neg_field or r.negated)
    return {k: float(v) for k, v in f.items()}


def _read_slot(reader, cat: str, rec: str, pur: str, st, lex_cat: bool) -> dict[str, float]:
    """The reader's probabilities for one statement and their reading for a single-item action; `st` may be the
    statement's _Stmt (its probabilities read once)."""
    if isinstance(st, _Stmt):
        p, f = st.p, dict(st.read)
    else:
        p = reader.probs(st.text)
        f = {f"read_{k}": float(v) for k, v in zip(OUTPUTS, p.tolist(), strict=True)}
    named = float(p[INDEX[f"named:{cat}"]]) if cat in READ_CATS else float(lex_cat)
    if rec == "first_party":
        cat_rec = named * float(p[INDEX["first_party"]])
    elif rec == "social":
        cat_rec = named * float(p[INDEX["social"]])
    else:
        cat_rec = float(p[INDEX[f"third:{cat}"]]) if cat in READ_CATS else float(lex_cat) * float(
            max(p[INDEX[f"third:{c}"]] for c in READ_CATS))
    if pur == "unknown" or pur not in PURPOSE_READS:
        pur_p = 1.0
    else:
        sides = ("first",) if rec == "first_party" else ("first", "third") if rec == "social" else ("third",)
        fits = [q for q in PURPOSE_READS[pur] if rec not in THIRD_BY_PURPOSE or q in THIRD_BY_PURPOSE[rec]]
        pur_p = max([float(p[INDEX[f"{s}_purpose:{q}"]]) for s in sides for q in ["unspecified", *fits]])
    neg = float(p[INDEX["does_not"]])
    full = cat_rec * pur_p
    f.update(read_cat=named, read_cat_rec=cat_rec, read_pur=pur_p, read_full=full, read_full_pos=full * (1 - neg),
             read_full_neg=full * neg)
    return f


_GOLD = np.uint64(0x9E3779B97F4A7C15)


@lru_cache(maxsize=16384)
def _gram_hashes(text: str) -> np.ndarray:
    """crc32 of the statement's unigrams and bigrams (stop words dropped), cached per text."""
    toks = [t for t in _TOKEN.findall(text.lower()) if t not in _STOP]
    grams = set(toks) | {f"{a}_{b}" for a, b in zip(toks, toks[1:], strict=False)}
    return np.array(sorted(zlib.crc32(g.encode()) for g in grams), dtype=np.uint64)


def _hash_block(block: np.ndarray, bits: int, grams: np.ndarray, key: int, weight: float) -> None:
    """Signed hashing of (key, gram) pairs into `block` (key 0 = the gram alone)."""
    with np.errstate(over="ignore"):
        mixed = (grams ^ np.uint64(key)) * _GOLD
    idx = (mixed >> np.uint64(64 - bits)).astype(np.int64)
    sign = np.where((mixed >> np.uint64(20)) & np.uint64(1), weight, -weight).astype(np.float32)
    np.add.at(block, idx, sign)


def featurize(action: Action, evidence: Evidence, spec: FeatureSpec, _stmts: list[_Stmt] | None = None) -> np.ndarray:
    if _stmts is None:
        _stmts = statements_of(evidence, spec)
    vec = np.zeros(spec.dim, dtype=np.float32)
    head = _onehots(action)
    vec[: spec.n_action] = head
    cats = {c for c, n in action.categories.items() if n > 0}
    purs = set(action.purposes or ["unknown"])
    rec = action.recipient
    slots = []
    names = SLOT_NAMES + (READ_SLOT_NAMES if spec.reader is not None else ())
    cat1 = min(cats) if cats else "other"  # the router scores one (category, purpose) item at a time
    pur1 = min(purs)
    for i, st in enumerate(_stmts):
        f = _slot(cats, rec, purs, st.st, st)
        if spec.reader is not None:
            f.update(_read_slot(spec.reader, cat1, rec, pur1, st, bool(f["cat_lex"] or f["cat_field"])))
        slots.append(f)
        base = spec.n_action + i * spec.n_slot
        vec[base: base + spec.n_slot] = [f[k] for k in names]
    base = spec.n_action + spec.slots * spec.n_slot
    summary = [float(len(slots)) / spec.slots]
    for k in SUMMARY_OF:
        summary.append(max((f[k] for f in slots), default=0.0))
        summary.append(sum(f[k] * f["score"] for f in slots))
    if spec.reader is not None:
        for k in READ_SUMMARY_OF:
            summary.append(max((f[k] for f in slots), default=0.0))
            summary.append(1.0 - math.prod(1.0 - f[k] for f in slots))
    vec[base: base + spec.n_summary] = summary
    if spec.n_hash:
        block = vec[base + spec.n_summary:]
        keys = [0] + [zlib.crc32(k.encode()) for k in
                      [f"c={c}" for c in sorted(cats)] + [f"r={rec}"] + [f"p={p}" for p in sorted(purs)]]
        for i, ss in enumerate(evidence.statements[: spec.slots]):
            grams = _gram_hashes(ss.statement.text)
            for k in keys:
                _hash_block(block, spec.hash_bits, grams, k, 1.0 / (1.0 + i))
        norm = math.sqrt(float(np.dot(block, block)))
        if norm > 0:
            block /= norm
    return vec


def statements_of(evidence: Evidence, spec: FeatureSpec) -> list[_Stmt]:
    """The action-independent readings of the evidence's first `spec.slots` statements."""
    return [_Stmt(ss.statement, float(ss.score), spec.reader) for ss in evidence.statements[: spec.slots]]


def inputs_key(actions: list[Action], evidence: Evidence, spec: FeatureSpec) -> tuple:
    """Everything `featurize_items(actions, evidence, spec)` reads, as a hashable key (equal keys, equal rows):
    per action its categories present, recipient, purposes and basis (no host, text or value); per statement of
    the first `spec.slots` its text (the lexicon, the reader and the hashed grams read it), practice, structured
    fields, negation and retrieval score."""
    acts = tuple((frozenset(c for c, n in a.categories.items() if n > 0), a.recipient,
                  frozenset(a.purposes or ["unknown"]), a.basis) for a in actions)
    return acts, statements_key(evidence, spec)


def statements_key(evidence: Evidence, spec: FeatureSpec) -> tuple:
    """What the features read of the evidence (see `inputs_key`)."""
    return tuple((ss.statement.text, ss.statement.practice, tuple(ss.statement.data_categories),
                  tuple(ss.statement.recipients), tuple(ss.statement.purposes),
                  bool(getattr(ss.statement, "negated", False)), float(ss.score))
                 for ss in evidence.statements[: spec.slots])


def featurize_items(actions: list[Action], evidence: Evidence, spec: FeatureSpec) -> np.ndarray:
    """Rows of `featurize` for several actions against one evidence (the router's category × purpose items):
    each statement is read once, not once per item; the rows are identical to featurize's."""
    stmts = statements_of(evidence, spec)
    return np.stack([featurize(a, evidence, spec, stmts) for a in actions])


def featurize_many(items, spec: FeatureSpec) -> np.ndarray:
    """Stack features for an iterable of (action, evidence)."""
    rows = [featurize(a, e, spec) for a, e in items]
    return np.stack(rows) if rows else np.zeros((0, spec.dim), dtype=np.float32)

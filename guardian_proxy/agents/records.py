"""Records of an agent step, and the learned model that says which of them must not flow.

A *record* is one JSON object of a tool result (an e-mail, a note, a calendar event, a search hit) or,
for a result that is not JSON, the whole result. Information in PrivacyLens-style agent tasks comes in
records: the note about a patient's session is sensitive as a whole, the note about therapy methods
next to it is what the task needs. Judging sentences one by one loses that (the second sentence of a
session note has no health cue of its own), so the instructor judges records.

`RecordModel` gives P(record holds another person's information that should not go to this
recipient) in two stages, both logistic regressions trained by `scripts/train_record_model.py`:
1. text: word uni- and bigram TF-IDF of the record (sublinear tf, smoothed idf, l2 norm: the transform
   of scikit-learn's `TfidfVectorizer`, re-implemented here so the proxy needs no scikit-learn);
2. context: that score relative to the other records of the same step (a step usually holds a few
   records the task needs and one or two it must not pass on), its overlap with the user's
   instruction, its length, the norms table's verdict for it, and two similarities in the stage-1
   TF-IDF space (`similarities`): the record's to the user's instruction (what the task is about) and its
   mean to the step's other records (the odd one out among them), each also relative to the step's largest.
The model file is `guardian_proxy/data/agent_records.json.gz` (JSON, no pickle).
"""

from __future__ import annotations

import gzip
import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..errors import ConfigError
from ..resources import DATA_DIR
from .items import Item, containment, content_words, items_of, parties_of
from .norms import Classified, Norms, heuristic_persons, identities

MODEL_FILE = DATA_DIR / "agent_records.json.gz"
CLASSIFY_CHARS = 20_000  # a record's data types and people are read from its first 20,000 characters
_TOKEN = re.compile(r"(?u)\b\w\w+\b")  # scikit-learn's default token pattern
N_CONTEXT = 12


def object_of(record: str) -> str:
    """`Tool:$.results[1].content` → `Tool:$.results[1]` (sentences of one JSON object share a subject); a block
    of a listing (`…§<n>`, `items.blocks`) is an object of its own."""
    if "§" in record:
        return record
    head, dot, _ = record.rpartition(".")
    return head if dot and "[" in head else record


@dataclass
class Record:
    key: str  # "<result index>:<tool>:<json path of the object>"
    items: list[Item]
    also: tuple[str, ...] = ()  # its parties as the client sent them, before the session's pseudonyms

    @property
    def text(self) -> str:
        return " ".join(i.text for i in self.items)

    @property
    def parties(self) -> tuple[str, ...]:
        """Who it is from or about, as the text names them (`items.parties_of`)."""
        return self.items[0].parties if self.items else ()

    @property
    def owners(self) -> frozenset[str]:
        """The `norms.identities` of its parties, also in the form the client sent them."""
        return frozenset().union(*(identities(p) for p in (*self.parties, *self.also)))


def records_of(results, split: bool = True) -> list[Record]:
    """The records of a step's tool results (`ToolResult`s, oldest first), in order (`split=False`: a text
    listing is one record: the benchmark's older definition, docs/design/agents.md#privacylens-benchmark). A result
    with its `original` text (before the session stage's pseudonyms) adds the parties that text names at the same
    place, so a recipient addressed in the clear is recognised."""
    out: dict[str, Record] = {}
    for n, r in enumerate(results):
        sent = parties_of(r.tool, r.original, split) if getattr(r, "original", None) else {}
        for it in items_of(r.tool, r.text, split):
            key = f"{n}:{object_of(it.record)}"
            rec = out.get(key)
            if rec is None:
                rec = out[key] = Record(key, [], sent.get(it.record, ()) if it.parties else ())
            rec.items.append(it)
    return list(out.values())


def ngrams(text: str) -> Counter:
    toks = _TOKEN.findall(text.lower())
    grams = Counter(toks)
    grams.update(f"{a} {b}" for a, b in zip(toks, toks[1:], strict=False))
    return grams


def _sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-max(min(z, 60.0), -60.0)))


def context_features(logits: list[float], texts: list[str], instruction: str, flags: list[tuple[bool, bool]],
                     sims: list[list[float]]) -> list[list[float]]:
    """Stage-2 features of each record of one step: its text logit, the logit minus the step's largest
    and mean, how many records score higher, the share of its words in the user's instruction, its
    length, whether the norms table withholds it, whether it is about another person, and its
    `similarities` row."""
    top, mean = max(logits), sum(logits) / len(logits)
    ins = content_words(instruction)
    rows = []
    for lg, text, (withheld, third), sim in zip(logits, texts, flags, sims, strict=True):
        w = content_words(text)
        rows.append([lg, lg - top, lg - mean, float(sum(1 for o in logits if o > lg)), containment(w, ins),
                     min(len(w), 60) / 60, float(withheld), float(third), *sim])
    return rows


def _dot(a: dict[int, float], b: dict[int, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(x * b.get(j, 0.0) for j, x in a.items())


def similarities(vectors: list[dict[int, float]], instruction: dict[int, float]) -> list[list[float]]:
    """Per record of one step (its L2-normalised TF-IDF vector): its cosine with the user's instruction and that
    minus the step's largest, its mean cosine with the step's other records and that minus the step's largest.
    Linear in the step's size: the mean is the dot with the sum of all vectors, less its own."""
    n = len(vectors)
    total: dict[int, float] = {}
    for v in vectors:
        for j, x in v.items():
            total[j] = total.get(j, 0.0) + x
    q = [_dot(v, instruction) for v in vectors]
    cen = [(_dot(v, total) - _dot(v, v)) / (n - 1) if n > 1 else 0.0 for v in vectors]
    top_q, top_c = max(q, default=0.0), max(cen, default=0.0)
    return [[a, a - top_q, c, c - top_c] for a, c in zip(q, cen, strict=True)]


def classify_records(norms: Norms, texts: list[str]) -> list[Classified]:
    """The norms table's reading of each record (its first `CLASSIFY_CHARS` characters); people by the
    cheap heuristic, the same at training and at run time."""
    return [norms.classify(t[:CLASSIFY_CHARS], heuristic_persons(t[:CLASSIFY_CHARS])) for t in texts]


def norms_flags(norms: Norms, classified: list[Classified], relationship: str) -> list[tuple[bool, bool]]:
    """(the norms withhold it, it is about another person) per record."""
    return [(bool(norms.withhold(c, relationship)), c.third_party) for c in classified]


class RecordModel:
    def __init__(self, spec: dict):
        try:
            self.vocab: dict[str, int] = spec["vocabulary"]
            self.idf: list[float] = spec["idf"]
            self.coef: list[float] = spec["coef"]
            self.intercept = float(spec["intercept"])
            self.context_coef: list[float] = spec["context_coef"]
            self.context_intercept = float(spec["context_intercept"])
            self.threshold = float(spec["threshold"])
            self.meta: dict = spec.get("meta", {})
        except (KeyError, TypeError, ValueError) as e:
            raise ConfigError(f"record model: missing or bad field {e}") from e
        if not (len(self.idf) == len(self.coef) == len(self.vocab)) or len(self.context_coef) != N_CONTEXT:
            raise ConfigError("record model: vocabulary, idf, coef and context sizes disagree")

    @classmethod
    def load(cls, path: Path | None = None) -> RecordModel:
        path = Path(path or MODEL_FILE)
        try:
            with gzip.open(path, "rt", encoding="utf-8") as f:
                return cls(json.load(f))
        except (OSError, ValueError, EOFError) as e:
            raise ConfigError(f"record model {path}: {e}") from e

    def to_dict(self) -> dict:
        return {"vocabulary": self.vocab, "idf": self.idf, "coef": self.coef, "intercept": self.intercept,
                "context_coef": self.context_coef, "context_intercept": self.context_intercept,
                "threshold": self.threshold, "meta": self.meta}

    def save(self, path: Path) -> None:
        with gzip.open(path, "wt", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, separators=(",", ":"))

    def vector(self, text: str) -> dict[int, float]:
        """The TF-IDF vector of a text (sparse: column -> value), as scikit-learn computes it."""
        v = {}
        for g, n in ngrams(text).items():
            j = self.vocab.get(g)
            if j is not None:
                v[j] = (1 + math.log(n)) * self.idf[j]
        norm = math.sqrt(sum(x * x for x in v.values()))
        return {j: x / norm for j, x in v.items()} if norm else v

    def text_logit(self, text: str) -> float:
        return self._logit(self.vector(text))

    def _logit(self, vector: dict[int, float]) -> float:
        return self.intercept + sum(self.coef[j] * x for j, x in vector.items())

    def similarities(self, texts: list[str], instruction: str) -> list[list[float]]:
        """`similarities` of a step's record texts in this model's TF-IDF space."""
        return similarities([self.vector(t) for t in texts], self.vector(instruction))

    def context_prob(self, row: list[float]) -> float:
        return _sigmoid(self.context_intercept + sum(c * x for c, x in zip(self.context_coef, row, strict=True)))

    def scores(self, texts: list[str], instruction: str, flags: list[tuple[bool, bool]]) -> list[float]:
        """P(must not flow) for each record text of one step (`flags` from `norms_flags`)."""
        if not texts:
            return []
        vectors = [self.vector(t) for t in texts]
        logits = [self._logit(v) for v in vectors]
        sims = similarities(vectors, self.vector(instruction))
        return [self.context_prob(r) for r in context_features(logits, texts, instruction, flags, sims)]


@lru_cache(maxsize=2)
def default_record_model(path: str | None = None) -> RecordModel:
    return RecordModel.load(Path(path) if path else None)

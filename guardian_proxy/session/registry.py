"""A conversation's registry (CAMP): every personal value seen, the co-occurrence graph of their types,
and the cumulative exposure score

    CPE(t) = Σ_v w(v) · (1 + α · deg(v))

over the entity types v seen up to turn t. w(v) comes from the factor table `session_weights`
(factor_tables/session_weights.yaml), falling back to the category's Sd. As in CAMP, an edge joins two
types seen in the same session, so deg(v) = (number of types seen) − 1 and CPE grows superlinearly as
linked fragments accumulate. Values are identified by their normalised text (case, spacing and a
possessive ending ignored), so one value keeps one surrogate whatever type a later mention is given.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

_SPACE = re.compile(r"\s+")
_POSSESSIVE = re.compile(r"['’]s$", re.I)


def normalise(value: str) -> str:
    v = _SPACE.sub(" ", value.strip()).casefold()
    v = _POSSESSIVE.sub("", v)
    return v.strip(" .,;:!?\"'()[]{}")


@dataclass
class Entity:
    entity: str  # detector label (PERSON, LOCATION, US_SSN …)
    original: str
    norm: str
    first_turn: int
    surrogate: str | None = None
    blocked: bool = False  # hard rule: replaced by [BLOCKED]; the original is not kept

    def to_dict(self) -> dict:
        return {"e": self.entity, "o": self.original, "n": self.norm, "t": self.first_turn, "s": self.surrogate,
                "b": self.blocked}

    @classmethod
    def from_dict(cls, d: dict) -> Entity:
        return cls(entity=d["e"], original=d["o"], norm=d["n"], first_turn=d["t"], surrogate=d.get("s"),
                   blocked=bool(d.get("b")))


@dataclass
class SessionState:
    sid: str
    created: float = field(default_factory=time.time)
    last_seen: float = field(default_factory=time.time)
    turn: int = 0
    crossed_turn: int | None = None
    cpe: float = 0.0
    types: dict[str, int] = field(default_factory=dict)  # entity type → first turn
    edges: set[tuple[str, str]] = field(default_factory=set)
    entities: dict[str, Entity] = field(default_factory=dict)  # norm → entity
    names: dict[str, str] = field(default_factory=dict)  # real name part (casefolded) → surrogate part
    counter: int = 0  # numbered placeholders for types without a surrogate generator
    version: int = 0  # bumped when a surrogate is added (de-masker cache)
    dirty: set[str] = field(default_factory=set)  # entity norms not yet in the vault
    saved_sig: str = ""  # the meta last written (skip writes that change nothing)
    known: tuple | None = None  # (signature, rewrite.KnownValues) cache

    # ------------------------------------------------------------------ registry

    def add(self, entity: str, value: str, turn: int, blocked: bool = False, key=None, count: bool = True) -> Entity:
        """Register a value seen at `turn`. `key` maps a hard-blocked value's normalised text to the
        opaque key it is stored under (its original is never kept). `count=False` registers the value
        without adding its type to the exposure graph (text the model wrote)."""
        norm = normalise(value)
        if key is not None and (blocked or key(norm) in self.entities):
            norm, blocked = key(norm), True
        e = self.entities.get(norm)
        if e is None:
            e = Entity(entity=entity, original="" if blocked else value.strip(), norm=norm, first_turn=turn,
                       blocked=blocked)
            self.entities[norm] = e
            self.dirty.add(norm)
        elif turn < e.first_turn:
            e.first_turn = turn
            self.dirty.add(norm)
        if blocked and not e.blocked:
            e.blocked, e.original, e.entity = True, "", entity
            self.dirty.add(norm)
        if count:
            self.observe(e.entity if e.blocked else entity, turn)
        return e

    def set_surrogate(self, e: Entity, surrogate: str) -> None:
        e.surrogate = surrogate
        self.dirty.add(e.norm)
        self.version += 1

    def observe(self, entity: str, turn: int) -> None:
        if entity not in self.types:
            for other in self.types:
                self.edges.add(tuple(sorted((entity, other))))
            self.types[entity] = turn
        elif turn < self.types[entity]:
            self.types[entity] = turn

    # ------------------------------------------------------------------ exposure

    def degree(self, v: str, upto: int | None = None) -> int:
        alive = self._alive(upto)
        return sum(1 for a, b in self.edges if (a == v and b in alive) or (b == v and a in alive))

    def _alive(self, upto: int | None) -> set[str]:
        return {t for t, first in self.types.items() if upto is None or first <= upto}

    def score(self, weights: dict[str, float], alpha: float, upto: int | None = None) -> float:
        """CPE over the types first seen at or before turn `upto` (all when None)."""
        alive = self._alive(upto)
        return sum(weights.get(v, 0.0) * (1 + alpha * self.degree(v, upto)) for v in alive)

    # ------------------------------------------------------------------ persistence

    def meta(self) -> dict:
        return {"turn": self.turn, "crossed": self.crossed_turn, "cpe": self.cpe, "types": self.types,
                "edges": sorted(list(e) for e in self.edges), "names": self.names, "counter": self.counter}

    @classmethod
    def from_meta(cls, sid: str, created: float, last_seen: float, meta: dict, entities: list[dict]) -> SessionState:
        s = cls(sid=sid, created=created, last_seen=last_seen, turn=meta.get("turn", 0),
                crossed_turn=meta.get("crossed"), cpe=meta.get("cpe", 0.0), types=dict(meta.get("types", {})),
                edges={tuple(e) for e in meta.get("edges", [])}, names=dict(meta.get("names", {})),
                counter=meta.get("counter", 0))
        for d in entities:
            e = Entity.from_dict(d)
            s.entities[e.norm] = e
        return s

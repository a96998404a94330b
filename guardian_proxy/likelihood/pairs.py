"""Labelled (action, evidence) pairs as JSON Lines: one record a line (see scripts/build_pairs.py),
read back into typed objects for training and evaluation. Not used by the proxy."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..types import Action, Evidence


@dataclass
class Pair:
    id: str
    action: Action
    evidence: Evidence
    label: int  # 0 compliant, 1 risky
    split: str = "train"
    policy: str | int | None = None
    source: str = ""
    why: str = ""


def write_pairs(path: Path, pairs: Iterable[dict]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for p in pairs:
            fh.write(json.dumps(p, ensure_ascii=False) + "\n")
            n += 1
    return n


def read_pairs(path: Path | str) -> list[Pair]:
    out = []
    with Path(path).open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            d = json.loads(line)
            a = d["action"]
            action = Action(domain=a["domain"], host=a.get("host", a["domain"]), categories=a["categories"],
                            recipient=a["recipient"], purposes=a["purposes"], basis=a.get("basis", "default"))
            out.append(Pair(id=d["id"], action=action, evidence=Evidence.model_validate(d.get("evidence", {})),
                            label=int(d["label"]), split=d.get("split", "train"), policy=d.get("policy"),
                            source=d.get("source", ""), why=d.get("why", "")))
    return out

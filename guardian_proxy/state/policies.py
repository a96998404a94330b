"""Where the user's policies are stored: the record (`Policy`), one interface (`PolicyBackend`) and two back
ends, opened by guardian_proxy.state.open_policies.

    local   <state_dir>/policies: index.json and statements/<domain>.jsonl (guardian_proxy/state/policies_local.py;
            the format guardian_proxy/policies/README.md describes, which the shipped corpus uses too)
    redis   keys under the fleet's prefix (guardian_proxy/state/policies_redis.py)

What a store of policies does with them — the shipped corpus, the domain → owner map, reloading what another
process changed, merging a new document — is guardian_proxy/policy/store.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..errors import PolicyError
from ..types import Statement

FORMAT = 1


@dataclass
class Policy:
    """One owner's policy: its index entry, and its statements read once, when first used (from `file`, or
    through `loader` for a store without files). `derived`: what a reader builds from the statements and keeps
    with them (the retrieval index), dropped with the record when the policy changes."""

    domain: str
    name: str
    file: Path
    source: str  # shipped | user
    domains: list[str] = field(default_factory=list)
    documents: list[dict] = field(default_factory=list)
    count: int = 0
    kind: str | None = None
    loader: Callable[[], list[Statement]] | None = field(default=None, repr=False, compare=False)  # no file
    _statements: list[Statement] | None = field(default=None, repr=False)
    derived: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def statements(self) -> list[Statement]:
        if self._statements is None:
            self._statements = self.loader() if self.loader is not None else read_statements(self.file)
        return self._statements

    def summary(self) -> dict:
        return {"domain": self.domain, "statements": self.count, "source": self.source, "name": self.name,
                "domains": self.domains, "documents": [d.get("title") or d.get("origin") for d in self.documents]}


def read_statements(path: Path) -> list[Statement]:
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line:
                    out.append(Statement.model_validate(json.loads(line)))
    except (OSError, ValueError) as e:
        raise PolicyError(f"cannot read policy statements {path}: {e}") from e
    return out


def statement_json(s: Statement) -> str:
    d = s.model_dump(exclude_defaults=True)
    d["practice"] = s.practice
    order = ["id", "domain", "practice", "negated", "text", "data_categories", "recipients", "purposes", "condition",
             "retention", "section", "source", "start", "end"]
    return json.dumps({k: d[k] for k in order if k in d}, ensure_ascii=False)


def load_index(directory: Path, source: str) -> dict[str, Policy]:
    """A directory's index.json (the shipped corpus's or the user's): domain → Policy ({} when there is none)."""
    path = directory / "index.json"
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise PolicyError(f"cannot read policy index {path}: {e}") from e
    out = {}
    for p in data.get("policies", []):
        dom = p["domain"]
        out[dom] = Policy(domain=dom, name=p.get("name") or dom, file=directory / p.get("file", f"statements/{dom}.jsonl"),
                          source=source, domains=sorted(set(p.get("domains") or []) | {dom}),
                          documents=p.get("documents") or [], count=int(p.get("statements", 0)), kind=p.get("kind"))
    return out


def index_json(policies: list[Policy], extra: dict | None = None) -> str:
    entries = [{"domain": p.domain, "name": p.name, "file": str(p.file.relative_to(p.file.parent.parent)),
                "domains": p.domains, **({"kind": p.kind} if p.kind else {}), "documents": p.documents,
                "statements": p.count} for p in sorted(policies, key=lambda p: p.domain)]
    return json.dumps({"format": FORMAT, **(extra or {}), "policies": entries}, indent=1, ensure_ascii=False) + "\n"


class PolicyBackend(Protocol):
    """Where the user's policies live. Every method may raise StateUnavailable (Redis down or slow, bounded by
    state.timeout_s)."""

    where: str  # in words, for messages
    check_s: float  # how often a reader asks `stamp` (0: at every lookup)

    def stamp(self) -> object:
        """Cheap: a value that changes whenever a policy was added or changed."""

    def load(self) -> dict[str, Policy]:
        """domain → Policy (statements read lazily); PolicyError when the index cannot be used."""

    def writing(self) -> AbstractContextManager:
        """An exclusive lock against every other writer (process or gateway)."""

    def statements_file(self, domain: str) -> Path:
        """The policy's statements file (its name only, for a store without files)."""

    def save(self, policy: Policy, statements: list[Statement], users: dict[str, Policy]) -> None:
        """Store one policy's statements and its index entry (`users`: every user policy, it included)."""

    def append_log(self, record: dict) -> None:
        """One automatic ingestion (domains and counts, no page text)."""

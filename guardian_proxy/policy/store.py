"""The policy store: statements per owner, from the shipped corpus (`policies/`) and the user directory
(`<state_dir>/policies`), both in the format policies/README.md describes.

A domain is looked up in the user store first, then through the shipped corpus's domain → owner map
(`doubleclick.net` → `google.com`); a user policy for the owner's domain wins over the shipped one.
Statements are read lazily, once per policy; the user index is re-read when another process (the CLI
while the proxy runs) changed it. Writes are atomic (temporary file + rename) under a file lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import PolicyError
from ..private import make_dirs, open_append, write_atomic
from ..types import Statement
from .retrieval import PolicyIndex

FORMAT = 1


@dataclass
class Policy:
    domain: str
    name: str
    file: Path
    source: str  # shipped | user
    domains: list[str] = field(default_factory=list)
    documents: list[dict] = field(default_factory=list)
    count: int = 0
    kind: str | None = None
    _statements: list[Statement] | None = field(default=None, repr=False)
    _index: PolicyIndex | None = field(default=None, repr=False)

    @property
    def statements(self) -> list[Statement]:
        if self._statements is None:
            self._statements = read_statements(self.file)
        return self._statements

    @property
    def index(self) -> PolicyIndex:
        if self._index is None:
            self._index = PolicyIndex(self.statements)
        return self._index

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


def _atomic_write(path: Path, text: str) -> None:
    """Through a 0600 temporary file and a rename; new directories 0700 (guardian_proxy/private.py)."""
    write_atomic(path, text)


def _load_index(directory: Path, source: str) -> dict[str, Policy]:
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


class PolicyStore:
    def __init__(self, shipped_dir: Path | None = None, user_dir: Path | None = None):
        self.shipped_dir = shipped_dir
        self.user_dir = user_dir
        self._lock = threading.RLock()
        self.shipped = _load_index(shipped_dir, "shipped") if shipped_dir else {}
        self.alias = {d: p.domain for p in self.shipped.values() for d in p.domains}
        self.user: dict[str, Policy] = {}
        self._user_mtime = None
        self._checked = 0.0
        self._refresh_user(force=True)

    # ------------------------------------------------------------------ reading

    def _refresh_user(self, force: bool = False) -> None:
        if self.user_dir is None:
            return
        now = time.monotonic()
        if not force and now - self._checked < 1.0:
            return
        self._checked = now
        try:
            mtime = (self.user_dir / "index.json").stat().st_mtime_ns
        except OSError:
            mtime = None
        if force or mtime != self._user_mtime:
            with self._lock:
                try:
                    self.user = _load_index(self.user_dir, "user")
                except PolicyError:
                    self.user = {}
                self._user_mtime = mtime

    def find(self, domain: str) -> Policy | None:
        """The policy that answers for a registrable domain, or None."""
        self._refresh_user()
        d = (domain or "").lower().rstrip(".")
        if d in self.user:
            return self.user[d]
        primary = self.alias.get(d)
        if primary is None:
            return None
        return self.user.get(primary) or self.shipped.get(primary)

    def all(self) -> list[Policy]:
        self._refresh_user()
        merged = dict(self.shipped)
        merged.update(self.user)
        return sorted(merged.values(), key=lambda p: p.domain)

    # ------------------------------------------------------------------ writing (user store)

    @contextmanager
    def _write_lock(self):
        if self.user_dir is None:
            raise PolicyError("no user policy directory configured")
        make_dirs(self.user_dir)
        with self._lock, os.fdopen(open_append(self.user_dir / ".lock"), "w") as lf:
            fcntl.flock(lf, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lf, fcntl.LOCK_UN)

    def add(self, domain: str, statements: list[Statement], document: dict, name: str | None = None) -> Policy:
        """Store one document's statements for a domain in the user store. A document with the same
        `origin` replaces its earlier statements; other documents of the domain are kept."""
        domain = domain.lower().rstrip(".")
        with self._write_lock():
            self._refresh_user(force=True)
            old = self.user.get(domain)
            origin = document.get("origin")
            kept_docs = [d for d in (old.documents if old else []) if d.get("origin") != origin]
            kept_titles = {d.get("title") or d.get("origin") for d in kept_docs}
            kept = [s for s in (old.statements if old else []) if s.source in kept_titles]
            title = document.get("title") or origin or domain
            n = 2
            while title in kept_titles:  # statements name their document by title: keep titles unique
                title = f"{document.get('title') or origin or domain} ({n})"
                n += 1
            document = {**document, "title": title}
            merged = []
            for s in kept + [s.model_copy(update={"source": title}) for s in statements]:
                merged.append(s.model_copy(update={"id": f"{domain}:{len(merged):04d}", "domain": domain}))
            file = self.user_dir / "statements" / f"{domain}.jsonl"
            _atomic_write(file, "".join(statement_json(s) + "\n" for s in merged))
            policy = Policy(domain=domain, name=name or (old.name if old else domain), file=file, source="user",
                            domains=sorted(set(old.domains if old else []) | {domain}),
                            documents=kept_docs + [document], count=len(merged), _statements=merged)
            users = dict(self.user)
            users[domain] = policy
            _atomic_write(self.user_dir / "index.json", index_json(list(users.values())))
            self.user = users
            self._user_mtime = (self.user_dir / "index.json").stat().st_mtime_ns
            return policy

    def append_log(self, record: dict) -> None:
        """One line per automatic ingestion in `<user_dir>/learned.jsonl` (domains and counts, no page text)."""
        if self.user_dir is None:
            return
        with self._write_lock(), os.fdopen(open_append(self.user_dir / "learned.jsonl"), "a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")

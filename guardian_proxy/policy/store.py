"""The policy store: statements per owner, from the shipped corpus (`guardian_proxy/policies/`) and the user's policies
(added with `policy add` or learned while browsing): the directory `<state_dir>/policies` in the format
policies/README.md describes (state.backend local), or the fleet's Redis (state.backend redis,
guardian_proxy/state/policies_redis.py).

A domain is looked up in the user store first, then through the shipped corpus's domain → owner map
(`doubleclick.net` → `google.com`); a user policy for the owner's domain wins over the shipped one.
Statements are read lazily, once per policy. A policy one process learns (the proxy, from a browsed page)
reaches every other (its worker processes, the CLI; with Redis every gateway) at its next lookup: each
lookup asks whether the user's index changed (local: one stat; Redis: a generation counter, at most every
0.5 s) and reloads only the entries that changed. Writes are atomic (temporary file + rename; MULTI) under
an exclusive lock (a file lock; a Redis lock).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..errors import PolicyError
from ..private import make_dirs, open_append, write_atomic
from ..state import StateUnavailable
from ..types import Statement
from .retrieval import PolicyIndex

log = logging.getLogger("guardian_proxy.policy")

FORMAT = 1
RETRY_S = 5.0  # a shared store that did not answer is asked again after this long
_STALE = object()


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
    loader: Callable[[], list[Statement]] | None = field(default=None, repr=False, compare=False)  # no file
    _statements: list[Statement] | None = field(default=None, repr=False)
    _index: PolicyIndex | None = field(default=None, repr=False)

    @property
    def statements(self) -> list[Statement]:
        if self._statements is None:
            self._statements = self.loader() if self.loader is not None else read_statements(self.file)
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


class PolicyBackend(Protocol):
    """Where the user's policies live (`LocalPolicies` below; guardian_proxy/state/policies_redis.py). Every
    method may raise StateUnavailable (Redis down or slow, bounded by state.timeout_s)."""

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


class LocalPolicies:
    """`<state_dir>/policies`: index.json and statements/<domain>.jsonl, written atomically under `.lock`.
    The change check is the index's (inode, size, mtime): one stat per lookup."""

    check_s = 0.0

    def __init__(self, user_dir: Path):
        self.user_dir = Path(user_dir)
        self.where = str(self.user_dir)
        self._index = os.fspath(self.user_dir / "index.json")

    def stamp(self) -> object:
        try:
            st = os.stat(self._index)
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def load(self) -> dict[str, Policy]:
        return _load_index(self.user_dir, "user")

    @contextmanager
    def writing(self):
        make_dirs(self.user_dir)
        with os.fdopen(open_append(self.user_dir / ".lock"), "w") as lf:
            fcntl.flock(lf, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lf, fcntl.LOCK_UN)

    def statements_file(self, domain: str) -> Path:
        return self.user_dir / "statements" / f"{domain}.jsonl"

    def save(self, policy: Policy, statements: list[Statement], users: dict[str, Policy]) -> None:
        _atomic_write(policy.file, "".join(statement_json(s) + "\n" for s in statements))  # before the index
        _atomic_write(self.user_dir / "index.json", index_json(list(users.values())))

    def append_log(self, record: dict) -> None:
        with self.writing(), os.fdopen(open_append(self.user_dir / "learned.jsonl"), "a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")


def _same(a: Policy, b: Policy) -> bool:
    """The same index entry (then the loaded statements and retrieval index are kept)."""
    return (a.name, a.file, a.domains, a.documents, a.count, a.kind) == \
        (b.name, b.file, b.domains, b.documents, b.count, b.kind)


class PolicyStore:
    """The shipped corpus plus the user's policies (`backend`: LocalPolicies on `user_dir`, the default, or
    the fleet's Redis). Several processes and gateways share the user's policies; none trusts its copy: every
    lookup asks the back end whether they changed (local: a stat; Redis: a generation counter, at most every
    0.5 s) and reloads only the entries that changed. The store not answering keeps the last good policies
    (one warning)."""

    def __init__(self, shipped_dir: Path | None = None, user_dir: Path | None = None,
                 backend: PolicyBackend | None = None):
        self.shipped_dir = shipped_dir
        self.user_dir = user_dir
        self.backend = backend if backend is not None else LocalPolicies(user_dir) if user_dir is not None else None
        self._lock = threading.RLock()
        self.shipped = _load_index(shipped_dir, "shipped") if shipped_dir else {}
        self.alias = {d: p.domain for p in self.shipped.values() for d in p.domains}
        self.user: dict[str, Policy] = {}
        self._user_mtime: object = _STALE
        self._checked = float("-inf")
        self._down: str | None = None
        self._refresh_user(force=True)

    @classmethod
    def for_settings(cls, settings, shipped_dir: Path | None = None) -> PolicyStore:
        """The configured back end (`settings.state`): `<state_dir>/policies`, or the fleet's Redis."""
        from ..state import uses_redis

        if uses_redis(settings):
            from ..state.policies_redis import RedisPolicies

            return cls(shipped_dir, None, RedisPolicies(settings))
        return cls(shipped_dir, Path(settings.state_dir) / "policies")

    # ------------------------------------------------------------------ reading

    def _refresh_user(self, force: bool = False, strict: bool = False) -> None:
        """Reload the user's policies when the back end says they changed (force: ask now). strict: raise
        when the store cannot be read (a writer must not merge into a list it could not see)."""
        b = self.backend
        if b is None:
            return
        now = time.monotonic()
        if not force and now - self._checked < (RETRY_S if self._down else b.check_s):
            return
        self._checked = now
        try:
            stamp = b.stamp()
            if not force and stamp == self._user_mtime:
                self._down = None
                return
            fresh = b.load()
        except (PolicyError, StateUnavailable) as e:
            if strict:
                raise
            if self._down is None:
                log.warning("keeping the last good user policies: %s", e)
            self._down = str(e)
            return
        with self._lock:
            old = self.user
            self.user = {d: old[d] if d in old and _same(old[d], p) else p for d, p in fresh.items()}
            self._user_mtime, self._down = stamp, None

    def refresh(self) -> None:
        """Read the user's policies now; StateUnavailable / PolicyError when they cannot be (the CLI)."""
        self._refresh_user(force=True, strict=True)

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

    def user_policy(self, domain: str) -> Policy | None:
        """The user's policy for exactly this domain (any process's latest), or None."""
        self._refresh_user()
        return self.user.get(domain)

    def all(self) -> list[Policy]:
        self._refresh_user()
        merged = dict(self.shipped)
        merged.update(self.user)
        return sorted(merged.values(), key=lambda p: p.domain)

    # ------------------------------------------------------------------ writing (user store)

    @contextmanager
    def _write_lock(self):
        if self.backend is None:
            raise PolicyError("no user policy directory configured")
        with self._lock, self.backend.writing():
            yield

    def add(self, domain: str, statements: list[Statement], document: dict, name: str | None = None) -> Policy:
        """Store one document's statements for a domain in the user store. A document with the same
        `origin` replaces its earlier statements; other documents of the domain are kept."""
        domain = domain.lower().rstrip(".")
        with self._write_lock():
            self._refresh_user(force=True, strict=True)
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
            policy = Policy(domain=domain, name=name or (old.name if old else domain),
                            file=self.backend.statements_file(domain), source="user",
                            domains=sorted(set(old.domains if old else []) | {domain}),
                            documents=kept_docs + [document], count=len(merged), _statements=merged)
            users = dict(self.user)
            users[domain] = policy
            self.backend.save(policy, merged, users)
            self.user = users
            self._checked, self._user_mtime = float("-inf"), _STALE  # the next lookup reads the new stamp
            return policy

    def append_log(self, record: dict) -> None:
        """One line per automatic ingestion in `<user_dir>/learned.jsonl` (domains and counts, no page text)."""
        if self.backend is None:
            return
        try:
            self.backend.append_log(record)
        except StateUnavailable as e:
            log.warning("could not record a learned policy in %s: %s", self.backend.where, e)

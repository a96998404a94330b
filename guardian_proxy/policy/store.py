"""The policy store: statements per owner, from the shipped corpus (`guardian_proxy/policies/`) and the user's policies
(added with `policy add` or learned while browsing): the directory `<state_dir>/policies` in the format
policies/README.md describes (state.backend local), or the fleet's Redis (state.backend redis); the back end
and the record type are guardian_proxy/state/policies.py.

A domain is looked up in the user store first, then through the shipped corpus's domain → owner map
(`doubleclick.net` → `google.com`); a user policy for the owner's domain wins over the shipped one.
Statements are read lazily, once per policy. A policy one process learns (the proxy, from a browsed page)
reaches every other (its worker processes, the CLI; with Redis every gateway) at its next lookup: each
lookup asks whether the user's index changed (local: one stat; Redis: a generation counter, at most every
0.5 s) and reloads only the entries that changed. Writes are atomic (temporary file + rename; MULTI) under
an exclusive lock (a file lock; a Redis lock).
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from ..errors import PolicyError
from ..state import StateUnavailable, open_policies
from ..state.policies import Policy, PolicyBackend, load_index
from ..types import Statement
from .retrieval import PolicyIndex

log = logging.getLogger("guardian_proxy.policy")

RETRY_S = 5.0  # a shared store that did not answer is asked again after this long
_STALE = object()


def policy_index(policy: Policy) -> PolicyIndex:
    """The policy's retrieval index, built once per policy record (a changed policy is a new record)."""
    index = policy.derived.get("index")
    if index is None:
        index = policy.derived["index"] = PolicyIndex(policy.statements)
    return index


def _same(a: Policy, b: Policy) -> bool:
    """The same index entry (then the loaded statements and retrieval index are kept)."""
    return (a.name, a.file, a.domains, a.documents, a.count, a.kind) == \
        (b.name, b.file, b.domains, b.documents, b.count, b.kind)


class PolicyStore:
    """The shipped corpus plus the user's policies (`backend`: the local back end on `user_dir`, the default,
    or the fleet's Redis: guardian_proxy.state.open_policies). Several processes and gateways share the user's policies; none trusts its copy: every
    lookup asks the back end whether they changed (local: a stat; Redis: a generation counter, at most every
    0.5 s) and reloads only the entries that changed. The store not answering keeps the last good policies
    (one warning)."""

    def __init__(self, shipped_dir: Path | None = None, user_dir: Path | None = None,
                 backend: PolicyBackend | None = None):
        self.shipped_dir = shipped_dir
        self.user_dir = user_dir
        self.backend = backend if backend is not None else \
            open_policies(directory=user_dir) if user_dir is not None else None
        self._lock = threading.RLock()
        self.shipped = load_index(shipped_dir, "shipped") if shipped_dir else {}
        self.alias = {d: p.domain for p in self.shipped.values() for d in p.domains}
        self.user: dict[str, Policy] = {}
        self._user_mtime: object = _STALE
        self._checked = float("-inf")
        self._down: str | None = None
        self._refresh_user(force=True)

    @classmethod
    def for_settings(cls, settings, shipped_dir: Path | None = None) -> PolicyStore:
        """The configured back end (`settings.state`): `<state_dir>/policies`, or the fleet's Redis."""
        return cls(shipped_dir, backend=open_policies(settings))

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

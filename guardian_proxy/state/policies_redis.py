"""The user's policies in Redis (state.backend redis): a policy one gateway learns or is given (`policy add`)
answers on every gateway of the fleet.

    <prefix>:policies:index      hash sha256(domain) → the index entry (as in index.json: domain, name,
                                 domains, documents, statement count)
    <prefix>:policies:st:<hash>  the policy's statements, JSON lines (read once per policy, when first used)
    <prefix>:policies:gen        raised by every write: readers compare it (one GET, at most every CHECK_S
                                 seconds) and reload the index, keeping the entries that did not change
    <prefix>:policies:learned    the last LEARNED_KEPT automatic ingestions (domains and counts, no page text)
    <prefix>:policies:lock       writers' lock (a policy's documents are merged read-modify-write)

Keys hold hashes only (the domains a user's browsing learned policies for are not spelled in key names).
Every command is bounded by state.timeout_s; a failure is StateUnavailable (the evidence stage's fail rule,
or the store's last good policies).
"""

from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager
from pathlib import Path

from ..errors import PolicyError
from ..types import Statement
from .base import StateUnavailable, key, redis_client, where
from .policies import Policy, statement_json

CHECK_S = 0.5
LEARNED_KEPT = 10_000
LOCK_S = 60.0  # a writer that died frees the lock after this long


def domain_hash(domain: str) -> str:
    return hashlib.sha256(domain.encode()).hexdigest()[:32]


class RedisPolicies:
    check_s = CHECK_S

    def __init__(self, settings):
        self.settings = settings
        self.where = where(settings)
        self.k_index, self.k_gen, self.k_learned, self.k_lock = (
            key(settings, "policies", part) for part in ("index", "gen", "learned", "lock"))

    def _st_key(self, domain: str) -> str:
        return key(self.settings, "policies", "st", domain_hash(domain))

    def _run(self, fn):
        import redis

        try:
            return fn(redis_client(self.settings))
        except (redis.RedisError, OSError) as e:
            raise StateUnavailable(f"the policy store ({self.where}) did not answer: {type(e).__name__}: {e}") \
                from None

    def stamp(self) -> int:
        return int(self._run(lambda c: c.get(self.k_gen)) or 0)

    def statements_file(self, domain: str) -> Path:
        return Path("statements") / f"{domain}.jsonl"  # a name only: the statements are in Redis

    def load(self) -> dict[str, Policy]:
        out = {}
        for raw in self._run(lambda c: c.hvals(self.k_index)):
            try:
                p = json.loads(raw)
                dom = p["domain"]
                out[dom] = Policy(domain=dom, name=p.get("name") or dom, file=self.statements_file(dom),
                                  source="user", domains=sorted(set(p.get("domains") or []) | {dom}),
                                  documents=p.get("documents") or [], count=int(p.get("statements", 0)),
                                  kind=p.get("kind"), loader=lambda d=dom: self.read_statements(d))
            except (ValueError, KeyError, TypeError) as e:
                raise PolicyError(f"cannot read the policy index in {self.where}: {e}") from None
        return out

    def read_statements(self, domain: str) -> list[Statement]:
        raw = self._run(lambda c: c.get(self._st_key(domain)))
        try:
            return [Statement.model_validate(json.loads(line)) for line in (raw or b"").decode().splitlines()
                    if line.strip()]
        except ValueError as e:
            raise PolicyError(f"cannot read the statements of {domain} in {self.where}: {e}") from None

    @contextmanager
    def writing(self):
        st = self.settings.state
        lock = self._run(lambda c: c.lock(self.k_lock, timeout=LOCK_S, blocking_timeout=max(5.0, st.timeout_s)))
        if not self._run(lambda c: lock.acquire()):
            raise StateUnavailable(f"the policy store ({self.where}) is locked by another writer")
        try:
            yield
        finally:
            import redis

            try:
                lock.release()
            except (redis.RedisError, OSError):
                pass  # it expires

    def save(self, policy: Policy, statements: list[Statement], users: dict[str, Policy]) -> None:
        entry = {"domain": policy.domain, "name": policy.name, "domains": policy.domains,
                 **({"kind": policy.kind} if policy.kind else {}), "documents": policy.documents,
                 "statements": policy.count}

        def go(c):
            p = c.pipeline(transaction=True)
            p.set(self._st_key(policy.domain), "".join(statement_json(s) + "\n" for s in statements))
            p.hset(self.k_index, domain_hash(policy.domain), json.dumps(entry, ensure_ascii=False))
            p.incr(self.k_gen)
            p.execute()

        self._run(go)

    def append_log(self, record: dict) -> None:
        def go(c):
            p = c.pipeline(transaction=True)
            p.lpush(self.k_learned, json.dumps(record, ensure_ascii=False))
            p.ltrim(self.k_learned, 0, LEARNED_KEPT - 1)
            p.execute()

        self._run(go)

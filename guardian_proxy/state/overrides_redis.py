"""The user's overrides in Redis (state.backend redis), shared by every gateway of the fleet: an override made
on one gateway (CLI, dashboard, block page) applies on every other at its next check.

    <prefix>:overrides:list     the rules, JSON (domains, owners, categories, terms: no personal values)
    <prefix>:overrides:gen      a counter raised by every write: readers compare it (one GET, at most every
                                CHECK_S seconds) and reload the list only when it moved
    <prefix>:overrides:spent    hash rule id → when: a once rule is spent by HSETNX, so of all the gateways
                                and processes racing for it exactly one gets it
    <prefix>:overrides:counts   hash rule id → matches (HINCRBY: the counts of every process add up)
    <prefix>:overrides:last     hash rule id → the last match time

Writes are read-modify-write under WATCH/MULTI (retried when another writer came first). Every command is
bounded by state.timeout_s; a failure is StateUnavailable, and the store keeps its last good list.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta

from ..errors import ConfigError
from .base import StateUnavailable, key, redis_client, where
from .overrides import dump_rules, parse_rules
from .overrides_local import PRUNE_S

CHECK_S = 0.5  # a reader looks at the generation counter at most this often


class RedisOverrides:
    shared = True  # several gateways: an until-restart rule would name one gateway's process
    check_s = CHECK_S
    path = None  # no file: the rules are in Redis

    def __init__(self, settings):
        self.settings = settings
        self.where = where(settings)
        self.fix = "fix it with `guardian-proxy overrides --remove ID`, or delete the key"
        self.k_list, self.k_gen, self.k_spent, self.k_counts, self.k_last = (
            key(settings, "overrides", part) for part in ("list", "gen", "spent", "counts", "last"))

    def _client(self):
        return redis_client(self.settings)

    def _fail(self, e: Exception) -> StateUnavailable:
        return StateUnavailable(f"the override store ({self.where}) did not answer: {type(e).__name__}: {e}")

    def _run(self, fn):
        import redis

        try:
            return fn(self._client())
        except (redis.RedisError, OSError) as e:
            raise self._fail(e) from None

    # ------------------------------------------------------------------ rules

    def stamp(self) -> int:
        raw = self._run(lambda c: c.get(self.k_gen))
        return int(raw or 0)

    def _parse_raw(self, raw) -> list:
        if raw is None:
            return []
        try:
            data = json.loads(raw)
        except ValueError:
            raise ConfigError(f"overrides in {self.where}: the list is not JSON; {self.fix}") from None
        return parse_rules(data, f"{self.where} key {self.k_list}")

    def load(self) -> list:
        return self._parse_raw(self._run(lambda c: c.get(self.k_list)))

    def update(self, change: Callable) -> None:
        """Read, change and write the list atomically (WATCH/MULTI; retried while another writer came first)."""
        import redis

        def go(c):
            with c.pipeline() as p:
                for _ in range(50):
                    try:
                        p.watch(self.k_list)
                        old = self._parse_raw(p.get(self.k_list))
                        new = change(old)
                        if new is None:
                            p.unwatch()
                            return
                        gone = {o.id for o in old if o.id} - {o.id for o in new if o.id}
                        p.multi()
                        p.set(self.k_list, json.dumps({"overrides": dump_rules(new)}))
                        p.incr(self.k_gen)
                        if gone:
                            p.hdel(self.k_counts, *gone)
                            p.hdel(self.k_last, *gone)
                        p.execute()
                        self._prune(c, {o.id for o in new if o.id})
                        return
                    except redis.WatchError:
                        continue
                raise redis.RedisError("the override list kept changing under this write")

        self._run(go)

    def _prune(self, c, live: set[str]) -> None:
        """Spent marks of rules gone from the list for a day (one gateway may still hold the old list)."""
        cutoff = datetime.now().astimezone() - timedelta(seconds=PRUNE_S)
        old = []
        for k, v in c.hgetall(self.k_spent).items():
            rid = k.decode()
            if rid in live:
                continue
            try:
                if datetime.fromisoformat(v.decode()) < cutoff:
                    old.append(rid)
            except ValueError:
                old.append(rid)
        if old:
            c.hdel(self.k_spent, *old)

    # ------------------------------------------------------------------ once rules

    def spend(self, rule_id: str, when: datetime) -> bool:
        """True when this call spent the once rule (HSETNX), False when some process of the fleet had."""
        return bool(self._run(lambda c: c.hsetnx(self.k_spent, rule_id, when.isoformat())))

    def spent(self) -> dict[str, datetime]:
        out = {}
        for k, v in self._run(lambda c: c.hgetall(self.k_spent)).items():
            try:
                out[k.decode()] = datetime.fromisoformat(v.decode())
            except ValueError:
                continue
        return out

    # ------------------------------------------------------------------ counts

    def counts(self) -> dict[str, dict]:
        def go(c):
            p = c.pipeline(transaction=False)
            p.hgetall(self.k_counts)
            p.hgetall(self.k_last)
            return p.execute()

        matched, last = self._run(go)
        out: dict[str, dict] = {}
        for k, v in matched.items():
            c = out.setdefault(k.decode(), {"matched": 0})
            c["matched"] = int(v)
        for k, v in last.items():
            out.setdefault(k.decode(), {"matched": 0})["last"] = v.decode()
        return out

    def flush(self, pending: dict[str, tuple[int, str]], spent: dict, keep: set[str]) -> None:
        """Add this process's counts (HINCRBY); the spent marks are already in Redis."""
        if not pending:
            return

        def go(c):
            p = c.pipeline(transaction=True)
            for rid, (n, last) in pending.items():
                p.hincrby(self.k_counts, rid, n)
                p.hset(self.k_last, rid, last)
            p.execute()

        self._run(go)

"""The vault's rows in Redis, shared by every gateway of a fleet (keys under `state.prefix`, here `P`):

    P:s:<sid>          hash: created, last_seen, rev, meta (sealed)
    P:e:<sid>          hash: lookup → sealed entity
    P:a:<alias>        string: the sid a response id continues (the alias is an HMAC)
    P:al:<sid>         set: the aliases of a session (to wipe them with it)
    P:sessions-by-last-seen   sorted set: sid by last_seen (listing, expiry)
    P:lock:s:<sid>     the session's lock (redis-py's Lock: a token, a lease of LEASE_S)

No key or field holds a value: sids, lookups and aliases are HMACs under the fleet's vault key, and what the
hashes hold is AES-GCM ciphertext. A save is one MULTI/EXEC transaction and sets every key of the session to
expire after `session.idle_expiry_s` (the idle expiry). Every command has the client's timeout
(`state.timeout_s`); a Redis error or timeout raises StateUnavailable, so the caller's fail rule applies.
"""

from __future__ import annotations

import functools
import logging
import time
from contextlib import contextmanager

from .base import StateUnavailable, key, redis_client
from .filelock import LOCK_WAIT_S
from .sessions import SID_LEN, Record

log = logging.getLogger("guardian_proxy")

LEASE_S = 30.0  # a lock whose holder died is free after this long


def _unavailable(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        import redis

        try:
            return fn(*args, **kwargs)
        except redis.RedisError as e:
            raise StateUnavailable(f"redis: {type(e).__name__}") from e
    return wrapper


def _s(b) -> str:
    return b.decode() if isinstance(b, bytes) else b


class RedisSessions:
    def __init__(self, settings):
        self.settings = settings
        self.r = redis_client(settings)
        self.ttl = int(settings.session.idle_expiry_s)
        self.index = key(settings, "sessions-by-last-seen")

    def _k(self, kind: str, part: str) -> str:
        return key(self.settings, kind, part)

    @_unavailable
    def head(self, sid: str) -> tuple[int, float] | None:
        rev, last = self.r.hmget(self._k("s", sid), "rev", "last_seen")
        return (int(rev or 0), float(last)) if last is not None else None

    @_unavailable
    def load(self, sid: str) -> Record | None:
        p = self.r.pipeline(transaction=True)
        p.hmget(self._k("s", sid), "created", "last_seen", "rev", "meta")
        p.hgetall(self._k("e", sid))
        (created, last, rev, meta), ents = p.execute()
        if last is None:
            return None
        return (float(created or last), float(last), int(rev or 0), meta or b"",
                [(_s(k), v) for k, v in ents.items()])

    @_unavailable
    def save(self, sid: str, created: float, last_seen: float, meta: bytes,
             entities: list[tuple[str, bytes]]) -> int:
        s, e, al = self._k("s", sid), self._k("e", sid), self._k("al", sid)
        p = self.r.pipeline(transaction=True)
        p.hsetnx(s, "created", repr(created))
        p.hset(s, mapping={"last_seen": repr(last_seen), "meta": meta})
        p.hincrby(s, "rev", 1)
        if entities:
            p.hset(e, mapping=dict(entities))
        for k in (s, e, al):
            p.expire(k, self.ttl)
        p.zadd(self.index, {sid: last_seen})
        return int(p.execute()[2])

    @_unavailable
    def add_alias(self, alias: str, sid: str) -> None:
        al = self._k("al", sid)
        p = self.r.pipeline(transaction=True)
        p.set(self._k("a", alias), sid, ex=self.ttl)
        p.sadd(al, alias)
        p.expire(al, self.ttl)
        p.execute()

    @_unavailable
    def resolve(self, alias: str) -> str | None:
        sid = self.r.get(self._k("a", alias))
        return _s(sid) if sid is not None else None

    @_unavailable
    def sessions(self) -> list[tuple[str, float, float, bytes, int]]:
        sids = [_s(x) for x in self.r.zrevrange(self.index, 0, -1)]
        p = self.r.pipeline(transaction=False)
        for sid in sids:
            p.hmget(self._k("s", sid), "created", "last_seen", "meta")
            p.hlen(self._k("e", sid))
        res = p.execute()
        out, gone = [], []
        for i, sid in enumerate(sids):
            (created, last, meta), n = res[2 * i], res[2 * i + 1]
            if last is None:  # expired (its keys' TTL) since it was indexed
                gone.append(sid)
                continue
            out.append((sid, float(created or last), float(last), meta or b"", int(n)))
        if gone:
            self.r.zrem(self.index, *gone)
        return out

    @_unavailable
    def wipe(self, prefix: str | None = None, older_than: float | None = None) -> int:
        if older_than is not None and prefix is None:
            sids = {_s(x) for x in self.r.zrangebyscore(self.index, "-inf", f"({older_than!r}")}
        elif prefix is not None and len(prefix) >= SID_LEN:  # a whole id (expiry, the CLI): no scan
            sids = {prefix}
        else:
            sids = {_s(x) for x in self.r.zrange(self.index, 0, -1)}
            sids |= {_s(k).rsplit(":", 1)[1] for k in self.r.scan_iter(match=self._k("s", "*"), count=500)}
            if prefix is not None:
                sids = {s for s in sids if s.startswith(prefix)}
        n = 0
        for sid in sids:
            aliases = [self._k("a", _s(a)) for a in self.r.smembers(self._k("al", sid))]
            p = self.r.pipeline(transaction=True)
            p.delete(self._k("s", sid))
            p.delete(self._k("e", sid), self._k("al", sid), *aliases)
            p.zrem(self.index, sid)
            n += int(p.execute()[0])
        if prefix is None and older_than is None:  # aliases of sessions gone before (their TTL): all of them
            for k in self.r.scan_iter(match=self._k("a", "*"), count=500):
                self.r.delete(k)
        return n

    @contextmanager
    def lock(self, sid: str):
        import redis

        lk = self.r.lock(self._k("lock", "s:" + sid), timeout=LEASE_S, sleep=0.002, blocking=True,
                         blocking_timeout=LOCK_WAIT_S, thread_local=False)
        try:
            got = lk.acquire()
        except redis.RedisError as e:
            raise StateUnavailable(f"redis: {type(e).__name__}") from e
        if not got:
            raise StateUnavailable(f"the session lock is held by another gateway past {LOCK_WAIT_S:g} s")
        start = time.monotonic()
        try:
            yield
        finally:
            try:
                lk.release()
            except redis.exceptions.LockError:
                log.warning("guardian: a session lock's lease (%g s) ran out after %.1f s", LEASE_S,
                            time.monotonic() - start)
            except redis.RedisError as e:  # the lease frees it
                log.warning("guardian: a session lock could not be released (%s)", type(e).__name__)

    def close(self) -> None:
        pass  # the client is shared by the process (guardian_proxy.state.redis_client)

"""The scratch of a fleet: a Redis string `P:x:<namespace>:<key>` per key with a TTL (milliseconds). A swap
is one command (`SET … PX … GET`, or `GETDEL` to delete), so it costs one round trip; a Redis error or
timeout (`state.timeout_s`) raises StateUnavailable."""

from __future__ import annotations

from .base import StateUnavailable, redis_client
from .base import key as state_key


class RedisScratch:
    def __init__(self, settings, namespace: str):
        self.settings = settings
        self.ns = namespace
        self.r = redis_client(settings)

    def _k(self, k: str) -> str:
        return state_key(self.settings, "x", self.ns, k)

    def swap(self, key: str, value: bytes | None, ttl_s: float) -> bytes | None:
        import redis

        try:
            if value is None:
                return self.r.getdel(self._k(key))
            return self.r.set(self._k(key), value, px=max(1, int(ttl_s * 1000)), get=True)
        except redis.RedisError as e:
            raise StateUnavailable(f"redis: {type(e).__name__}") from e

    def put(self, key: str, value: bytes | None, ttl_s: float) -> None:
        import redis

        try:
            if value is None:
                self.r.delete(self._k(key))
            else:
                self.r.set(self._k(key), value, px=max(1, int(ttl_s * 1000)))
        except redis.RedisError as e:
            raise StateUnavailable(f"redis: {type(e).__name__}") from e

    def close(self) -> None:
        pass  # the client is the process's (guardian_proxy.state.redis_client)

"""The gateway's shared state behind one small interface, with two back ends (`settings.state.backend`):

    local   files and SQLite under the state dir (the default: one machine needs nothing else; every worker
            process of the gateway shares them)
    redis   one Redis server (the `redis` client library) shared by several gateways, so they act as one

Per kind of state: one module with its interface (a Protocol) and record types, one module per back end, and
one factory here that opens the back end `settings.state` names. A consumer calls the factory and never imports
a back end; a back end imports its kind's module and base.py (what every back end shares), never this module
nor a consumer, so no import goes in a circle.

    kind               interface, records             factory                  local / redis back end
    sessions           sessions.SessionRows, Record   open_sessions            sessions_sqlite / sessions_redis
    overrides          overrides.OverrideBackend      open_overrides           overrides_local / overrides_redis
    user policies      policies.PolicyBackend, Policy open_policies            policies_local / policies_redis
    recent decisions   decisions.DecisionFeed         open_feed, feed_for      decisions_local / decisions_redis
    split values       scratch.Scratch                open_scratch             scratch_sqlite / scratch_redis

The local back ends also open on a path alone (`open_overrides(path=...)`, `open_policies(directory=...)`,
`open_sessions(state_dir=...)`), for the tools and tests that have no settings.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .base import (
    StateUnavailable,
    fleet_key,
    gateway_id,
    key,
    new_key,
    redis_client,
    uses_redis,
    where,
)

if TYPE_CHECKING:
    from .decisions import DecisionFeed
    from .overrides import OverrideBackend
    from .policies import PolicyBackend
    from .scratch import Scratch
    from .sessions import SessionRows

__all__ = ["StateUnavailable", "feed_for", "fleet_key", "gateway_id", "key", "new_key", "open_feed",
           "open_overrides", "open_policies", "open_scratch", "open_sessions", "redis_client", "uses_redis", "where"]


def open_sessions(settings=None, *, state_dir: Path | None = None) -> SessionRows:
    """The vault's rows: `<state_dir>/sessions.db`, or the fleet's Redis. `state_dir` instead of settings: the
    local back end under that directory. Open the local one under the state dir's start-up lock
    (guardian_proxy/session/vault.py holds it: creating the schema is not safe to race)."""
    if settings is not None and uses_redis(settings):
        from .sessions_redis import RedisSessions

        return RedisSessions(settings)
    from .sessions_sqlite import SqliteSessions

    return SqliteSessions(Path(state_dir) if state_dir is not None else Path(settings.state_dir))


def open_overrides(settings=None, *, path: Path | None = None) -> OverrideBackend:
    """The stored override rules: `<state_dir>/overrides.yaml`, or the fleet's list in Redis. `path` instead of
    settings: the local back end on that file. Raises ConfigError for an unusable Redis URL."""
    if settings is not None and uses_redis(settings):
        from .overrides_redis import RedisOverrides

        return RedisOverrides(settings)
    from .overrides import FILE_NAME
    from .overrides_local import LocalOverrides

    return LocalOverrides(Path(path) if path is not None else Path(settings.state_dir) / FILE_NAME)


def open_policies(settings=None, *, directory: Path | None = None) -> PolicyBackend:
    """The user's policies: `<state_dir>/policies`, or the fleet's Redis. `directory` instead of settings: the
    local back end on that directory."""
    if settings is not None and uses_redis(settings):
        from .policies_redis import RedisPolicies

        return RedisPolicies(settings)
    from .policies_local import LocalPolicies

    return LocalPolicies(Path(directory) if directory is not None else Path(settings.state_dir) / "policies")


def open_feed(settings) -> DecisionFeed:
    """The decision feed for reading (and, for redis, publishing). Raises ConfigError for an unusable Redis URL;
    reading an unreachable Redis raises StateUnavailable."""
    if uses_redis(settings):
        from .decisions_redis import RedisFeed

        return RedisFeed(settings)
    from .decisions_local import LocalFeed

    return LocalFeed(settings)


def feed_for(settings) -> DecisionFeed | None:
    """The feed a gateway publishes its decisions to: the fleet's, or None for the local back end (its JSONL log
    is the whole feed, so there is nothing more to write)."""
    return open_feed(settings) if uses_redis(settings) else None


def open_scratch(settings, namespace: str) -> Scratch:
    """Short-lived shared state for one kind of state (`namespace`: a short name): `<state_dir>/scratch.db`, or
    the fleet's Redis."""
    if uses_redis(settings):
        from .scratch_redis import RedisScratch

        return RedisScratch(settings, namespace)
    from .scratch_sqlite import SqliteScratch

    return SqliteScratch(settings.state_dir, namespace)

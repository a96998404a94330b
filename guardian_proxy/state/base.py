"""What every back end of the shared state shares: the Redis connection and key names, the vault key of a fleet,
the gateway's name in the fleet view, and the error a store that does not answer raises.

Keys never hold a raw value: session ids and lookups are HMACs under the vault key, destinations are hashed.
"""

from __future__ import annotations

import base64
import os
import socket
import threading
from pathlib import Path

from ..errors import ConfigError

_clients: dict[tuple, object] = {}
_clients_lock = threading.Lock()


class StateUnavailable(Exception):
    """The shared store cannot be reached or answered out of time; the stage's fail rule applies."""


def uses_redis(settings) -> bool:
    return settings.state.backend == "redis"


def redis_client(settings):
    """One `redis.Redis` per (url, process), thread-safe (its own connection pool). Raises ConfigError for a
    URL the client cannot use; never connects here (the first command does)."""
    st = settings.state
    key = (st.url, st.timeout_s, os.getpid())
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            try:
                import redis
            except ImportError as e:  # a dependency of the package: only a broken install lacks it
                raise ConfigError("state.backend redis needs the redis client library: pip install redis") from e
            try:
                client = redis.Redis.from_url(st.url, socket_timeout=st.timeout_s, socket_connect_timeout=st.timeout_s,
                                              health_check_interval=30)
            except ValueError as e:
                raise ConfigError(f"state.url is not a Redis URL ({e}); use redis://HOST:PORT/DB") from None
            _clients[key] = client
        return client


def key(settings, *parts: str) -> str:
    """A Redis key under the fleet's prefix: `guardian:sessions:<sid>`. Parts are ids or HMACs, never values."""
    return ":".join((settings.state.prefix, *parts))


def where(settings) -> str:
    """The store in words, without a password: `redis 127.0.0.1:6379/0 (prefix guardian)` or the state dir."""
    st = settings.state
    if st.backend != "redis":
        return f"local files in {settings.state_dir}"
    from urllib.parse import urlsplit

    u = urlsplit(st.url or "")
    return f"redis {u.hostname or '?'}:{u.port or 6379}{u.path or '/0'} (prefix {st.prefix})"


def fleet_key(settings) -> bytes | None:
    """The vault key every gateway of a Redis fleet is given: the file `state.key_file`, else the environment
    variable `state.key_env` (base64 of 32 bytes). None for the local back end (the key is <state_dir>/vault.key,
    created on first use). Raises ConfigError naming the fix when a Redis fleet has none or a bad one."""
    st = settings.state
    if st.backend != "redis":
        return None
    fix = ("give every gateway of the fleet the same key: `guardian-proxy state new-key > FILE`, then "
           f"state.key_file: FILE (mode 0600) or the environment variable {st.key_env}")
    if st.key_file is not None:
        path = Path(st.key_file).expanduser()
        try:
            text = path.read_bytes().strip()
        except OSError as e:
            raise ConfigError(f"cannot read the vault key {path} ({e.strerror or type(e).__name__}); {fix}") from None
        where_ = str(path)
    else:
        env = os.environ.get(st.key_env)
        if not env:
            raise ConfigError(f"state.backend redis needs a vault key shared by the fleet; {fix}")
        text, where_ = env.strip().encode(), f"${st.key_env}"
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise ConfigError(f"the vault key in {where_} is not a base64-encoded 32-byte key; {fix}")
    return raw


def new_key() -> str:
    """A fresh vault key, base64 (for `guardian-proxy state new-key`)."""
    return base64.b64encode(os.urandom(32)).decode()


def gateway_id(settings) -> str:
    """This gateway's name in the fleet view: `state.gateway_id`, else `<host name>:<proxy port>`."""
    return settings.state.gateway_id or f"{socket.gethostname()}:{settings.port}"

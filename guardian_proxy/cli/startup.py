"""Start-up checks of `guardian-proxy run`, made before any model loads.

Every file the proxy will need from the state directory is checked first: the state directory (a
directory, writable), the decision log (a file that can be appended to), `overrides.yaml` (it must
validate: a proxy does not start with the user's overrides silently missing), the vault key and the
experience key (readable keys, else the sessions / cases behind them are lost). A problem is a
ConfigError in one line naming the file and the fix; `run` prints it and exits 2, never a traceback.
"""

from __future__ import annotations

import base64
import os
import sys
import tempfile
from pathlib import Path

from ..config import Settings
from ..errors import ConfigError
from ..overrides import OverrideStore
from ..private import make_dirs
from ..resources import ensure_private_dir

ELSEWHERE = "or pass --state-dir DIR"


def _why(e: OSError) -> str:
    return e.strerror or type(e).__name__


def check_state_dir(state: Path) -> None:
    """The state directory exists (created 0700 if not), is a directory, and takes a new file."""
    try:
        if state.exists() and not state.is_dir():
            raise ConfigError(f"state dir {state} is not a directory (a file is in its place): move the file away "
                              f"{ELSEWHERE}")
        ensure_private_dir(state)
    except OSError as e:
        raise ConfigError(f"cannot create state dir {state} ({_why(e)}): create it, writable by you, "
                          f"{ELSEWHERE}") from e
    try:
        fd, probe = tempfile.mkstemp(dir=state, prefix=".write-check-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise ConfigError(f"state dir {state} is not writable ({_why(e)}): make it writable (chmod u+rwx {state}) "
                          f"{ELSEWHERE}") from e
    for sub in ("policies", "experience"):
        p = state / sub
        if p.exists() and not p.is_dir():
            raise ConfigError(f"{p} is not a directory (a file is in its place): move it away {ELSEWHERE}")


def check_decision_log(log: Path) -> None:
    """The decision log is a regular file (or can be created) that takes appended lines."""
    try:
        if log.is_dir():
            raise ConfigError(f"decision log {log} is a directory: remove it, or pass --log FILE")
        make_dirs(log.parent)
        os.close(os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600))
    except OSError as e:
        raise ConfigError(f"cannot write the decision log {log} ({_why(e)}): make it writable, or pass --log FILE") \
            from e


def _key_bytes(key: Path, what: str, fix: str) -> bytes | None:
    """An existing key file's bytes (None: not there yet, it is created on first use)."""
    try:
        return key.read_bytes().strip() if key.exists() else None
    except OSError as e:
        raise ConfigError(f"cannot read the {what} {key} ({_why(e)}): {fix}") from e


def check_vault_key(state: Path) -> None:
    """An existing vault key holds 32 base64-encoded bytes."""
    key, db = state / "vault.key", state / "sessions.db"
    fix = f"restore it from a backup, or move it and {db.name} aside to start with no conversation sessions"
    raw = _key_bytes(key, "vault key", fix)
    if raw is None:
        return
    try:
        ok = len(base64.b64decode(raw)) == 32  # as the vault reads it (session/vault.py)
    except ValueError:
        ok = False
    if not ok:
        raise ConfigError(f"vault key {key} is not a base64-encoded 32-byte key: {fix}")


def check_experience_key(directory: Path) -> None:
    """An existing experience key is a Fernet key."""
    key = directory / "key"
    fix = f"restore it from a backup, or move {directory} aside (its recorded cases cannot be read without it)"
    raw = _key_bytes(key, "experience key", fix)
    if raw is None:
        return
    from cryptography.fernet import Fernet

    try:
        Fernet(raw)
    except ValueError as e:
        raise ConfigError(f"experience key {key} is not a Fernet key: {fix}") from e


def check_shared_store(s: Settings) -> None:
    """A Redis fleet: the vault key every gateway is given must be there and valid (fatal: without it no gateway
    could read another's sessions); a store that does not answer yet is one warning (Redis may come up after the
    gateway, and until it does the stages' fail rules apply: a chat that cannot be pseudonymised does not leave)."""
    from .. import state

    state.fleet_key(s)
    try:
        state.redis_client(s).ping()
    except Exception as e:  # redis.RedisError and socket errors alike
        sys.stderr.write(f"warning: the shared store ({state.where(s)}) does not answer yet ({type(e).__name__}); "
                         "chat sessions fail closed until it does\n")


def check_state(s: Settings) -> None:
    """All of the above for these settings; raises a one-line ConfigError at the first problem."""
    state = Path(s.state_dir)
    check_state_dir(state)
    check_decision_log(Path(s.decision_log))
    OverrideStore.for_settings(s)
    if s.state.backend == "redis":
        check_shared_store(s)
    else:
        check_vault_key(state)
    if s.agents.experience_log:
        check_experience_key(state / "experience")

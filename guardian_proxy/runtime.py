"""The runtime file: what the running proxy really is, for `doctor`, `env` and other tools.

`<state_dir>/runtime.json` (0600, written atomically) is written by `guardian-proxy run` once the proxy
listens and removed when it exits. It holds {"pid", "listen": [[host, port], ...] (the addresses really
bound), "mode", "dashboard_url" (null when the dashboard is off), "confdir", "ca" (the CA certificate's
path), "version", "started" (ISO 8601, UTC)}, and "redirect_upstream": [host, port] when every request goes to one
address (`--redirect-upstream`; `note`d by the addon where it knows it). `read` returns None when the file is absent, unreadable, not
such an object, or names a process that is no longer alive (a proxy killed with SIGKILL leaves a stale
file: it is ignored, never trusted). `remove` deletes the file only when it names this process or a dead
one, so a second proxy sharing the state dir keeps its own file.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from .private import make_dirs, write_atomic

FILE_NAME = "runtime.json"
KEYS = ("pid", "listen", "mode", "dashboard_url", "confdir", "ca", "version", "started", "redirect_upstream")
_NOTED: dict = {}  # facts of this process the record carries, told by the code that knows them (`note`)


def path(state_dir: Path) -> Path:
    return Path(state_dir) / FILE_NAME


def version() -> str:
    try:
        from importlib.metadata import version as v

        return v("guardian-proxy")
    except Exception:
        return "unknown"


def note(redirect_upstream: tuple[str, int] | None = None) -> None:
    """What this proxy does that its record must say, from where it is known (the addon's `run_proxy`): the
    `--redirect-upstream` address (None: real connections). `info` adds it."""
    _NOTED["redirect_upstream"] = [str(redirect_upstream[0]), int(redirect_upstream[1])] if redirect_upstream else None


def info(listen: list[tuple[str, int]], mode: str, dashboard_url: str | None, confdir: str | Path,
         ca: str | Path) -> dict:
    """The record for this process: pid, version and start time filled in, and what was `note`d."""
    return {"redirect_upstream": None, **_NOTED, "pid": os.getpid(), "listen": [[str(h), int(p)] for h, p in listen], "mode": mode,
            "dashboard_url": dashboard_url, "confdir": str(Path(confdir).expanduser()),
            "ca": str(Path(ca).expanduser()), "version": version(),
            "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}


def write(state_dir: Path, info: dict) -> Path:
    """Write `info` (pid defaults to this process, version and started are filled in when missing)."""
    rec = {"pid": os.getpid(), "version": version(),
           "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), **info}
    rec["listen"] = [[str(h), int(p)] for h, p in rec.get("listen") or []]
    make_dirs(Path(state_dir))
    return write_atomic(path(state_dir), json.dumps(rec, ensure_ascii=False, indent=1) + "\n")


def update(state_dir: Path, **fields) -> dict | None:
    """Change some fields of the running proxy's record (another command does it for that proxy: `dashboard
    --new-token` puts the new address in `dashboard_url`); the rest, its pid included, is kept. Returns the new
    record, or None (and writes nothing) when no live proxy's record is there."""
    rec = read(state_dir)
    if rec is None:
        return None
    rec.update(fields)
    write(state_dir, rec)
    return rec


def alive(pid: int) -> bool:
    """Whether a process with this pid exists (another user's counts: signalling it is merely refused)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def load(state_dir: Path) -> dict | None:
    """The record as written (a dead process's too), or None when absent, unreadable or malformed."""
    try:
        rec = json.loads(path(state_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(rec, dict) or not isinstance(rec.get("pid"), int) or isinstance(rec.get("pid"), bool):
        return None
    listen = rec.get("listen")
    if not isinstance(listen, list) or not all(
            isinstance(a, list) and len(a) == 2 and isinstance(a[0], str) and isinstance(a[1], int) for a in listen):
        return None
    return rec


def read(state_dir: Path) -> dict | None:
    """The running proxy's record, or None (absent, unreadable, malformed, or its process is gone)."""
    rec = load(state_dir)
    if rec is None or not alive(rec["pid"]):
        return None
    return rec


def remove(state_dir: Path) -> None:
    """Delete the file when it names this process (or a dead one, or cannot be read); never another live
    proxy's."""
    rec = load(state_dir)
    if rec is not None and rec["pid"] != os.getpid() and alive(rec["pid"]):
        return
    try:
        path(state_dir).unlink()
    except FileNotFoundError:
        pass

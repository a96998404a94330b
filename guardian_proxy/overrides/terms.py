"""How long a user override lasts, and whether it applies now.

Terms (`guardian-proxy allow|deny|level … --once | --for 1h | --until-restart`, the dashboard, the block page):

    forever        no term field (the default)
    once           `once: true`: the next matching request, then the running proxy sets `spent`
    --for 30m      `expires: <time>`: applies until then (s, m, h, d, w; combined: 1h30m)
    until restart  `run: "<pid>:<start>"`: the proxy process it was made for (its pid and the kernel's start
                   time of that process, so a later process with the same pid is another run); it applies while
                   that process runs and ends with it. The CLI, another process, learns the running proxy's pid
                   from `<state_dir>/runtime.json`; no proxy running: `--until-restart` is refused.

A rule that expired, was spent or whose run ended stops applying at once (every request checks the clock);
it is listed as expired / spent / ended until the next change of the file drops it.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from pathlib import Path

from .. import runtime
from ..config import Override
from ..runtime import alive

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_PART = re.compile(r"(?<!\d)(\d{1,9})([smhdw])")  # no match starts inside a run of digits: linear on any input


def parse_duration(text: str) -> timedelta:
    """'30m', '1h', '2d', '1h30m' → a timedelta; anything else (or zero) is a ValueError saying the form."""
    t = (text or "").strip().lower().replace(" ", "")
    parts = _PART.findall(t) if len(t) <= 64 else []
    if not t or not parts or _PART.sub("", t):
        raise ValueError(f"not a duration: {text!r} (use e.g. 30m, 1h, 2d or 1h30m)")
    secs = sum(int(n) * _UNITS[u] for n, u in parts)
    if secs <= 0:
        raise ValueError(f"not a duration: {text!r} (it must be longer than 0)")
    return timedelta(seconds=secs)


def now() -> datetime:
    return datetime.now(UTC)


def _start_ticks(pid: int) -> str | None:
    """The kernel's start time of a process (Linux /proc/<pid>/stat field 22), None where unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def run_of(pid: int) -> str | None:
    """The run id of a live process ("pid:start"; "pid" where the start time is unknown), None if none."""
    if pid <= 0 or not alive(pid):
        return None
    start = _start_ticks(pid)
    return f"{pid}:{start}" if start is not None else str(pid)


@lru_cache(maxsize=1)
def this_run() -> str:
    """This process's run id (what a proxy compares `run` with)."""
    return run_of(os.getpid()) or str(os.getpid())


def run_alive(run: str) -> bool:
    """Whether the proxy run an until-restart rule was made for still runs."""
    if run == this_run():
        return True
    pid, _, _ = run.partition(":")
    try:
        return run_of(int(pid)) == run
    except ValueError:
        return False


def running_proxy_run(state_dir: Path) -> str | None:
    """The run id of the proxy that wrote `<state_dir>/runtime.json`, None when no proxy runs."""
    info = runtime.read(state_dir)  # None when absent, unreadable or its process is gone
    return run_of(info["pid"]) if info is not None else None


def state(o: Override, at: datetime | None = None) -> str:
    """'active', 'spent' (a once rule used), 'expired' (past `expires`) or 'ended' (its proxy run is over)."""
    if o.once and o.spent is not None:
        return "spent"
    if o.expires is not None and (at or now()) >= o.expires:
        return "expired"
    if o.run and not run_alive(o.run):
        return "ended"
    return "active"


def term_of(o: Override) -> str:
    """The term in words: 'forever', 'once', 'until 14:05 UTC', 'until restart'."""
    if o.once:
        return "once"
    if o.expires is not None:
        return f"until {o.expires.astimezone().strftime('%Y-%m-%d %H:%M')}"
    if o.run:
        return "until restart"
    return "forever"


def with_term(o: Override, term: str | None, state_dir: Path | None = None, run: str | None = None) -> Override:
    """`o` with a term: None/'forever', 'once', 'restart' (the running proxy: `run`, else from the runtime
    file in `state_dir`) or a duration ('1h'); ValueError when the term is not one of those or no proxy runs."""
    t = (term or "forever").strip().lower()
    upd: dict = {"once": None, "expires": None, "run": None, "spent": None}
    if t in ("forever", "always", ""):
        pass
    elif t == "once":
        upd["once"] = True
    elif t in ("restart", "until-restart", "until_restart"):
        run = run or (running_proxy_run(state_dir) if state_dir is not None else None)
        if run is None:
            raise ValueError(f"--until-restart: no running proxy found (no live {runtime.path(state_dir or '.')}); "
                             "start `guardian-proxy run` first, or use --once or --for 1h")
        upd["run"] = run
    else:
        upd["expires"] = (now() + parse_duration(t)).replace(microsecond=0)
    return o.model_copy(update=upd)

"""The name a worker process shows in `ps`, `top` and `pgrep` (`guardian-proxy: worker 1`; docs/design/scaling.md).

With the optional `setproctitle` package installed, the whole title becomes `guardian-proxy: worker N` (what
`ps -f`, `ps aux` and `top -c` show). Without it (the default install: it is not a dependency) the kernel's short
name of the process is set with prctl(PR_SET_NAME), which is limited to 15 bytes: `guardian wkr N`, shown by `ps`,
`ps -o comm`, `top`, `pgrep guardian` and /proc/PID/comm; the command line stays Python's. Linux only; elsewhere,
or when it fails, nothing changes.
"""

from __future__ import annotations

import sys

PR_SET_NAME = 15
COMM_BYTES = 15  # the kernel's TASK_COMM_LEN, less its NUL


def title(index: int) -> str:
    return f"guardian-proxy: worker {index}"


def comm(index: int) -> str:
    return f"guardian wkr {index}"[:COMM_BYTES]


def name_worker(index: int) -> str | None:
    """Name this process worker `index`; the name set (the short name, or the full title), or None."""
    try:
        import setproctitle  # optional

        setproctitle.setproctitle(title(index))
        return title(index)
    except Exception:  # not installed (the default), or it failed: the kernel's short name instead
        pass
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        name = comm(index).encode()
        if libc.prctl(PR_SET_NAME, ctypes.c_char_p(name), 0, 0, 0) != 0:
            return None
        return comm(index)
    except Exception:
        return None


def worker_index(process_name: str) -> int | None:
    """The index of a worker from its multiprocessing name (`guardian-worker-2` → 2)."""
    tail = process_name.rpartition("-")[2]
    return int(tail) if tail.isdigit() else None

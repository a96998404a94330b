"""Files and directories only their owner can read: every directory the gateway creates is 0700 and every
file 0600, whatever the process's umask (a mode given to mkdir/open can only lose bits to the umask, never
gain them, and a directory is chmod-ed right after it is made). Directories that already exist are left as
they are: a `--log /tmp/decisions.jsonl` never makes /tmp private."""

from __future__ import annotations

import os
import threading
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def make_dirs(path: Path) -> Path:
    """Create `path` and its missing parents, each new one 0700; existing directories are untouched."""
    path = Path(path)
    missing = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=DIR_MODE)
        except FileExistsError:  # made meanwhile by another thread or process
            continue
        try:
            os.chmod(d, DIR_MODE)
        except OSError:
            pass
    return path


def open_append(path: Path) -> int:
    """A descriptor appending to `path`, created 0600 when it does not exist."""
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)


def write_atomic(path: Path, data: bytes | str) -> Path:
    """Write `data` to `path` through a 0600 temporary file in the same directory and an atomic rename:
    a reader sees the old file or the new one, never a part, and the new one is 0600."""
    path = Path(path)
    make_dirs(path.parent)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, FILE_MODE)  # a stale temporary file of the same name may have had another mode
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path

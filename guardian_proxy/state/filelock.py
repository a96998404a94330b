"""Locks that hold across the processes of one machine (the local back end): `fcntl.flock` on a 0600 file
under the state dir, plus a thread lock, since a flock is owned by an open file and so does not keep two
threads of one process apart. A process that dies releases its locks with it (the kernel closes its files).
A lock that cannot be had within `wait_s` raises StateUnavailable: the caller's fail rule applies (`wait_s`
None: wait as long as it takes, for writers whose readers never wait: the local overrides and policies)."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from ..private import FILE_MODE, make_dirs
from .base import StateUnavailable

LOCK_WAIT_S = 10.0


def _open(path: Path) -> int:
    make_dirs(path.parent)
    return os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)


def _flock(fd: int, path: Path, wait_s: float | None) -> None:
    """Take the exclusive flock on `fd`, polling (1 ms, growing to 10 ms) until `wait_s` has passed (None:
    blocking until it is free)."""
    if wait_s is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    deadline = time.monotonic() + wait_s
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise StateUnavailable(f"the lock {path.name} is held by another process past {wait_s:g} s") from None
            time.sleep(pause)
            pause = min(pause * 2, 0.01)


@contextmanager
def exclusive(path: Path, wait_s: float | None = LOCK_WAIT_S):
    """One exclusive lock on the file `path` for the `with` block (start-up work: a key file, a schema; a
    writer's read-modify-write)."""
    fd = _open(Path(path))
    try:
        _flock(fd, Path(path), wait_s)
        yield
    finally:
        os.close(fd)  # closing the file releases the flock


class BucketLocks:
    """`buckets` lock files `<directory>/<name>-<n>.lock`; a key (a session id) maps to one of them by a
    stable hash. Two keys of one bucket wait for each other, which costs little: the locked work is short.
    The files stay open for the life of the object (one descriptor per bucket used)."""

    def __init__(self, directory: Path, name: str, buckets: int = 64, wait_s: float = LOCK_WAIT_S):
        self.directory = Path(directory)
        self.name = name
        self.buckets = buckets
        self.wait_s = wait_s
        self._guard = threading.Lock()
        self._fds: dict[int, int] = {}
        self._threads: dict[int, threading.Lock] = {}

    def bucket(self, key: str) -> int:
        import zlib

        return zlib.crc32(key.encode()) % self.buckets

    @contextmanager
    def hold(self, key: str):
        n = self.bucket(key)
        with self._guard:
            tlock = self._threads.setdefault(n, threading.Lock())
        if not tlock.acquire(timeout=self.wait_s):
            raise StateUnavailable(f"the lock {self.name}-{n} is held by another thread past {self.wait_s:g} s")
        try:
            with self._guard:
                fd = self._fds.get(n)
                if fd is None:
                    fd = self._fds[n] = _open(self.directory / f"{self.name}-{n}.lock")
            path = self.directory / f"{self.name}-{n}.lock"
            _flock(fd, path, self.wait_s)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            tlock.release()

    def close(self) -> None:
        with self._guard:
            for fd in self._fds.values():
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._fds.clear()

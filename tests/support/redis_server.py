"""A real `redis-server` for the tests of the Redis back end (guardian_proxy/state): started on a free port
(again on another one when that was taken meanwhile) with its data in a temp dir and no persistence, stopped at the end. `.ci/run` installs Debian's redis-server;
where it is missing the tests that need it skip and say so."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.proxy_process import free_port, stop_process

SKIP_REASON = "redis-server is not installed (`.ci/run` installs it: apt-get install redis-server)"


@dataclass
class RedisServer:
    proc: subprocess.Popen
    port: int

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        stop_process(self.proc)


def available() -> bool:
    return shutil.which("redis-server") is not None


START_TRIES = 5


def start(tmp: Path, port: int | None = None, timeout: float = 120.0) -> RedisServer:
    """redis-server on `port`, else on a free port (redis-server cannot bind port 0 and say which it got: a port
    taken between the pick and its bind makes it exit, and it is started again on another one). Waits on its
    answer to PING and on its exit; `timeout` only bounds a hang."""
    tmp.mkdir(parents=True, exist_ok=True)
    for _ in range(1 if port else START_TRIES):
        p = port or free_port()
        log = tmp / "redis.log"
        proc = subprocess.Popen(["redis-server", "--port", str(p), "--bind", "127.0.0.1", "--dir", str(tmp),
                                 "--save", "", "--appendonly", "no", "--protected-mode", "yes"],
                                stdout=log.open("wb"), stderr=subprocess.STDOUT)
        if _answers(proc, p, timeout):
            return RedisServer(proc, p)
        if "in use" not in log.read_text(errors="replace"):
            raise RuntimeError(f"redis-server exited: {log.read_text(errors='replace')}")
    raise RuntimeError(f"redis-server could not bind a port in {START_TRIES} tries: {log.read_text(errors='replace')}")


def _answers(proc: subprocess.Popen, port: int, timeout: float) -> bool:
    """True once it answers PING on `port`; False when it exited first (RuntimeError when it hangs)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return True
        except OSError:
            pass
        try:
            proc.wait(0.05)  # wakes at once when it exits
            return False
        except subprocess.TimeoutExpired:
            pass
    proc.kill()
    raise RuntimeError(f"redis-server did not answer in {timeout} s")

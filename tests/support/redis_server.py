"""A real `redis-server` for the tests of the Redis back end (guardian_proxy/state): started on a free port
with its data in a temp dir and no persistence, stopped at the end. `.ci/run` installs Debian's redis-server;
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


def start(tmp: Path, port: int | None = None) -> RedisServer:
    port = port or free_port()
    tmp.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp),
                             "--save", "", "--appendonly", "no", "--protected-mode", "yes"],
                            stdout=(tmp / "redis.log").open("wb"), stderr=subprocess.STDOUT)
    deadline = time.time() + 20
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"redis-server exited: {(tmp / 'redis.log').read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return RedisServer(proc, port)
        except OSError:
            pass
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("redis-server did not start in 20 s")

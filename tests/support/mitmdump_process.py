"""Start mitmproxy's own tools (`mitmdump`, `mitmweb`) with the guardian script (`-s "$(guardian-proxy addon-path)"`)
for end-to-end tests, and an upstream that counts the connections it accepts."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.proxy_process import Local, stop_process, wait_until
from tests.support.upstream import Upstream, start_upstream

#: the script mitmproxy loads (GUARDIAN_ADDON_SCRIPT: another copy's, to run these tests against an older tree)
SCRIPT = Path(os.environ.get("GUARDIAN_ADDON_SCRIPT")
              or Path(__file__).resolve().parents[2] / "guardian_proxy" / "mitm" / "script.py")
VENV_BIN = Path(sys.executable).parent
READY = "deciding every request"  # the addon's line once its gateway is built
_LISTENING = re.compile(r"proxy(?: \([^)]*\))? listening at (\S+?):(\d+)\.?\s*$", re.M)


@dataclass
class Mitm(Local):
    proc: subprocess.Popen
    output: Path
    state_dir: Path
    confdir: Path

    def text(self) -> str:
        return self.output.read_text(errors="replace")

    def listening(self) -> list[tuple[str, int]]:
        """The (host, port) pairs mitmproxy said it listens at."""
        return [(h.strip("[]"), int(p)) for h, p in _LISTENING.findall(self.text())]

    @property
    def port(self) -> int:
        return self.listening()[0][1]

    def wait_for(self, what, timeout: float = 240.0) -> bool:
        """Wait until `what(self)` holds (True) or the process exits (False)."""
        try:
            return wait_until(self.proc, lambda: what(self), timeout)
        except TimeoutError:
            raise TimeoutError(f"mitmproxy: condition not met in {timeout}s:\n{self.text()}") from None

    def wait_ready(self, timeout: float = 240.0) -> None:
        if not self.wait_for(lambda m: READY in m.text(), timeout):
            raise RuntimeError(f"mitmproxy exited with {self.proc.returncode}:\n{self.text()}")

    def wait_exit(self, timeout: float = 240.0) -> int:
        return self.proc.wait(timeout)

    def stop(self) -> None:
        stop_process(self.proc)

    def log_lines(self) -> list[dict]:
        import json

        p = self.state_dir / "decisions.jsonl"
        return [json.loads(x) for x in p.read_text().splitlines() if x.strip()] if p.exists() else []


def start_mitm(tmp: Path, *args: str, tool: str = "mitmdump", port: int = 0, workers: int | None = 0) -> Mitm:
    """`tool -s SCRIPT -p PORT` with the state dir and mitmproxy's confdir under `tmp`, the dashboard off and, unless
    `workers` is None, `guardian_workers` set (0: threads, no worker process to start). Returns at once: wait on
    `listening()`, `wait_ready()` or `wait_exit()`."""
    state, conf = tmp / "state", tmp / "conf"
    out = tmp / f"{tool}-{time.monotonic_ns()}.txt"
    argv = [str(VENV_BIN / tool), "-s", str(SCRIPT), "-p", str(port), "--set", f"confdir={conf}",
            "--set", f"guardian_state_dir={state}"]
    if not any(a.startswith("guardian_dashboard_port=") for a in args):
        argv += ["--set", "guardian_dashboard_port=0"]
    if workers is not None and not any(a.startswith("guardian_workers=") for a in args):
        argv += ["--set", f"guardian_workers={workers}"]
    if tool == "mitmweb":
        argv += ["--web-port", "0", "--no-web-open-browser"]
    proc = subprocess.Popen([*argv, *args], stdout=out.open("wb"), stderr=subprocess.STDOUT,
                            env=dict(os.environ, HF_HUB_OFFLINE="1"))
    return Mitm(proc, out, state, conf)


@dataclass
class Counting:
    """An upstream that records requests (`up.received`) and counts the TCP connections it accepted."""

    up: Upstream
    accepted: int = 0

    @property
    def port(self) -> int:
        return self.up.port

    def close(self) -> None:
        self.up.close()


def counting_upstream(tls_dir: Path | None = None, names: list[str] | None = None) -> Counting:
    up = start_upstream(tls_dir, names)
    c = Counting(up)
    lock = threading.Lock()
    accept = up.server.get_request

    def get_request():
        conn = accept()
        with lock:
            c.accepted += 1
        return conn

    up.server.get_request = get_request
    return c


def listening_on(port: int) -> set[str]:
    """The local addresses any process has a TCP socket listening on `port` at (from /proc/net/tcp and tcp6;
    `0.0.0.0` / `::` for every interface)."""
    from guardian_proxy.cli.sockets import _address

    found = set()
    for name in ("tcp", "tcp6"):
        p = Path("/proc/net") / name
        if not p.exists():
            continue
        for row in p.read_text().splitlines()[1:]:
            cols = row.split()
            addr, hexport = cols[1].split(":")
            if cols[3] == "0A" and int(hexport, 16) == port:
                found.add(_address(addr))
    return found

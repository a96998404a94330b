"""Start a real `guardian-proxy run` process for end-to-end tests.

The proxy binds port 0 and the port it got is read from its banner (a port picked beforehand can be taken by
another process before the proxy binds it, on a busy machine); `dashboard=True` gives it a dashboard too, whose
address (with its token) is `ProxyProcess.dashboard_url`. Starting waits on the proxy's own output and on its
exit, never on a fixed pause."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BIN = Path(sys.executable).parent / "guardian-proxy"


def free_port() -> int:
    """A port free now: for an address where nothing should listen, or a server that cannot bind port 0 itself.
    It can be taken before it is used: servers a test starts bind port 0 and report the port they got."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_process(proc: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after 10 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def wait_until(proc: subprocess.Popen, holds: Callable[[], bool], timeout: float) -> bool:
    """Until `holds()` (True) or `proc` exits (then whether it holds now); TimeoutError after `timeout` s. Waits on
    the process's exit, never on a fixed pause."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if holds():
            return True
        try:
            proc.wait(0.1)  # wakes at once when it exits
        except subprocess.TimeoutExpired:
            continue
        return bool(holds())
    raise TimeoutError(f"condition not met in {timeout}s")


class Local:
    """A proxy on this machine with a `port` and mitmproxy's `confdir`: its URL and its CA certificate."""

    port: int
    confdir: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ca(self) -> Path:
        return self.confdir / "mitmproxy-ca-cert.pem"


@dataclass
class ProxyProcess(Local):
    proc: subprocess.Popen
    port: int
    state_dir: Path
    confdir: Path
    log_path: Path
    output: Path
    dashboard_url: str | None = None  # the dashboard's address with its token (the banner's), None: no dashboard

    @property
    def dashboard_base(self) -> str | None:
        return self.dashboard_url.split("/?", 1)[0] if self.dashboard_url else None

    def stop(self) -> None:
        stop_process(self.proc)

    def log_lines(self) -> list[dict]:
        import json

        if not self.log_path.exists():
            return []
        return [json.loads(x) for x in self.log_path.read_text().splitlines() if x.strip()]


#: the banner's first address: `listening on http://127.0.0.1:PORT`, `listening on [::1]:PORT in socks5 mode`
_LISTENING = re.compile(r"listening on (?:[a-z0-9]+://)?(?:\[[^\]]*\]|[^\s:,]*):(\d+)")
_DASHBOARD = re.compile(r"^dashboard: (http://\S+)", re.M)
_PORT_FLAGS = ("--port", "-p", "--listen-port")
DASHBOARD_TRIES = 5


def _gives_port(args: list[str]) -> bool:
    return any(a in _PORT_FLAGS or a.startswith(("--port=", "--listen-port=", "listen_port=")) for a in args)


def _wait_for_banner(proc: subprocess.Popen, out: Path, timeout: float) -> str:
    """The output up to the end of the banner (its `CA certificate:` line), waiting on the process's output and
    its exit; RuntimeError when it exits first or says nothing in `timeout` s (a bound against a hang)."""
    def banner() -> bool:
        text = out.read_text(errors="replace")
        return "listening on" in text and "CA certificate:" in text

    try:
        if wait_until(proc, banner, timeout):
            return out.read_text(errors="replace")
    except TimeoutError:
        proc.kill()
        proc.wait(10)
        raise RuntimeError(f"proxy did not start in {timeout}s:\n{out.read_text(errors='replace')}") from None
    raise RuntimeError(f"proxy exited with {proc.returncode}:\n{out.read_text(errors='replace')}")


def start_proxy(tmp: Path, upstream_port: int | None = None, extra: list[str] | None = None,
                timeout: float = 300.0, env: dict | None = None, dashboard: bool = False) -> ProxyProcess:
    """`guardian-proxy run` on port 0 (unless `extra` names a port), state in `tmp`/state; `dashboard=True`: with
    a dashboard on a free port, started again on another one in the rare case it was taken meanwhile."""
    extra = list(extra or [])
    for _ in range(DASHBOARD_TRIES if dashboard else 1):
        dash = ["--dashboard-port", str(free_port())] if dashboard else []
        px = _start(tmp, upstream_port, extra + dash, timeout, env)
        if not dashboard or px.dashboard_url:
            return px
        px.stop()  # its dashboard's port was taken between free_port() and its bind: another one
    raise RuntimeError(f"the proxy's dashboard could not bind in {DASHBOARD_TRIES} tries:\n{px.output.read_text()}")


def _start(tmp: Path, upstream_port: int | None, extra: list[str], timeout: float, env: dict | None) -> ProxyProcess:
    state, confdir = tmp / "state", tmp / "mitmconf"
    out = tmp / "proxy-output.txt"
    args = [str(BIN), "run", "--state-dir", str(state), "--confdir", str(confdir), "--ssl-insecure"]
    if not _gives_port(extra):
        args += ["--port", "0"]  # the kernel's choice, read back from the banner: no port to lose meanwhile
    if upstream_port:
        args += ["--redirect-upstream", f"127.0.0.1:{upstream_port}"]
    args += extra
    if not any(a == "--workers" or a.startswith("guardian_workers=") for a in args):
        # one evaluation worker process: every end-to-end test goes through the worker path (the default's), at
        # the cost of one model load, as before workers (the proxy process itself loads no NER then)
        args += ["--workers", "1"]
    e = dict(os.environ, HF_HUB_OFFLINE="1", **(env or {}))
    proc = subprocess.Popen(args, stdout=out.open("wb"), stderr=subprocess.STDOUT, env=e)
    text = _wait_for_banner(proc, out, timeout)
    m = _LISTENING.search(text)
    port = int(m.group(1)) if m else 0
    if not port:
        proc.kill()
        proc.wait(10)
        raise RuntimeError(f"the proxy's banner names no port:\n{text}")
    with socket.create_connection(("127.0.0.1", port), timeout=30):
        pass  # it listens (the banner is printed once mitmproxy's servers are up)
    d = _DASHBOARD.search(text)
    return ProxyProcess(proc, port, state, confdir, state / "decisions.jsonl", out, d.group(1) if d else None)

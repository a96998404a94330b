"""Start a real `guardian-proxy run` process for end-to-end tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

BIN = Path(sys.executable).parent / "guardian-proxy"


def free_port() -> int:
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


@dataclass
class ProxyProcess:
    proc: subprocess.Popen
    port: int
    state_dir: Path
    confdir: Path
    log_path: Path
    output: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ca(self) -> Path:
        return self.confdir / "mitmproxy-ca-cert.pem"

    def stop(self) -> None:
        stop_process(self.proc)

    def log_lines(self) -> list[dict]:
        import json

        if not self.log_path.exists():
            return []
        return [json.loads(x) for x in self.log_path.read_text().splitlines() if x.strip()]


def start_proxy(tmp: Path, upstream_port: int | None = None, extra: list[str] | None = None,
                timeout: float = 120.0, env: dict | None = None) -> ProxyProcess:
    port = free_port()
    state, confdir = tmp / "state", tmp / "mitmconf"
    out = tmp / "proxy-output.txt"
    args = [str(BIN), "run", "--port", str(port), "--state-dir", str(state), "--confdir", str(confdir),
            "--ssl-insecure"]
    if upstream_port:
        args += ["--redirect-upstream", f"127.0.0.1:{upstream_port}"]
    args += extra or []
    if not any(a == "--workers" or a.startswith("guardian_workers=") for a in args):
        # one evaluation worker process: every end-to-end test goes through the worker path (the default's), at
        # the cost of one model load, as before workers (the proxy process itself loads no NER then)
        args += ["--workers", "1"]
    e = dict(os.environ, HF_HUB_OFFLINE="1", **(env or {}))
    proc = subprocess.Popen(args, stdout=out.open("wb"), stderr=subprocess.STDOUT, env=e)
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"proxy exited with {proc.returncode}:\n{out.read_text()}")
        if "listening on" in out.read_text(errors="replace"):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                pass
        time.sleep(0.2)
    else:
        proc.kill()
        raise RuntimeError(f"proxy did not start in {timeout}s:\n{out.read_text()}")
    return ProxyProcess(proc, port, state, confdir, state / "decisions.jsonl", out)

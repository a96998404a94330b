"""guardian_proxy/runtime.py: the running proxy's record in <state_dir>/runtime.json, and `make run`."""

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from guardian_proxy import runtime

ROOT = Path(__file__).resolve().parents[1]


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _info(**kw) -> dict:
    return {**runtime.info([("127.0.0.1", 9123)], "regular", "http://127.0.0.1:9124/?token=abc", "/tmp/c",
                           "/tmp/c/mitmproxy-ca-cert.pem"), **kw}


def test_write_then_read_holds_every_field_and_is_private(tmp_path):
    old = os.umask(0)  # the mode must not depend on the umask
    try:
        p = runtime.write(tmp_path / "new" / "state", _info())
    finally:
        os.umask(old)
    assert p == tmp_path / "new" / "state" / "runtime.json"
    assert stat.S_IMODE(p.stat().st_mode) == 0o600
    assert stat.S_IMODE(p.parent.stat().st_mode) == 0o700
    rec = runtime.read(tmp_path / "new" / "state")
    assert set(runtime.KEYS) <= set(rec)
    assert rec["pid"] == os.getpid() and rec["listen"] == [["127.0.0.1", 9123]] and rec["mode"] == "regular"
    assert rec["dashboard_url"].startswith("http://127.0.0.1:9124/") and rec["ca"].endswith("mitmproxy-ca-cert.pem")
    assert rec["version"] and rec["started"].endswith("+00:00")
    assert [x.name for x in p.parent.iterdir()] == ["runtime.json"]  # no temporary file left behind


def test_write_fills_in_pid_version_and_time(tmp_path):
    runtime.write(tmp_path, {"listen": [("::1", 8080)], "mode": "socks5", "dashboard_url": None, "confdir": "c",
                             "ca": "c/ca.pem"})
    rec = runtime.read(tmp_path)
    assert rec["pid"] == os.getpid() and rec["listen"] == [["::1", 8080]] and rec["dashboard_url"] is None
    assert rec["version"] and rec["started"]


def test_rewrite_replaces_atomically(tmp_path):
    runtime.write(tmp_path, _info(mode="regular"))
    ino = runtime.path(tmp_path).stat().st_ino
    runtime.write(tmp_path, _info(mode="socks5"))
    assert runtime.read(tmp_path)["mode"] == "socks5"
    assert runtime.path(tmp_path).stat().st_ino != ino  # a new file renamed into place, never rewritten in place


@pytest.mark.parametrize("text", ["", "not json", "[1, 2]", '{"pid": "12"}', '{"pid": true, "listen": []}',
                                  '{"pid": 1, "listen": [["h"]]}', '{"pid": 1, "listen": "h:1"}'])
def test_unreadable_or_malformed_is_none(tmp_path, text):
    runtime.path(tmp_path).write_text(text)
    assert runtime.read(tmp_path) is None


def test_absent_and_unreadable_are_none(tmp_path):
    assert runtime.read(tmp_path) is None
    assert runtime.read(tmp_path / "missing") is None
    runtime.path(tmp_path).mkdir()  # a directory in its place
    assert runtime.read(tmp_path) is None


def test_a_dead_pid_is_none(tmp_path):
    runtime.write(tmp_path, _info(pid=_dead_pid()))
    assert runtime.read(tmp_path) is None


def test_remove_deletes_ours_and_stale_but_never_another_live_proxys(tmp_path):
    runtime.write(tmp_path, _info())
    runtime.remove(tmp_path)
    assert not runtime.path(tmp_path).exists()
    runtime.remove(tmp_path)  # absent: nothing to do
    runtime.write(tmp_path, _info(pid=_dead_pid()))
    runtime.remove(tmp_path)
    assert not runtime.path(tmp_path).exists()
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        runtime.write(tmp_path, _info(pid=other.pid))
        runtime.remove(tmp_path)
        assert json.loads(runtime.path(tmp_path).read_text())["pid"] == other.pid
    finally:
        other.kill()
        other.wait()


# ------------------------------------------------------------------ make run (dry run: nothing is installed)


def _make(*args: str) -> str:
    r = subprocess.run(["make", "-n", "-B", "run", f"VENV={ROOT / 'build' / 'no-such-venv'}", *args], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.skipif(not any((Path(p) / "make").exists() for p in os.environ.get("PATH", "").split(":")),
                    reason="make is not installed")
def test_make_run_shows_its_steps_and_takes_the_dashboard_port():
    out = _make()
    pip = [line for line in out.splitlines() if "pip install" in line]
    assert pip and not any(" -q" in line for line in pip), pip  # pip's own progress is shown
    steps = [line for line in out.splitlines() if line.startswith("echo") and "==>" in line]
    assert len(steps) >= 4, out  # a line before each step: venv, pip, install, start
    run = [line for line in out.splitlines() if "guardian-proxy run" in line][-1]
    assert "--dashboard-port" not in run
    assert "--dashboard-port 9091" in [x for x in _make("DASHBOARD_PORT=9091").splitlines()
                                       if "guardian-proxy run" in x][-1]
    assert "--dashboard-port 0" in _make("DASHBOARD_PORT=0")
    cpu = _make("TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu")
    assert "pip install 'torch==" in cpu and "--index-url https://download.pytorch.org/whl/cpu" in cpu
    assert cpu.index("--index-url") < cpu.index("pip install -e .")  # torch first, so -e . keeps it

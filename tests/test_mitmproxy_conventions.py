"""The gateway is a real mitmproxy addon: options declared in `load()` (`guardian_*`), read in `configure()`; it
loads in `mitmdump -s` and `mitmweb -s`; `guardian-proxy run` takes mitmproxy's spellings and `--set` for every
option (docs/mitmproxy-addon.md). Real processes, real clients."""

from __future__ import annotations

import json
import os
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from mitmproxy import exceptions
from mitmproxy.test import taddons

from guardian_proxy.mitm.hooks import GuardianAddon
from tests.support.proxy_process import BIN, free_port, start_proxy
from tests.support.upstream import start_upstream

SCRIPT = Path(__file__).resolve().parents[1] / "guardian_proxy" / "mitm" / "script.py"
VENV_BIN = Path(sys.executable).parent


def test_options_are_declared_and_read_in_configure():
    addon = GuardianAddon()
    with taddons.context(addon) as tctx:
        assert tctx.options.guardian_dashboard_port == 8081 and tctx.options.guardian_state_dir is None
        tctx.configure(addon, guardian_redirect_upstream="127.0.0.1:9")
        assert addon.redirect is not None and addon.redirect.address == ("127.0.0.1", 9)
        with pytest.raises(exceptions.OptionsError):
            tctx.configure(addon, guardian_redirect_upstream="nonsense")
        addon.gateway = object()  # built: the state dir cannot move under a running proxy
        with pytest.raises(exceptions.OptionsError):
            tctx.configure(addon, guardian_state_dir="/tmp/elsewhere")
        addon.gateway = None
    addon.done()


def test_requests_before_the_gateway_is_built_are_refused_not_passed(monkeypatch):
    import asyncio

    from mitmproxy.test import tflow

    from guardian_proxy.mitm import startup as addon_module

    monkeypatch.setattr(addon_module, "READY_WAIT_S", 0.2)  # a request waits for the gateway that long, then 503
    addon = GuardianAddon()
    f = tflow.tflow()
    asyncio.run(addon.request(f))
    assert f.response is not None and f.response.status_code == 503
    addon.done()


def _start(tool: str, tmp: Path, up_port: int, extra: list[str] = ()) -> tuple[subprocess.Popen, int, Path]:
    """mitmdump/mitmweb with the addon on port 0: the port it got is read from the runtime file the addon writes
    before it says "deciding every request"."""
    out = tmp / f"{tool}.txt"
    args = [str(VENV_BIN / tool), "-s", str(SCRIPT), "-p", "0", "--set", f"confdir={tmp / 'conf'}",
            "--set", f"guardian_state_dir={tmp / 'state'}", "--set", f"guardian_redirect_upstream=127.0.0.1:{up_port}",
            "--set", "guardian_dashboard_port=0", "--set", "ssl_insecure=true", *extra]
    proc = subprocess.Popen(args, stdout=out.open("wb"), stderr=subprocess.STDOUT,
                            env=dict(os.environ, HF_HUB_OFFLINE="1"))
    deadline = time.monotonic() + 500  # only a bound against a hang (under pytest-timeout's 600 s): models load slowly
    while "deciding every request" not in out.read_text(errors="replace"):  # on a busy machine
        try:
            proc.wait(0.3)  # wakes at once when it exits
        except subprocess.TimeoutExpired:
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("not ready:\n" + out.read_text()) from None
            continue
        raise RuntimeError(out.read_text())
    from guardian_proxy import runtime

    return proc, runtime.read(tmp / "state")["listen"][0][1], out


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()


def _decide_through(port: int, up, state: Path) -> None:
    proxy = f"http://127.0.0.1:{port}"
    n = len(up.received)
    r = httpx.post("http://ads.doubleclick.net/collect", proxy=proxy, json={"pan": "4111 1111 1111 1111"})
    assert r.status_code == 403 and r.json()["error"] == "blocked_by_guardian_proxy"
    assert len(up.received) == n
    r = httpx.get("http://www.example.org/", proxy=proxy)
    assert r.status_code == 200 and up.received[-1].path == "/"
    lines = (state / "decisions.jsonl").read_text().splitlines()
    assert any('"ads.doubleclick.net"' in x and '"deny"' in x for x in lines)


@pytest.mark.slow
def test_loads_in_mitmdump(tmp_path):
    up = start_upstream()
    proc, port, _ = _start("mitmdump", tmp_path, up.port)
    try:
        _decide_through(port, up, tmp_path / "state")
        rt = json.loads((tmp_path / "state" / "runtime.json").read_text())
        assert rt["pid"] == proc.pid and any(a[1] == port for a in rt["listen"])
    finally:
        _stop(proc)
        up.close()
    assert not (tmp_path / "state" / "runtime.json").exists()  # removed at exit


@pytest.mark.slow
def test_loads_in_mitmweb_beside_its_flow_view(tmp_path):
    up = start_upstream()
    web = free_port()
    proc, port, _ = _start("mitmweb", tmp_path, up.port, ["--web-port", str(web), "--no-web-open-browser"])
    try:
        _decide_through(port, up, tmp_path / "state")
        r = httpx.get(f"http://127.0.0.1:{web}/", timeout=10)
        assert r.status_code in (200, 403) and "mitmproxy" in r.text.lower()  # mitmweb's own UI answers
    finally:
        _stop(proc)
        up.close()


def test_run_refuses_a_wildcard_listen_host_given_as_set(tmp_path):
    r = subprocess.run([str(BIN), "run", "--state-dir", str(tmp_path / "s"), "--set", "listen_host=0.0.0.0"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "0.0.0.0" in r.stderr and "--allow-remote" in r.stderr
    assert "Traceback" not in r.stderr and "loading models" not in r.stderr


def test_run_says_a_busy_port_in_one_line_before_loading_models(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        for flag in ("--port", "-p", "--listen-port"):
            r = subprocess.run([str(BIN), "run", "--state-dir", str(tmp_path / "s"), flag, str(port)],
                               capture_output=True, text=True, timeout=60)
            assert r.returncode != 0 and f"port {port}" in r.stderr and "in use" in r.stderr, r.stderr
            assert len(r.stderr.strip().splitlines()) == 1 and "loading models" not in r.stderr


def test_run_version():
    r = subprocess.run([str(BIN), "run", "--version"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "guardian-proxy" in r.stdout and "mitmproxy" in r.stdout


@pytest.mark.slow
def test_run_takes_mitmproxy_options_and_passes_ignored_hosts_through(tmp_path):
    """`--set confdir=…` reaches mitmproxy (its CA is made there), and `--set ignore_hosts=…` lets a pinned app's
    host through untouched: the client sees the server's own certificate, and the gateway decides nothing."""
    up = start_upstream(tls_dir=tmp_path, names=["mybank.example", "www.example.org"])
    conf = tmp_path / "otherconf"
    px = start_proxy(tmp_path, up.port, extra=["--set", f"confdir={conf}", "--set", r"ignore_hosts=^mybank\.example:443$",
                                               "-k", "-q"])
    try:
        assert (conf / "mitmproxy-ca-cert.pem").exists()
        own = ssl.create_default_context(cafile=str(tmp_path / "up-cert.pem"))  # the server's own certificate
        r = httpx.get("https://mybank.example/account", proxy=px.url, verify=own)
        assert r.status_code == 200
        mitm = ssl.create_default_context(cafile=str(conf / "mitmproxy-ca-cert.pem"))
        r = httpx.get("https://www.example.org/", proxy=px.url, verify=mitm)  # intercepted as usual
        assert r.status_code == 200
        hosts = {x["host"] for x in px.log_lines()}
        assert "www.example.org" in hosts and "mybank.example" not in hosts
    finally:
        px.stop()
        up.close()


@pytest.mark.slow
def test_run_rejects_an_unknown_set_in_one_line(tmp_path):
    r = subprocess.run([str(BIN), "run", "--state-dir", str(tmp_path / "s"), "--port", "0",
                        "--dashboard-port", "0", "--set", "ignore_hostz=x"], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    assert r.returncode != 0 and "ignore_hostz" in r.stderr and "ignore_hosts" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_addon_path_names_the_script():
    r = subprocess.run([str(BIN), "addon-path"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and Path(r.stdout.strip()) == SCRIPT

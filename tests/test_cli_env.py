"""`guardian-proxy env`: the lines for each shell, the CA bundle, and a real client that follows them."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardian_proxy.cli import app
from tests.support.upstream import self_signed

BIN = Path(sys.executable).parent / "guardian-proxy"


@pytest.fixture
def confdir(tmp_path):
    d = tmp_path / "mitm"
    d.mkdir()
    cert, _ = self_signed(tmp_path, ["guardian test CA"])
    shutil.copy(cert, d / "mitmproxy-ca-cert.pem")
    return d


def lines(*args) -> dict:
    r = CliRunner().invoke(app, ["env", *args])
    assert r.exit_code == 0, r.output
    out = {}
    for line in r.stdout.splitlines():
        assert line.startswith("export "), line
        k, _, v = line[len("export "):].partition("=")
        out[k] = v
    return out


def test_posix_lines_and_bundle(confdir, tmp_path):
    state = tmp_path / "state"
    env = lines("--confdir", str(confdir), "--state-dir", str(state), "--port", "9999")
    for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        assert env[k] == "http://127.0.0.1:9999"
    assert env["NO_PROXY"] == "localhost,127.0.0.1,::1"
    ca = confdir / "mitmproxy-ca-cert.pem"
    assert env["NODE_EXTRA_CA_CERTS"] == str(ca)
    bundle = Path(env["SSL_CERT_FILE"])
    assert bundle == state / "ca-bundle.pem" == Path(env["REQUESTS_CA_BUNDLE"]) == Path(env["CURL_CA_BUNDLE"])
    text = bundle.read_text()
    assert ca.read_text().strip() in text
    assert text.count("-----BEGIN CERTIFICATE-----") > 1  # the system CAs too, so direct HTTPS keeps working


def test_ca_only_and_other_shells(confdir, tmp_path):
    ca = str(confdir / "mitmproxy-ca-cert.pem")
    env = lines("--confdir", str(confdir), "--state-dir", str(tmp_path), "--ca-only")
    assert env["SSL_CERT_FILE"] == ca and env["HTTPS_PROXY"] == "http://127.0.0.1:8080"
    fish = CliRunner().invoke(app, ["env", "--confdir", str(confdir), "--state-dir", str(tmp_path), "--shell", "fish"])
    assert "set -gx HTTPS_PROXY http://127.0.0.1:8080;" in fish.stdout
    ps = CliRunner().invoke(app, ["env", "--confdir", str(confdir), "--state-dir", str(tmp_path), "--shell", "powershell"])
    assert "$env:HTTPS_PROXY = 'http://127.0.0.1:8080'" in ps.stdout
    assert CliRunner().invoke(app, ["env", "--shell", "tcsh"]).exit_code == 2


def test_missing_ca_warns(tmp_path):
    r = CliRunner().invoke(app, ["env", "--confdir", str(tmp_path / "none"), "--state-dir", str(tmp_path)])
    assert r.exit_code == 0 and "start the proxy once" in r.stderr
    assert "export HTTPS_PROXY=" in r.stdout


def test_shell_eval_sets_the_variables(confdir, tmp_path):
    script = (f'eval "$({BIN} env --confdir {confdir} --state-dir {tmp_path} --port 8123)"; '
              f'{sys.executable} -c "import os, json; print(json.dumps(dict(os.environ)))"')
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60, check=True)
    env = json.loads(out.stdout)
    assert env["https_proxy"] == "http://127.0.0.1:8123" and env["SSL_CERT_FILE"].endswith("ca-bundle.pem")


@pytest.mark.slow
def test_clients_follow_the_env_through_a_running_proxy(tmp_path):
    from tests.support.proxy_process import start_proxy
    from tests.support.upstream import start_upstream

    up = start_upstream(tls_dir=tmp_path, names=["support.zendesk.com", "www.example.org"])
    px = start_proxy(tmp_path, up.port, extra=["--dashboard-port", "0"])
    try:
        out = subprocess.run([str(BIN), "env", "--confdir", str(px.confdir), "--state-dir", str(tmp_path / "envstate"),
                              "--port", str(px.port)], capture_output=True, text=True, check=True, timeout=60)
        env = dict(os.environ)
        for line in out.stdout.splitlines():
            k, _, v = line[len("export "):].partition("=")
            env[k] = v.strip("'")
        code = ("import httpx, requests\n"
                "r = httpx.post('https://support.zendesk.com/api', json={'t': 'Call John Smith at john.smith@example.com'})\n"
                "q = requests.get('https://www.example.org/hello')\n"
                "print(r.status_code, q.status_code)\n")
        res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
        assert res.stdout.split() == ["200", "200"], res.stderr
        assert up.received[0].headers["host"] == "support.zendesk.com"  # it went through the proxy, TLS verified
        if shutil.which("curl"):
            c = subprocess.run(["curl", "-sS", "https://www.example.org/curl"], env=env, capture_output=True, text=True,
                               timeout=30)
            assert json.loads(c.stdout)["path"] == "/curl", c.stderr
        hosts = [x["host"] for x in px.log_lines()]
        assert "support.zendesk.com" in hosts and "www.example.org" in hosts
    finally:
        px.stop()
        up.close()


# ------------------------------------------------------------------ the running proxy's runtime file


def _runtime(state: Path, ca: Path, port: int = 9123, mode: str = "regular", pid: int | None = None) -> None:
    from guardian_proxy import runtime

    runtime.write(state, {**runtime.info([("127.0.0.1", port)], mode, None, ca.parent, ca),
                          **({"pid": pid} if pid else {})})


def _invoke(*args):
    r = CliRunner().invoke(app, ["env", *args])
    assert r.exit_code == 0, r.output
    out = dict(line[len("export "):].split("=", 1) for line in r.stdout.splitlines())
    return out, r.stderr


def test_lines_follow_the_running_proxy(confdir, tmp_path):
    state = tmp_path / "state"
    other = tmp_path / "elsewhere"
    other.mkdir()
    shutil.copy(confdir / "mitmproxy-ca-cert.pem", other / "mitmproxy-ca-cert.pem")
    _runtime(state, other / "mitmproxy-ca-cert.pem", port=9123)
    env, err = _invoke("--state-dir", str(state))
    assert env["HTTPS_PROXY"] == env["http_proxy"] == "http://127.0.0.1:9123"
    assert env["NODE_EXTRA_CA_CERTS"] == str(other / "mitmproxy-ca-cert.pem")  # the running proxy's CA
    assert "no guardian-proxy is running" not in err
    env, _ = _invoke("--state-dir", str(state), "--port", "7000", "--confdir", str(confdir))  # flags win
    assert env["HTTPS_PROXY"] == "http://127.0.0.1:7000"
    assert env["NODE_EXTRA_CA_CERTS"] == str(confdir / "mitmproxy-ca-cert.pem")


def test_no_running_proxy_uses_the_configured_address_and_says_so(confdir, tmp_path):
    state = tmp_path / "state"
    env, err = _invoke("--state-dir", str(state), "--confdir", str(confdir))
    assert env["HTTPS_PROXY"] == "http://127.0.0.1:8080"
    assert "no guardian-proxy is running" in err and "127.0.0.1:8080" in err
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    _runtime(state, confdir / "mitmproxy-ca-cert.pem", port=9123, pid=p.pid)  # stale: its process is gone
    env, err = _invoke("--state-dir", str(state), "--confdir", str(confdir))
    assert env["HTTPS_PROXY"] == "http://127.0.0.1:8080" and "no guardian-proxy is running" in err


def test_a_socks5_proxy_gets_socks5h_lines(confdir, tmp_path):
    _runtime(tmp_path / "state", confdir / "mitmproxy-ca-cert.pem", port=1080, mode="socks5")
    env, _ = _invoke("--state-dir", str(tmp_path / "state"))
    assert env["HTTPS_PROXY"] == "socks5h://127.0.0.1:1080"
    _runtime(tmp_path / "state", confdir / "mitmproxy-ca-cert.pem", port=8080, mode="transparent")
    env, err = _invoke("--state-dir", str(tmp_path / "state"))
    assert "transparent mode" in err and "takes no proxy variables" in err


def test_bundle_is_private(confdir, tmp_path):
    env = lines("--confdir", str(confdir), "--state-dir", str(tmp_path / "state"))
    assert (Path(env["SSL_CERT_FILE"]).stat().st_mode & 0o777) == 0o600

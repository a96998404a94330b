"""`guardian-proxy doctor` on fixture state: each check's verdict and the fix it prints."""

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardian_proxy import runtime
from guardian_proxy.cli import app, trust
from guardian_proxy.cli.doctor import ca_checks, port_check
from tests.support.upstream import self_signed


def doctor(*args, env=None) -> tuple[int, dict]:
    r = CliRunner().invoke(app, ["doctor", "--json", *args], env=env)
    return r.exit_code, json.loads(r.stdout)


def by_name(report: dict) -> dict:
    return {c["name"]: c for c in report["checks"]}


@pytest.fixture
def confdir(tmp_path):
    """A real mitmproxy CA, made the way `guardian-proxy run` makes it on first start."""
    from mitmproxy.certs import CertStore

    d = tmp_path / "mitm"
    CertStore.from_store(d, "mitmproxy", 2048)
    return d


@pytest.fixture
def state(tmp_path):
    s = tmp_path / "state"
    s.mkdir(mode=0o700)
    log = s / "decisions.jsonl"
    log.write_text('{"id": "x"}\n')
    log.chmod(0o600)
    return s


def test_healthy_setup_passes(confdir, state, tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("likelihood: {mode: fixed}\n")  # healthy whether or not trained weights are present
    code, rep = doctor("--config", str(cfg), "--confdir", str(confdir), "--state-dir", str(state), "--port", "0",
                       "--dashboard-port", "0")
    checks = by_name(rep)
    assert code == 0 and rep["ok"], rep
    assert checks["state dir"]["state"] == "ok" and checks["decision log"]["state"] == "ok"
    assert checks["CA certificate"]["state"] == "ok" and "expires" in checks["CA certificate"]["detail"]
    assert checks["factor tables"]["state"] == "ok" and checks["detector"]["state"] == "ok"
    assert {"likelihood", "llm", "policies", "proxy port", "dashboard port"} <= set(checks)


def test_loose_permissions_fail_with_chmod_fix(confdir, state):
    state.chmod(0o755)
    (state / "decisions.jsonl").chmod(0o644)
    code, rep = doctor("--confdir", str(confdir), "--state-dir", str(state), "--port", "0", "--dashboard-port", "0")
    checks = by_name(rep)
    assert code == 1 and not rep["ok"]
    assert checks["state dir"]["state"] == "fail" and checks["state dir"]["fix"] == f"chmod 700 {state}"
    assert checks["decision log"]["state"] == "fail" and "chmod 600" in checks["decision log"]["fix"]


def test_missing_ca_fails_with_fix(tmp_path, state):
    code, rep = doctor("--confdir", str(tmp_path / "nothing"), "--state-dir", str(state), "--port", "0")
    ca = by_name(rep)["CA certificate"]
    assert code == 1 and ca["state"] == "fail" and "guardian-proxy run" in ca["fix"]


def test_ca_trust_system_and_ssl_cert_file(confdir, tmp_path, state):
    ca = confdir / "mitmproxy-ca-cert.pem"
    other = tmp_path / "other-bundle.pem"
    other.write_text("")
    untrusted = {c.name: c for c in ca_checks(confdir, bundles=(str(other),))}
    assert untrusted["CA trust (system)"].state == "warn"
    assert "update-ca-certificates" in untrusted["CA trust (system)"].fix
    bundle = tmp_path / "bundle.pem"
    bundle.write_text("junk\n" + ca.read_text())
    trusted = {c.name: c for c in ca_checks(confdir, bundles=(str(bundle),))}
    assert trusted["CA trust (system)"].state == "ok"
    _, rep = doctor("--confdir", str(confdir), "--state-dir", str(state), "--port", "0",
                    env={**os.environ, "SSL_CERT_FILE": str(bundle)})
    assert by_name(rep)["CA trust (SSL_CERT_FILE)"]["state"] == "ok"
    _, rep = doctor("--confdir", str(confdir), "--state-dir", str(state), "--port", "0",
                    env={**os.environ, "SSL_CERT_FILE": str(other)})
    c = by_name(rep)["CA trust (SSL_CERT_FILE)"]
    assert c["state"] == "warn" and "guardian-proxy env" in c["fix"]


def test_busy_port_is_a_warning():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        c = port_check("proxy port", "127.0.0.1", port, "--port")
        assert c.state == "warn" and "in use" in c.detail and f"sport = :{port}" in c.fix
    assert port_check("proxy port", "127.0.0.1", port, "--port").state == "ok"


def test_llm_backend_without_model_fails(confdir, state, tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"llm: {{backend: llama_cpp, model_path: {tmp_path / 'missing.gguf'}}}\n")
    code, rep = doctor("--config", str(cfg), "--confdir", str(confdir), "--state-dir", str(state), "--port", "0")
    llm = by_name(rep)["llm"]
    assert code == 1 and llm["state"] == "fail" and llm["fix"]


def test_missing_likelihood_model_fails_with_fix(confdir, state, tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"likelihood: {{mode: model, model_file: {tmp_path / 'none.pt'}}}\n")
    code, rep = doctor("--config", str(cfg), "--confdir", str(confdir), "--state-dir", str(state), "--port", "0")
    lk = by_name(rep)["likelihood"]
    assert code == 1 and lk["state"] == "fail" and "none.pt" in lk["detail"] and lk["fix"]


def test_broken_config_is_reported(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("port: [not, a, port]\n")
    code, rep = doctor("--config", str(cfg))
    assert code == 1 and by_name(rep)["settings"]["state"] == "fail"


def test_table_output(confdir, state):
    r = CliRunner().invoke(app, ["doctor", "--confdir", str(confdir), "--state-dir", str(state), "--port", "0"],
                           env={"COLUMNS": "160"})
    assert "CA certificate" in r.stdout and "state dir" in r.stdout
    assert ("no failures" in r.stdout) == (r.exit_code == 0)


def test_ca_near_expiry_warns(tmp_path):
    d = tmp_path / "short"
    d.mkdir()
    cert, _ = self_signed(tmp_path, ["short-lived CA"])  # valid 30 days
    shutil.copy(cert, d / "mitmproxy-ca-cert.pem")
    c = {x.name: x for x in ca_checks(d)}["CA certificate"]
    assert c.state == "warn" and "mitmproxy-ca*" in c.fix


def test_missing_state_dir_is_only_a_warning(confdir, tmp_path):
    _, rep = doctor("--confdir", str(confdir), "--state-dir", str(tmp_path / "new"), "--port", "0")
    assert by_name(rep)["state dir"]["state"] == "warn"
    assert not Path(tmp_path / "new").exists()  # doctor changes nothing


# ------------------------------------------------------------------ the running proxy (runtime.json)

def _serve(handler) -> ThreadingHTTPServer:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


class _Forward(BaseHTTPRequestHandler):
    """A minimal forward proxy: fetches the absolute URL it is asked for and relays the answer."""

    def log_message(self, *a):
        pass

    def do_GET(self):
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(self.path, timeout=10) as r:
            body, status = r.read(), r.status
        self.send_response(status)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Answers(BaseHTTPRequestHandler):
    """Something on the port that answers 200 but forwards nothing."""

    def log_message(self, *a):
        pass

    def do_GET(self):
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"hi")


class _Blocks(_Answers):
    def do_GET(self):
        self.send_response(403)
        self.send_header("x-guardian-blocked", "deny")
        self.send_header("x-guardian-decision", "d-42")
        self.send_header("content-length", "0")
        self.end_headers()


def _pac_server(proxy_port: int) -> ThreadingHTTPServer:
    class Pac(_Answers):
        def do_GET(self):
            body = f'function FindProxyForURL(u, h) {{ return "PROXY 127.0.0.1:{proxy_port}"; }}'.encode()
            self.send_response(200 if self.path == "/proxy.pac" else 401)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return _serve(Pac)


def _write_runtime(state, port, confdir, dashboard_url=None, pid=None, mode="regular"):
    ca = confdir / "mitmproxy-ca-cert.pem"
    runtime.write(state, {**runtime.info([("127.0.0.1", port)], mode, dashboard_url, confdir, ca),
                          **({"pid": pid} if pid else {})})


def test_no_running_proxy_checks_the_configured_ports_and_says_so(confdir, state):
    code, rep = doctor("--confdir", str(confdir), "--state-dir", str(state), "--port", "0", "--dashboard-port", "0")
    c = by_name(rep)
    assert c["proxy"]["state"] == "warn" and "not running" in c["proxy"]["detail"]
    assert "configured" in c["proxy"]["detail"] and "guardian-proxy run" in c["proxy"]["fix"]
    assert "request through the proxy" not in c


def test_doctor_knows_the_running_proxy_and_sends_a_request_through_it(confdir, state):
    fwd = _serve(_Forward)
    port = fwd.server_address[1]
    pac = _pac_server(port)
    url = f"http://127.0.0.1:{pac.server_address[1]}/?token=s3cr3t-token"
    _write_runtime(state, port, confdir, dashboard_url=url)
    try:
        r = CliRunner().invoke(app, ["doctor", "--json", "--state-dir", str(state)])  # no --confdir: the proxy's
    finally:
        fwd.shutdown()
        pac.shutdown()
    rep = json.loads(r.stdout)
    c = by_name(rep)
    assert c["proxy"]["state"] == "ok" and f"pid {os.getpid()}" in c["proxy"]["detail"]
    assert f"127.0.0.1:{port}" in c["proxy"]["detail"]
    assert c["proxy port"]["state"] == "ok" and "configuration says 127.0.0.1:8080" in c["proxy port"]["detail"]
    t = c["request through the proxy"]
    assert t["state"] == "ok" and "went through the proxy" in t["detail"], t
    assert c["dashboard port"]["state"] == "ok" and f"127.0.0.1:{pac.server_address[1]}" in c["dashboard port"]["detail"]
    assert "s3cr3t-token" not in r.stdout  # the dashboard's token is never printed
    assert str(confdir / "mitmproxy-ca-cert.pem") in c["CA certificate"]["detail"]  # the running proxy's CA


@pytest.mark.parametrize("handler, state_, words", [(_Answers, "fail", "never reached"), (_Blocks, "warn", "blocked"),
                                                    (None, "fail", "no answer")])
def test_a_broken_path_is_reported(confdir, state, handler, state_, words):
    if handler is None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]  # nothing listens there once closed
        srv = None
    else:
        srv = _serve(handler)
        port = srv.server_address[1]
    _write_runtime(state, port, confdir)
    try:
        code, rep = doctor("--state-dir", str(state), "--dashboard-port", "0")
    finally:
        if srv:
            srv.shutdown()
    t = by_name(rep)["request through the proxy"]
    assert t["state"] == state_ and words in t["detail"], t
    assert (code == 1) == (state_ == "fail")


def test_a_stale_runtime_file_means_not_running(confdir, state):
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    _write_runtime(state, 9, confdir, pid=p.pid)
    _, rep = doctor("--confdir", str(confdir), "--state-dir", str(state), "--port", "0", "--dashboard-port", "0")
    assert "not running" in by_name(rep)["proxy"]["detail"]


def test_other_modes_are_not_probed(confdir, state):
    _write_runtime(state, 9, confdir, mode="transparent")
    _, rep = doctor("--state-dir", str(state), "--dashboard-port", "0")
    t = by_name(rep)["request through the proxy"]
    assert t["state"] == "warn" and "transparent mode" in t["detail"]


# ------------------------------------------------------------------ CA trust: fingerprint, system, NSS stores


def _fp(confdir) -> str:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    cert = x509.load_pem_x509_certificate((confdir / "mitmproxy-ca-cert.pem").read_bytes())
    return cert.fingerprint(hashes.SHA256()).hex()


def test_ca_fingerprint_shown_and_system_fix_names_the_readme_file(confdir, tmp_path):
    c = {x.name: x for x in ca_checks(confdir, bundles=(), home=tmp_path, anchors=())}
    assert trust.pretty(_fp(confdir)) in c["CA certificate"].detail
    fix = c["CA trust (system)"].fix
    assert "/usr/local/share/ca-certificates/mitmproxy.crt" in fix and "http://mitm.it" in fix
    assert c["CA trust (browsers)"].state == "ok" and "nothing to check" in c["CA trust (browsers)"].detail


def test_ca_copied_but_bundle_not_rebuilt(confdir, tmp_path):
    anchors = tmp_path / "anchors"
    anchors.mkdir()
    shutil.copy(confdir / "mitmproxy-ca-cert.pem", anchors / "mitmproxy.crt")
    c = {x.name: x for x in ca_checks(confdir, bundles=(), home=tmp_path, anchors=(str(anchors),))}
    assert c["CA trust (system)"].state == "warn" and c["CA trust (system)"].fix == "sudo update-ca-certificates"


def test_without_certutil_the_browser_stores_cannot_be_checked(confdir, tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".pki" / "nssdb").mkdir(parents=True)
    (home / ".pki" / "nssdb" / "cert9.db").write_bytes(b"")
    monkeypatch.setattr(trust, "certutil", lambda: None)
    c = {x.name: x for x in ca_checks(confdir, bundles=(), home=home, anchors=())}["CA trust (Chromium)"]
    assert c.state == "warn" and "certutil program is missing" in c.detail and "libnss3-tools" in c.fix


needs_certutil = pytest.mark.skipif(shutil.which("certutil") is None,
                                    reason="certutil (libnss3-tools) is missing: cannot make an NSS store")


def _nssdb(d: Path) -> Path:
    d.mkdir(parents=True)
    subprocess.run(["certutil", "-N", "-d", f"sql:{d}", "--empty-password"], check=True, capture_output=True)
    return d


def _digest(d: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in d.iterdir() if p.is_file()}


@needs_certutil
def test_nss_stores_chromium_and_firefox_by_fingerprint(confdir, tmp_path):
    home = tmp_path / "home"
    ca = confdir / "mitmproxy-ca-cert.pem"
    chromium = _nssdb(home / ".pki" / "nssdb")
    firefox = _nssdb(home / ".mozilla" / "firefox" / "ab12cd.default-release")
    before = {"c": _digest(chromium), "f": _digest(firefox)}
    code, rep = doctor("--confdir", str(confdir), "--state-dir", str(tmp_path / "s"), "--port", "0",
                       "--dashboard-port", "0", env={**os.environ, "HOME": str(home)})
    c = by_name(rep)
    assert c["CA trust (Chromium)"]["state"] == "warn" and "not in" in c["CA trust (Chromium)"]["detail"]
    assert f"certutil -d sql:{chromium} -A -t C,, -n mitmproxy -i {ca}" in c["CA trust (Chromium)"]["fix"]
    ff = c["CA trust (Firefox (ab12cd.default-release))"]
    assert ff["state"] == "warn" and "Firefox closed" in ff["fix"] and "Authorities" in ff["fix"]
    assert {"c": _digest(chromium), "f": _digest(firefox)} == before  # the doctor changes no store
    # trusted in Chromium under some other name, present but without website trust in Firefox
    subprocess.run(["certutil", "-d", f"sql:{chromium}", "-A", "-t", "C,,", "-n", "my proxy CA", "-i", str(ca)],
                   check=True)
    subprocess.run(["certutil", "-d", f"sql:{firefox}", "-A", "-t", ",,", "-n", "mitmproxy", "-i", str(ca)], check=True)
    _, rep = doctor("--confdir", str(confdir), "--state-dir", str(tmp_path / "s"), "--port", "0",
                    "--dashboard-port", "0", env={**os.environ, "HOME": str(home)})
    c = by_name(rep)
    assert c["CA trust (Chromium)"]["state"] == "ok" and "'my proxy CA'" in c["CA trust (Chromium)"]["detail"]
    ff = c["CA trust (Firefox (ab12cd.default-release))"]
    assert ff["state"] == "warn" and "not trusted for websites" in ff["detail"]
    assert f"certutil -d sql:{firefox} -M -n mitmproxy -t C,," in ff["fix"]


@needs_certutil
def test_another_ca_with_the_same_name_is_not_ours(confdir, tmp_path):
    """Compared by fingerprint: a different certificate called `mitmproxy` does not count."""
    from mitmproxy.certs import CertStore

    home = tmp_path / "home"
    chromium = _nssdb(home / ".pki" / "nssdb")
    other = tmp_path / "other"
    CertStore.from_store(other, "mitmproxy", 2048)
    subprocess.run(["certutil", "-d", f"sql:{chromium}", "-A", "-t", "C,,", "-n", "mitmproxy", "-i",
                    str(other / "mitmproxy-ca-cert.pem")], check=True)
    c = {x.name: x for x in ca_checks(confdir, bundles=(), home=home, anchors=())}["CA trust (Chromium)"]
    assert c.state == "warn" and "not in" in c.detail


# ------------------------------------------------------------------ end to end: a real proxy


@pytest.mark.slow
def test_doctor_through_a_real_proxy(tmp_path):
    from tests.support.proxy_process import start_proxy

    px = start_proxy(tmp_path, extra=["--dashboard-port", "0"])  # no --redirect-upstream: real connections
    try:
        if runtime.read(px.state_dir) is None:  # until `run` writes it itself (the lead wires runtime.write)
            runtime.write(px.state_dir, {**runtime.info([("127.0.0.1", px.port)], "regular", None, px.confdir,
                                                        px.ca), "pid": px.proc.pid})
        code, rep = doctor("--state-dir", str(px.state_dir), "--dashboard-port", "0")
        c = by_name(rep)
        assert c["proxy"]["state"] == "ok" and f"pid {px.proc.pid}" in c["proxy"]["detail"]
        t = c["request through the proxy"]
        assert t["state"] == "ok", t
        assert any(x.get("host") == "127.0.0.1" for x in px.log_lines())  # the gateway decided on it
        assert str(px.ca) in c["CA certificate"]["detail"]
        # mitmproxy's own page for the CA answers through the proxy (docs/usage.md: http://mitm.it)
        with urllib.request.build_opener(urllib.request.ProxyHandler({"http": px.url})).open(
                "http://mitm.it/", timeout=30) as r:
            assert r.status == 200 and b"mitmproxy" in r.read()
    finally:
        px.stop()


def test_loose_files_in_the_state_dir_are_named(confdir, state):
    (state / "policies").mkdir(mode=0o755)
    (state / "policies").chmod(0o755)
    (state / "overrides.yaml").write_text("overrides: []\n")
    (state / "overrides.yaml").chmod(0o644)
    _, rep = doctor("--confdir", str(confdir), "--state-dir", str(state), "--port", "0", "--dashboard-port", "0")
    c = by_name(rep)["state files"]
    assert c["state"] == "warn" and "overrides.yaml (0644)" in c["detail"] and "policies (0755)" in c["detail"]
    assert c["fix"] == f"chmod -R go= {state}"
    (state / "policies").chmod(0o700)
    (state / "overrides.yaml").chmod(0o600)
    _, rep = doctor("--confdir", str(confdir), "--state-dir", str(state), "--port", "0", "--dashboard-port", "0")
    assert "state files" not in by_name(rep)


def test_doctor_says_how_requests_are_evaluated_and_where_the_shared_state_is(tmp_path, redis_server, redis_prefix,
                                                                              monkeypatch):
    from guardian_proxy.cli.doctor import state_checks
    from guardian_proxy.config import load_settings
    from guardian_proxy.state import new_key

    local = {c.name: c for c in state_checks(load_settings(state_dir=tmp_path / "s", workers=0))}
    assert local["evaluation"].detail.startswith("in threads") and local["shared state"].state == "ok"
    monkeypatch.delenv("GUARDIAN_VAULT_KEY", raising=False)
    fleet = {"backend": "redis", "url": redis_server.url, "prefix": redis_prefix}
    nokey = {c.name: c for c in state_checks(load_settings(state_dir=tmp_path / "s", workers=3, state=fleet))}
    assert nokey["evaluation"].detail == "3 worker processes"
    assert nokey["shared state"].state == "fail" and "vault key" in nokey["shared state"].detail
    monkeypatch.setenv("GUARDIAN_VAULT_KEY", new_key())
    ok = {c.name: c for c in state_checks(load_settings(state_dir=tmp_path / "s", state=fleet))}
    assert ok["shared state"].state == "ok" and "answers" in ok["shared state"].detail
    down = {c.name: c for c in state_checks(load_settings(
        state_dir=tmp_path / "s", state={**fleet, "url": "redis://127.0.0.1:1/0", "timeout_s": 0.5}))}
    assert down["shared state"].state == "fail" and "does not answer" in down["shared state"].detail

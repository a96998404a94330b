"""`guardian-proxy doctor` on fixture state: each check's verdict and the fix it prints."""

import json
import os
import shutil
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardian_proxy.cli import app
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

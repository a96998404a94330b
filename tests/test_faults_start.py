"""Start-up faults (docs/security.md): every listen address obeys the loopback rule (R-LOOPBACK-ONLY), and a
refusal to start is one line naming the file and the fix, never a traceback, and comes before any model
loads."""

import base64
import json
import os
import re
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardian_proxy.cli import app
from tests.support.mitmdump_process import listening_on
from tests.support.proxy_process import BIN, free_port, stop_process, wait_until

runner = CliRunner()


@pytest.fixture
def no_models(monkeypatch):
    """Reaching model loading means the refusal did not happen: fail fast instead of starting a proxy."""
    from guardian_proxy.pipeline import Gateway

    def reached(*a, **kw):
        raise RuntimeError("reached model loading")

    monkeypatch.setattr(Gateway, "from_settings", classmethod(reached))


def _one_line(text: str) -> str:
    lines = [x for x in text.splitlines() if x.strip()]
    assert len(lines) == 1, text
    return lines[0]


# ------------------------------------------------------------------ the loopback rule, however the address is given


P = free_port()


def _portless(value) -> str:
    """A test id without the free port picked at collection (the same ids in every pytest-xdist worker)."""
    return re.sub(r":\d+(?=\D*$)", ":PORT", str(value))


@pytest.mark.parametrize("args, shown", [
    (["--mode", f"regular@0.0.0.0:{P}"], f"0.0.0.0:{P}"),
    (["--mode", f"socks5@0.0.0.0:{P}"], f"0.0.0.0:{P}"),
    (["--mode", f"upstream:http://x:3128@0.0.0.0:{P}"], f"0.0.0.0:{P}"),
    (["--mode", f"regular@[::]:{P}"], f"[::]:{P}"),
    (["--mode", f"regular@:{P}"], f"*:{P}"),  # an empty host is every interface
    (["--mode", f"regular@192.0.2.10:{P}"], f"192.0.2.10:{P}"),
    (["--host", "::", "--port", str(P)], f"[::]:{P}"),
    (["--host", "0.0.0.0", "--mode", "socks5"], "0.0.0.0:8080"),  # --host applies to a mode without @HOST
    (["--mode", f"regular@127.0.0.1:{P}", "--mode", f"regular@0.0.0.0:{P + 1}"], f"0.0.0.0:{P + 1}"),
    (["--mode", f"regular@0.0.0.0:{P}", "--mode", f"regular@127.0.0.1:{P + 1}"], f"0.0.0.0:{P}"),
], ids=lambda v: None if isinstance(v, list) else _portless(v))
def test_every_listen_address_obeys_the_loopback_rule(tmp_path, no_models, args, shown):
    r = runner.invoke(app, ["run", *args, "--state-dir", str(tmp_path), "--dashboard-port", "0"])
    assert r.exit_code == 2, (r.output, r.exception)
    line = _one_line(r.output)
    assert shown in line and "--allow-remote" in line and "--proxyauth" in line


def test_a_remote_mode_needs_proxyauth_too(tmp_path, no_models):
    r = runner.invoke(app, ["run", "--mode", f"socks5@0.0.0.0:{P}", "--allow-remote", "--state-dir", str(tmp_path)])
    assert r.exit_code == 2 and "--proxyauth" in _one_line(r.output)


@pytest.mark.parametrize("spec", ["regular@127.0.0.1:{p}", "socks5@[::1]:{p}", "regular@localhost:{p}"])
def test_loopback_modes_pass_the_rule(tmp_path, no_models, spec):
    r = runner.invoke(app, ["run", "--mode", spec.format(p=P), "--state-dir", str(tmp_path), "--dashboard-port", "0"])
    assert isinstance(r.exception, RuntimeError) and "reached model loading" in str(r.exception), r.output


SPECS = [f"upstream:http://x:3128@0.0.0.0:{P}", "socks5", "regular@::1:9", "regular@7", "regular@:7",
         "upstream:http://proxy.example:3128", "reverse:https://example.com@127.0.0.1:443",
         "wireguard:/tmp/wg.conf@0.0.0.0:51820", "transparent", "dns@5353", "REGULAR@10.0.0.1:1"]


@pytest.mark.parametrize("spec", SPECS, ids=_portless)
def test_listen_addresses_split_specs_as_mitmproxy_does(spec):
    from mitmproxy.proxy.mode_specs import ProxyMode

    from guardian_proxy.cli.run import listen_addresses

    (got,) = listen_addresses([spec], "127.0.0.1", 8080)
    m = ProxyMode.parse(spec)
    assert (got.host, got.port, got.mode) == (m.listen_host("127.0.0.1"), m.listen_port(8080), m.type_name)


def test_brackets_leave_the_spec_mitmproxy_gets():
    from guardian_proxy.cli.run import listen_addresses

    (got,) = listen_addresses(["socks5@[::1]:9"], "127.0.0.1", 8080)
    assert (got.host, got.port, got.spec, got.where) == ("::1", 9, "socks5@::1:9", "[::1]:9")
    assert listen_addresses(["local"], "127.0.0.1", 8080) == []  # redirects this machine: no socket


def _fast_config(tmp_path: Path) -> Path:
    cfg = tmp_path / "fast.yaml"
    cfg.write_text("detector: {ner: false}\nlikelihood: {mode: fixed}\n")
    return cfg


def _start(tmp_path: Path, *args: str, timeout: float = 180) -> tuple[subprocess.Popen, Path]:
    out = tmp_path / "out.txt"
    proc = subprocess.Popen([str(BIN), "run", *args, "--config", str(_fast_config(tmp_path)),
                             "--state-dir", str(tmp_path / "state"), "--confdir", str(tmp_path / "mitm"),
                             "--dashboard-port", "0"], stdout=out.open("wb"), stderr=subprocess.STDOUT,
                            env=dict(os.environ, HF_HUB_OFFLINE="1"))
    try:
        started = wait_until(proc, lambda: "command-line tools" in out.read_text(errors="replace"), timeout)
    except TimeoutError:
        started = False
    if not started:
        proc.kill()
        raise AssertionError(out.read_text())
    return proc, out


def _stop(proc: subprocess.Popen) -> None:
    stop_process(proc)


@pytest.mark.slow
def test_an_allowed_remote_mode_banner_names_the_address_really_bound(tmp_path):
    proc, out = _start(tmp_path, "--mode", "regular@0.0.0.0:0", "--allow-remote", "--proxyauth", "al:s3cret")
    try:
        text = out.read_text()
        m = re.search(r"listening on http://0\.0\.0\.0:(\d+)", text)
        assert m, text
        port = int(m.group(1))  # the kernel's choice: no port picked beforehand that another process could take
        assert f"listening on http://0.0.0.0:{port}" in text and "127.0.0.1:8080" not in text, text
        if Path("/proc/net/tcp").exists():
            assert listening_on(port) == {"0.0.0.0"}
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
        # how a local client reaches a wildcard bind (a curl line that works, not SSL_CERT_FILE)
        assert f"curl -x 127.0.0.1:{port} --proxy-user USER:PASS --cacert" in text and "s3cret" not in text
    finally:
        _stop(proc)


@pytest.mark.slow
def test_the_banner_shows_the_port_the_system_chose(tmp_path):
    proc, out = _start(tmp_path, "--mode", "regular@127.0.0.1:0")
    try:
        text = out.read_text()
        line = next(x for x in text.splitlines() if "listening on" in x)
        port = int(line.rsplit(":", 1)[1].split()[0])
        assert port != 0, text
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
    finally:
        _stop(proc)


# ------------------------------------------------------------------ refusals: one line, the file, the fix


def _run(tmp_path: Path, *args: str, state: Path | None = None, prefix: list[str] | None = None,
         timeout: float = 60) -> subprocess.CompletedProcess:
    state = state if state is not None else tmp_path / "state"
    cmd = [*(prefix or []), str(BIN), "run", "--state-dir", str(state), "--confdir", str(tmp_path / "mitm"),
           "--dashboard-port", "0", "--port", "0", *args]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ, HF_HUB_OFFLINE="1", COLUMNS="60"))
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"the proxy started instead of refusing:\n{e.stdout}\n{e.stderr}") from None


def _refused(r: subprocess.CompletedProcess, *names: str) -> str:
    assert r.returncode != 0, r.stderr
    assert "Traceback" not in r.stderr and "loading models" not in r.stderr, r.stderr
    line = _one_line(r.stderr)
    for n in names:
        assert n in line, line
    return line


def _state(tmp_path: Path) -> Path:
    s = tmp_path / "state"
    s.mkdir()
    return s


@pytest.mark.slow
def test_a_state_dir_that_is_a_file(tmp_path):
    (tmp_path / "state").write_text("not a directory\n")
    line = _refused(_run(tmp_path), str(tmp_path / "state"), "--state-dir")
    assert "not a directory" in line


@pytest.mark.slow
def test_a_read_only_state_dir(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    existing = ro / "existing"
    existing.mkdir()
    prefix = []
    if os.geteuid() == 0:  # root ignores permission bits: drop the capabilities that let it
        if not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv")
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner,-chown"]
        os.chown(existing, 65534, 65534)
    ro.chmod(0o555)
    existing.chmod(0o555)
    try:
        _refused(_run(tmp_path, state=ro / "new", prefix=prefix), str(ro / "new"), "--state-dir")
        if os.geteuid() == 0:  # a directory someone else owns cannot be made writable by chmod
            _refused(_run(tmp_path, state=existing, prefix=prefix), str(existing), "--state-dir", "writable")
    finally:
        ro.chmod(0o755)
        existing.chmod(0o755)


@pytest.mark.slow
@pytest.mark.parametrize("content", [
    "overrides: [{action: maybe, domain: x.example}]\n",  # does not validate
    "overrides: [{action: deny, domain: x.example}\n",  # does not parse
    b"overrides: [{action: deny, domain: \xff.example}]\n",  # not UTF-8
])
def test_a_corrupt_overrides_file(tmp_path, content):
    f = _state(tmp_path) / "overrides.yaml"
    f.write_bytes(content if isinstance(content, bytes) else content.encode())
    line = _refused(_run(tmp_path), str(f))
    assert "fix" in line or "remove" in line or "move" in line


@pytest.mark.slow
def test_overrides_in_place_of_a_directory(tmp_path):
    f = _state(tmp_path) / "overrides.yaml"
    f.mkdir()
    _refused(_run(tmp_path), str(f))


@pytest.mark.slow
def test_a_corrupt_vault_key(tmp_path):
    key = _state(tmp_path) / "vault.key"
    key.write_bytes(base64.b64encode(b"short") + b"\n")
    key.chmod(0o600)
    line = _refused(_run(tmp_path), str(key))
    assert "sessions.db" in line  # the fix: restore the key, or move both aside


@pytest.mark.slow
def test_a_corrupt_experience_key(tmp_path):
    d = _state(tmp_path) / "experience"
    d.mkdir()
    (d / "key").write_bytes(b"\x00\x01 not a fernet key\n")
    _refused(_run(tmp_path), str(d / "key"))


@pytest.mark.slow
@pytest.mark.parametrize("content", [
    "detector: {ner: false\n",  # does not parse
    "port: eighty\nlimits: {max_body_bytes: -x}\n",  # does not validate (two errors, one line)
    b"detector: {spacy_model: \xff}\n",  # not UTF-8
    "- a list\n",  # not a mapping
])
def test_a_config_file_that_does_not_load(tmp_path, content):
    cfg = tmp_path / "config.yaml"
    cfg.write_bytes(content if isinstance(content, bytes) else content.encode())
    _refused(_run(tmp_path, "--config", str(cfg)), str(cfg))


@pytest.mark.slow
def test_a_config_path_that_is_a_directory(tmp_path):
    cfg = tmp_path / "conf.d"
    cfg.mkdir()
    _refused(_run(tmp_path, "--config", str(cfg)), str(cfg))


@pytest.mark.slow
def test_a_decision_log_path_that_is_a_directory(tmp_path):
    log = tmp_path / "decisions.jsonl"
    log.mkdir()
    _refused(_run(tmp_path, "--log", str(log)), str(log))


def test_refusal_messages_are_not_markup(tmp_path, no_models):
    """A path with brackets is printed as it is (rich markup would eat `[bold]`)."""
    odd = tmp_path / "[bold]state"
    odd.write_text("a file\n")
    r = runner.invoke(app, ["run", "--state-dir", str(odd)])
    assert r.exit_code == 2 and str(odd) in _one_line(r.output), r.output


def test_a_good_state_dir_passes_the_checks(tmp_path):
    """No false refusal: a valid overrides file, vault key and experience key pass (and nothing loads)."""
    from cryptography.fernet import Fernet

    from guardian_proxy.cli.startup import check_state
    from guardian_proxy.config import load_settings

    (tmp_path / "overrides.yaml").write_text(json.dumps({"overrides": [{"action": "deny", "domain": "x.example"}]}))
    (tmp_path / "vault.key").write_bytes(base64.b64encode(os.urandom(32)) + b"\n")
    (tmp_path / "experience").mkdir()
    (tmp_path / "experience" / "key").write_bytes(Fernet.generate_key())
    check_state(load_settings(None, state_dir=tmp_path))


def test_several_modes_are_refused_not_silently_dropped(tmp_path, no_models):
    """mitmproxy gets one mode from `run`: a second --mode used to replace the first without a word."""
    r = runner.invoke(app, ["run", "--mode", f"regular@127.0.0.1:{P}", "--mode", f"socks5@127.0.0.1:{P + 1}",
                            "--state-dir", str(tmp_path), "--dashboard-port", "0"])
    assert r.exit_code == 2 and "one --mode at a time" in _one_line(r.output), (r.output, r.exception)

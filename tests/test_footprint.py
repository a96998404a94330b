"""Memory (docs/design/scaling.md): an evaluation worker loads only what inference needs.

Presidio imports `transformers` (and with it scikit-learn, SciPy, tokenizers, SymPy: +164 MB RSS, ~2 s CPU per
worker) for a Hugging Face engine the detector never uses; the detector imports Presidio without it
(guardian_proxy/extract/ner.py `_hidden`). Each check runs in a fresh interpreter: what a worker has
loaded is a property of a process. Numbers: scripts/profile_memory.py."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _run(code: str, tmp_path) -> str:
    script = textwrap.dedent(f"""
        import os, sys, json
        os.environ["HF_HUB_OFFLINE"] = "1"
        from pathlib import Path
        from guardian_proxy.config import load_settings
        from guardian_proxy.pipeline import Gateway
        settings = load_settings(None, state_dir=Path({str(tmp_path / "state")!r}))
    """) + textwrap.dedent(code)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.strip().splitlines()[-1]


def test_a_warmed_worker_gateway_has_not_loaded_transformers_sklearn_or_scipy(tmp_path):
    out = _run("""
        gw = Gateway.from_settings(settings, with_log=False)
        gw.warm_up()  # what a worker does before it says ready (guardian_proxy/workers.py)
        from guardian_proxy.types import RawRequest
        d = gw.evaluate(RawRequest(method="POST", url="https://api.example.com/u", headers=[
            ("content-type", "application/json")], body=b'{"name": "Maria Keller", "ssn": "078-05-1120"}'), log=False)
        heavy = [m for m in ("transformers", "sklearn", "scipy", "sympy", "tokenizers") if m in sys.modules]
        print(json.dumps({"heavy": heavy, "categories": sorted(str(c) for c in d.six.categories)}))
    """, tmp_path)
    got = __import__("json").loads(out)
    assert got["heavy"] == []
    assert got["categories"], "the detector still finds the name and the SSN"


def test_transformers_stays_importable_after_the_detector_loaded(tmp_path):
    """The transformers LLM back end imports the real package later: no `None` left in sys.modules."""
    out = _run("""
        gw = Gateway.from_settings(settings, with_log=False)
        gw.warm_up()
        import transformers
        print(transformers.__name__, hasattr(transformers, "AutoTokenizer"))
    """, tmp_path)
    assert out == "transformers True"


def test_transformers_loaded_first_is_left_alone(tmp_path):
    """An LLM back end that loaded transformers first: Presidio sees it (nothing hidden, nothing to save)."""
    out = _run("""
        import transformers
        gw = Gateway.from_settings(settings, with_log=False)
        gw.warm_up()
        from presidio_analyzer.nlp_engine.huggingface_token_pipe import is_available
        print(sys.modules["transformers"] is not None and is_available())
    """, tmp_path)
    assert out == "True"



def test_the_proxy_process_gateway_loads_no_torch_until_stage_3_is_used(tmp_path):
    """`models=False` (the proxy process when workers evaluate): its fast path decides what has nothing personal
    without the likelihood model; a request that does reach stage 3 builds it then and decides as before."""
    out = _run("""
        from guardian_proxy.types import RawRequest
        lazy = Gateway.from_settings(settings, models=False)
        lazy.warm_up(models=False)
        plain = lazy.evaluate_inline(RawRequest(method="GET", url="https://example.com/"))
        at_start = "torch" in sys.modules
        personal = RawRequest(method="POST", url="https://www.google-analytics.com/collect", headers=[
            ("content-type", "application/json")], body=b'{"email": "maria.keller@example.org", "age": 47}')
        b = lazy.evaluate(personal, log=False)
        a = Gateway.from_settings(settings, with_log=False).evaluate(personal, log=False)
        print(json.dumps({"at_start": at_start, "plain": plain.action, "same": [a.action, a.likelihood.value,
                          a.risk.R] == [b.action, b.likelihood.value, b.risk.R], "path": b.likelihood.path}))
    """, tmp_path)
    got = __import__("json").loads(out)
    assert got["at_start"] is False and got["plain"] == "allow"
    assert got["same"] is True, got
    assert got["path"] not in ("norm", "fixed"), "stage 3 ran: the model was built on first use"


def test_a_real_proxy_keeps_torch_out_of_its_processes_and_transformers_out_of_its_worker(tmp_path):
    """`guardian-proxy run` end to end: a personal POST is decided by the worker (the model ran there, in numpy),
    while neither the proxy process nor the worker maps libtorch (extract/ner.py: spaCy and Presidio are
    imported with torch hidden, the likelihood model is read from its .npz) and the worker maps no SciPy /
    scikit-learn (transformers' companions)."""
    import httpx

    from tests.support.proxy_process import start_proxy
    from tests.support.upstream import start_upstream
    from tests.test_workers import _workers_of

    up = start_upstream()
    px = start_proxy(tmp_path, up.port)  # one worker (the helper's default)
    try:
        with httpx.Client(proxy=px.url, timeout=120) as c:
            r = c.post("http://www.google-analytics.com/collect", json={"email": "maria.keller@example.org"})
        assert r.status_code in (200, 403)
        lines = px.log_lines()
        assert lines and lines[-1]["host"].endswith("google-analytics.com"), lines[-1:]
        workers = _workers_of(px.proc.pid)
        assert len(workers) == 1, workers
        proxy_maps = (Path(f"/proc/{px.proc.pid}/maps")).read_text()
        worker_maps = (Path(f"/proc/{workers[0]}/maps")).read_text()
        assert "libtorch_cpu" not in proxy_maps
        assert "libtorch_cpu" not in worker_maps  # the likelihood model runs there, in numpy
        assert lines[-1].get("l_path") not in (None, "fixed", "norm"), lines[-1]  # stage 3 decided in the worker
        assert "/scipy/" not in worker_maps and "/sklearn/" not in worker_maps
    finally:
        px.stop()
        up.close()

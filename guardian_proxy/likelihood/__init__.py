"""Stage 3: (Action, Evidence) → violation likelihood L.

`make_stage(settings, backend)` builds what `likelihood.mode` asks for: `fixed` → FixedLikelihood;
`model` → EvidentialLikelihood (router.py: evidential fast path, LLM slow path, conservative fallback),
loading the weights now so a bad file stops the proxy at start with a message naming it.
The model runs in numpy (infer.py); torch is needed only to train it or to load a `.pt` file. `status(settings)` reports for `guardian-proxy doctor`.
"""

from __future__ import annotations

from pathlib import Path

from ..config import Settings
from ..resources import models_dir
from .fixed import FixedLikelihood

__all__ = ["FixedLikelihood", "make_stage", "model_path", "status"]

#: the numpy twin of likelihood.pt (checkpoint.py): loading it needs no torch
DEFAULT_MODEL = "likelihood.npz"


def model_path(settings: Settings) -> Path:
    f = settings.likelihood.model_file
    return Path(f).expanduser() if f else models_dir() / DEFAULT_MODEL


def make_stage(settings: Settings, backend=None):
    lk = settings.likelihood
    if lk.mode == "fixed":
        return FixedLikelihood(lk.fixed_value)
    from .router import EvidentialLikelihood

    return EvidentialLikelihood(model_path(settings), u_threshold=lk.u_threshold,
                                backend=backend if lk.slow_path else None,
                                timeout=settings.llm.timeout_s, max_tokens=min(settings.llm.max_tokens, 256))


def status(settings: Settings) -> dict:
    """Mode, model file, whether it loads, its threshold and training provenance. Never raises."""
    lk = settings.likelihood
    out: dict = {"mode": lk.mode, "ok": True}
    if lk.mode == "fixed":
        out.update(fixed_value=lk.fixed_value, detail=f"fixed L = {lk.fixed_value}")
        return out
    path = model_path(settings)
    out["model_file"] = str(path)
    try:
        from . import checkpoint

        loaded = checkpoint.load(path)
    except Exception as e:  # ModelLoadError (a bad file, or a .pt without torch): reported, not raised
        out.update(ok=False, error=f"{type(e).__name__}: {e}")
        return out
    meta = loaded.meta
    thr = lk.u_threshold or loaded.u_threshold
    slow = "llm" if (lk.slow_path and settings.llm.backend != "none") else "fallback"
    out.update(u_threshold=thr, feature_dim=loaded.spec.dim, trained_on=meta.get("trained_on"),
               pairs=meta.get("pairs"), slow_path=slow,
               detail=f"evidential model {path.name} (trained on {', '.join(meta.get('trained_on') or ['?'])}, "
                      f"{meta.get('pairs', '?')} pairs), u threshold {thr:.3f}, slow path: {slow}")
    return out

"""Routing between the evidential fast path, the LLM slow path and the conservative fallback.

    fast      u < threshold: L = risky mass (max over the action's category × purpose items)
    slow      u ≥ threshold and an LLM back end is configured: L = the LLM's strict-JSON estimate
    fallback  no policy known for the destination: a prior by recipient and basis (prior.py); or
              u ≥ threshold with no LLM, or the LLM failed, timed out or answered malformed JSON:
              L = m + u·(1 − m) (m = risky mass), i.e. the uncertain share of the mass counts as risky;
              a model that produced NaN/inf or features that failed: L = 1.0
The returned Likelihood says which path decided and why (`reason`), so the decision log shows it.
An action with several categories or purposes is split into single (category, purpose) items that are
scored in one batch; the riskiest item decides L and the largest u decides the routing.
The model's (risky mass, u) for a batch is a pure function of what the features read (features.inputs_key: the
items' categories, recipient, purposes and basis, and the destination's policy statements with their scores), so
it is kept in a bounded LRU (`CACHE_SIZE` batches) per loaded model: a page sends many requests to one host with
the same kinds of data, and each would featurize the same statements again (about 1 ms per item).
"""

from __future__ import annotations

import logging
import math
import threading
from collections import OrderedDict
from pathlib import Path

from ..errors import BackendError
from ..types import Action, Evidence, Likelihood
from . import checkpoint, prior, slow
from .features import featurize_items, statements_key

log = logging.getLogger("guardian_proxy.likelihood")
MAX_ITEMS = 8
#: batches whose model output is kept (a key holds vocabulary fields and references to policy statements' texts)
CACHE_SIZE = 2048


def fallback_value(mass: float, u: float) -> float:
    return min(1.0, max(0.0, mass + u * (1.0 - mass)))


def _vocabulary(action: Action) -> tuple[list[str], list[str]]:
    """The categories and purposes `split_items` crosses, in its order."""
    return list(action.personal()) or ["other"], list(dict.fromkeys(action.purposes or ["unknown"]))


def split_items(action: Action) -> list[Action]:
    cats, purs = _vocabulary(action)
    items = []
    for c in cats:
        for p in purs:
            items.append(action.model_copy(update={"categories": {c: 1}, "purposes": [p]}))
    return items[:MAX_ITEMS]


class EvidentialLikelihood:
    """Stage 3 with the trained model. Loads at construction (ModelLoadError names a bad file)."""

    def __init__(self, model_file: Path | str, u_threshold: float | None = None, backend=None,
                 timeout: float = 20.0, max_tokens: int = 128):
        self.loaded = checkpoint.load(model_file)
        self.u_threshold = float(u_threshold) if u_threshold is not None else self.loaded.u_threshold
        self.backend = backend
        self.timeout = timeout
        self.max_tokens = max_tokens
        self._cache: OrderedDict[tuple, tuple[float, float]] = OrderedDict()
        self._cache_lock = threading.Lock()  # the evaluator's threads (workers = 0) share one stage

    def fast(self, action: Action, evidence: Evidence) -> tuple[float, float]:
        """(risky mass, u) of the riskiest item; raises ValueError on a non-finite output (not kept)."""
        # the items are a function of the crossed vocabulary, recipient and basis (all the features read of them):
        # the key is made without copying the action into its items
        cats, purs = _vocabulary(action)
        key = ((tuple(cats), tuple(purs), action.recipient, action.basis), statements_key(evidence, self.loaded.spec))
        with self._cache_lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        items = split_items(action)
        x = featurize_items(items, evidence, self.loaded.spec)  # each statement read once for all the items
        # numpy in the caller's thread (infer.py): a batch of ≤ 8 rows through a small MLP, no torch in the process
        m, u = self.loaded.model.predict(x)
        mass, unc = m.tolist(), u.tolist()
        if not all(math.isfinite(v) for v in mass + unc):
            raise ValueError("non-finite model output")
        out = (max(mass), max(unc))
        with self._cache_lock:
            self._cache[key] = out
            self._cache.move_to_end(key)
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return out

    def estimate(self, action: Action, evidence: Evidence) -> Likelihood:
        if prior.applies(evidence):  # nothing for the model to read: a context prior (likelihood/prior.py)
            return prior.prior(action)
        try:
            mass, u = self.fast(action, evidence)
        except Exception as e:  # never an unlogged guess: the most conservative value, said so
            log.warning("likelihood model failed (%s: %s); fallback L=1.0", type(e).__name__, e)
            return Likelihood(value=1.0, path="fallback", reason=f"model failed ({type(e).__name__}); L=1")
        if u < self.u_threshold:
            return Likelihood(value=mass, path="fast", u=u, risky_mass=mass,
                              reason=f"evidential model, u={u:.3f} < {self.u_threshold:.3f}")
        fb = fallback_value(mass, u)
        if self.backend is None:
            return Likelihood(value=fb, path="fallback", u=u, risky_mass=mass,
                              reason=f"u={u:.3f} ≥ {self.u_threshold:.3f}, no LLM configured: m + u(1-m)")
        try:
            value, why = slow.ask(self.backend, action, evidence, self.timeout, self.max_tokens)
        except BackendError as e:
            log.warning("LLM slow path failed (%s); fallback L=%.3f", e, fb)
            return Likelihood(value=fb, path="fallback", u=u, risky_mass=mass,
                              reason=f"LLM failed ({str(e)[:120]}): m + u(1-m)")
        return Likelihood(value=value, path="slow", u=u, risky_mass=mass,
                          reason=f"LLM ({getattr(self.backend, 'name', 'llm')}): {why}"[:300])

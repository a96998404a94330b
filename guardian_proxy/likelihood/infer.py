"""The evidential classifier's runtime inference in numpy: the same math as model.EvidentialMLP in eval mode.

Training needs torch (model.py, training.py); running the trained network does not: a slot-shared MLP, max- and
mean-pooling over the present slots, a head, softplus evidence, then α = e + 1, S = Σα, m = α_risky / S, u = K / S.
Keeping torch out of the proxy's workers saves ~200 MB RSS each (tests/test_footprint.py). Dropout is the identity at inference.
The weights are the state dict of EvidentialMLP (names `slot_net.0.weight`, `hash_proj.1.weight`, `head.0.weight`,
…), as float32 arrays; nn.Linear computes x·Wᵀ + b.
"""

from __future__ import annotations

import numpy as np

K = 2


def softplus(x: np.ndarray) -> np.ndarray:
    """torch.nn.functional.softplus (β = 1, threshold 20: x itself above it)."""
    return np.where(x > 20.0, x, np.log1p(np.exp(np.minimum(x, 20.0))))


def dirichlet_outputs(evidence: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(risky mass, u) per row of an (n, K) evidence array."""
    alpha = evidence + 1.0
    s = alpha.sum(axis=1)
    return alpha[:, 1] / s, K / s


class NumpyEvidentialMLP:
    """Inference-only EvidentialMLP. `weights` maps state-dict names to arrays; shapes are checked against the
    layout and `hidden` here (ValueError naming the tensor), so a file that does not fit fails at load."""

    def __init__(self, dim: int, hidden: int, layout: dict, weights: dict[str, np.ndarray]):
        self.dim, self.hidden = int(dim), int(hidden)
        self.layout = {k: int(layout[k]) for k in ("n_action", "slots", "n_slot", "n_summary", "n_hash")}
        lay = self.layout
        if lay["n_action"] + lay["n_summary"] + lay["n_hash"] + lay["slots"] * lay["n_slot"] != self.dim:
            raise ValueError(f"layout {lay} does not add up to dim {dim}")
        na, ns, nh, code = lay["n_action"], lay["n_slot"], lay["n_hash"], self.hidden // 2
        head_in = na + (2 * code if ns else 0) + lay["n_summary"] + (code if nh else 0)
        want: dict[str, tuple[int, ...]] = {}
        if ns:
            want |= {"slot_net.0.weight": (self.hidden, ns + na), "slot_net.0.bias": (self.hidden,),
                     "slot_net.2.weight": (code, self.hidden), "slot_net.2.bias": (code,)}
        if nh:
            want |= {"hash_proj.1.weight": (code, nh), "hash_proj.1.bias": (code,)}
        want |= {"head.0.weight": (self.hidden, head_in), "head.0.bias": (self.hidden,),
                 "head.3.weight": (K, self.hidden), "head.3.bias": (K,)}
        if set(weights) != set(want):
            raise ValueError(f"tensors {sorted(set(weights) ^ set(want))} missing or unexpected")
        self.w: dict[str, np.ndarray] = {}
        for name, shape in want.items():
            a = np.asarray(weights[name], dtype=np.float32)
            if a.shape != shape:
                raise ValueError(f"tensor {name!r} has shape {a.shape}, the network needs {shape}")
            self.w[name] = np.ascontiguousarray(a.T if a.ndim == 2 else a)  # stored transposed: x @ Wᵀ

    def _lin(self, name: str, x: np.ndarray) -> np.ndarray:
        return x @ self.w[f"{name}.weight"] + self.w[f"{name}.bias"]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Evidence e ≥ 0, shape (n, K), float32."""
        x = np.asarray(x, dtype=np.float32)
        lay = self.layout
        na, slots, ns = lay["n_action"], lay["slots"], lay["n_slot"]
        a = x[:, :na]
        parts = [a]
        off = na + slots * ns
        if ns:
            s = x[:, na:off].reshape(-1, slots, ns)
            present = s[:, :, :1]  # slot feature 0 is "present"
            inp = np.concatenate([s, np.broadcast_to(a[:, None, :], (a.shape[0], slots, na))], axis=2)
            h = np.maximum(self._lin("slot_net.0", inp), 0.0)
            h = np.maximum(self._lin("slot_net.2", h), 0.0) * present
            count = np.maximum(present.sum(axis=1), 1.0)
            parts += [h.max(axis=1), h.sum(axis=1) / count]
        parts.append(x[:, off: off + lay["n_summary"]])
        if lay["n_hash"]:
            parts.append(np.maximum(self._lin("hash_proj.1", x[:, off + lay["n_summary"]:]), 0.0))
        z = np.maximum(self._lin("head.0", np.concatenate(parts, axis=1)), 0.0)
        return softplus(self._lin("head.3", z)).astype(np.float32)

    def predict(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(risky mass, u) per row."""
        return dirichlet_outputs(self(x))

"""The evidential classifier (torch): an MLP whose non-negative outputs are Dirichlet evidence.

For K classes with evidence e_k: α_k = e_k + 1, S = Σ α_k, class mass α_k / S, uncertainty u = K / S
(Sensoy et al., "Evidential Deep Learning to Quantify Classification Uncertainty", NeurIPS 2018).
Classes: 0 compliant, 1 risky. Trained with the expected-MSE Dirichlet loss plus a KL term towards the
uniform Dirichlet on the misleading evidence, annealed by min(1, epoch / anneal_epochs).
torch is imported here, and this module is imported only when the model path is used.
"""

from __future__ import annotations

import torch
from torch import nn

K = 2
CLASSES = ("compliant", "risky")


class EvidentialMLP(nn.Module):
    """Evidence network over the feature layout of features.FeatureSpec.

    Every evidence slot is scored by the same small network (slot features + the action's one-hots), so
    what is learnt about "a statement that covers this action" holds at every rank; the slot codes are
    max- and mean-pooled over the statements present and joined with the action, the summary block and
    a projection of the hashed text block in a head that outputs the K evidences."""

    def __init__(self, dim: int, hidden: int = 64, dropout: float = 0.2, layout: dict | None = None):
        super().__init__()
        self.dim, self.hidden, self.dropout = dim, hidden, dropout
        lay = layout or {"n_action": 0, "slots": 0, "n_slot": 0, "n_summary": 0, "n_hash": dim}
        self.layout = {k: int(lay[k]) for k in ("n_action", "slots", "n_slot", "n_summary", "n_hash")}
        if sum(self.layout[k] for k in ("n_action", "n_summary", "n_hash")) + \
                self.layout["slots"] * self.layout["n_slot"] != dim:
            raise ValueError(f"layout {self.layout} does not add up to dim {dim}")
        na, ns = self.layout["n_action"], self.layout["n_slot"]
        code = hidden // 2
        self.slot_net = nn.Sequential(nn.Linear(ns + na, hidden), nn.ReLU(), nn.Linear(hidden, code), nn.ReLU()) \
            if ns else None
        nh = self.layout["n_hash"]
        self.hash_proj = nn.Sequential(nn.Dropout(dropout), nn.Linear(nh, code), nn.ReLU()) if nh else None
        head_in = na + (2 * code if ns else 0) + self.layout["n_summary"] + (code if nh else 0)
        self.head = nn.Sequential(nn.Linear(head_in, hidden), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden, K))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Evidence e ≥ 0, shape (n, K)."""
        lay = self.layout
        na, slots, ns = lay["n_action"], lay["slots"], lay["n_slot"]
        a = x[:, :na]
        parts = [a]
        off = na + slots * ns
        if self.slot_net is not None:
            s = x[:, na:off].reshape(-1, slots, ns)
            present = s[:, :, :1]  # slot feature 0 is "present"
            h = self.slot_net(torch.cat([s, a.unsqueeze(1).expand(-1, slots, -1)], dim=2)) * present
            count = present.sum(dim=1).clamp(min=1.0)
            parts += [h.max(dim=1).values, h.sum(dim=1) / count]
        parts.append(x[:, off: off + lay["n_summary"]])
        if self.hash_proj is not None:
            parts.append(self.hash_proj(x[:, off + lay["n_summary"]:]))
        return nn.functional.softplus(self.head(torch.cat(parts, dim=1)))

    def config(self) -> dict:
        return {"dim": self.dim, "hidden": self.hidden, "dropout": self.dropout, "layout": self.layout}


def dirichlet_outputs(evidence: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(risky mass, u) per row."""
    alpha = evidence + 1.0
    s = alpha.sum(dim=1)
    return alpha[:, 1] / s, K / s


def kl_to_uniform(alpha: torch.Tensor) -> torch.Tensor:
    """KL(Dir(α) ‖ Dir(1)) per row."""
    s = alpha.sum(dim=1)
    k = torch.tensor(float(alpha.shape[1]), dtype=alpha.dtype)
    return (torch.lgamma(s) - torch.lgamma(k) - torch.lgamma(alpha).sum(dim=1)
            + ((alpha - 1.0) * (torch.digamma(alpha) - torch.digamma(s).unsqueeze(1))).sum(dim=1))


def evidential_loss(evidence: torch.Tensor, y: torch.Tensor, anneal: float) -> torch.Tensor:
    """Mean over the batch of the expected squared error under Dir(α) plus anneal · KL of the
    evidence that does not support the true class (α̃ = y + (1 − y)·α)."""
    onehot = nn.functional.one_hot(y, K).to(evidence.dtype)
    alpha = evidence + 1.0
    s = alpha.sum(dim=1, keepdim=True)
    p = alpha / s
    mse = ((onehot - p) ** 2 + p * (1 - p) / (s + 1)).sum(dim=1)
    alpha_tilde = onehot + (1 - onehot) * alpha
    return (mse + anneal * kl_to_uniform(alpha_tilde)).mean()

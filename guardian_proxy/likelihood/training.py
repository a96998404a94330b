"""Training and threshold selection for the evidential classifier (used by scripts/train_likelihood.py).

`fit` trains an EvidentialMLP with the evidential loss (KL annealed over `anneal_epochs`);
`cross_fit` gives out-of-fold (risky mass, u) for every training pair with folds grouped by policy, so
the u threshold is chosen on predictions the model did not train on; `choose_threshold` picks the u
threshold that maximises fast-path accuracy with at most `max_escalation` of the pairs escalated.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch

from .model import EvidentialMLP, dirichlet_outputs, evidential_loss


@dataclass
class TrainConfig:
    hidden: int = 64
    dropout: float = 0.2
    epochs: int = 20
    batch: int = 64
    lr: float = 1e-3
    weight_decay: float = 1e-4
    anneal_epochs: int = 10
    seed: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


def fit(x: np.ndarray, y: np.ndarray, cfg: TrainConfig, layout: dict | None = None) -> EvidentialMLP:
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    model = EvidentialMLP(x.shape[1], cfg.hidden, cfg.dropout, layout)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))
    for epoch in range(cfg.epochs):
        model.train()
        anneal = min(1.0, epoch / max(1, cfg.anneal_epochs))
        for idx in torch.randperm(len(xt), generator=gen).split(cfg.batch):
            opt.zero_grad()
            loss = evidential_loss(model(xt[idx]), yt[idx], anneal)
            loss.backward()
            opt.step()
    model.eval()
    return model


@torch.no_grad()
def predict(model: EvidentialMLP, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(risky mass, u) per row."""
    model.eval()
    m, u = dirichlet_outputs(model(torch.from_numpy(x)))
    return m.numpy(), u.numpy()


def fold_of(groups: np.ndarray, folds: int) -> dict:
    """Group (policy) → fold: groups assigned round-robin in sorted order."""
    return {g: i % folds for i, g in enumerate(sorted(set(groups.tolist()), key=str))}


def cross_fit(x: np.ndarray, y: np.ndarray, groups: np.ndarray, cfg: TrainConfig, folds: int = 5,
              layout: dict | None = None):
    """Out-of-fold (risky mass, u); folds are groups (policies) assigned round-robin in sorted order."""
    fo = fold_of(groups, folds)
    f = np.array([fo[g] for g in groups.tolist()])
    mass, unc = np.zeros(len(y), dtype=np.float32), np.zeros(len(y), dtype=np.float32)
    for k in range(folds):
        tr, te = f != k, f == k
        if not te.any() or not tr.any():
            continue
        model = fit(x[tr], y[tr], cfg, layout)
        mass[te], unc[te] = predict(model, x[te])
    return mass, unc


def choose_threshold(mass: np.ndarray, u: np.ndarray, y: np.ndarray, max_escalation: float) -> dict:
    """The u threshold (escalate when u ≥ threshold) with the best fast-path accuracy among those that
    escalate at most `max_escalation` of the pairs; ties go to the smaller escalation."""
    correct = ((mass >= 0.5).astype(int) == y)
    order = np.argsort(-u)  # most uncertain first
    n = len(u)
    best = {"u_threshold": float(u.max()) + 1e-6, "escalation": 0.0, "accuracy_fast": float(correct.mean())}
    kept_correct = int(correct.sum())
    for i in range(min(n - 1, int(max_escalation * n))):
        kept_correct -= int(correct[order[i]])
        if i + 1 < n and u[order[i + 1]] == u[order[i]]:
            continue  # a threshold cannot split equal u values
        acc = kept_correct / (n - i - 1)
        if acc > best["accuracy_fast"] + 1e-12:
            best = {"u_threshold": float(u[order[i]]), "escalation": (i + 1) / n, "accuracy_fast": acc}
    return best

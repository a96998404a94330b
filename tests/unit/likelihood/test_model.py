"""The evidential network and loss: Dirichlet outputs, KL term, training, threshold choice."""

import numpy as np
import torch

from guardian_proxy.likelihood.features import FeatureSpec
from guardian_proxy.likelihood.model import EvidentialMLP, dirichlet_outputs, evidential_loss, kl_to_uniform
from guardian_proxy.likelihood.training import TrainConfig, choose_threshold, cross_fit, fit, predict


def test_dirichlet_outputs_u_is_k_over_s():
    e = torch.tensor([[0.0, 0.0], [8.0, 0.0], [0.0, 98.0]])
    m, u = dirichlet_outputs(e)
    assert torch.allclose(u, torch.tensor([1.0, 0.2, 0.02]))
    assert torch.allclose(m, torch.tensor([0.5, 0.1, 0.99]))


def test_kl_is_zero_at_the_uniform_dirichlet_and_positive_elsewhere():
    assert torch.allclose(kl_to_uniform(torch.ones(3, 2)), torch.zeros(3), atol=1e-6)
    assert (kl_to_uniform(torch.tensor([[5.0, 1.0], [1.0, 3.0]])) > 0).all()


def test_loss_prefers_evidence_for_the_true_class():
    y = torch.tensor([1, 0])
    right = evidential_loss(torch.tensor([[0.0, 20.0], [20.0, 0.0]]), y, anneal=1.0)
    wrong = evidential_loss(torch.tensor([[20.0, 0.0], [0.0, 20.0]]), y, anneal=1.0)
    none = evidential_loss(torch.zeros(2, 2), y, anneal=1.0)
    assert right < none < wrong


def toy(n=400, seed=0):
    spec = FeatureSpec()
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 0.1, (n, spec.dim)).astype(np.float32)
    y = rng.integers(0, 2, n)
    x[:, 0] += y  # the first action one-hot carries the label
    return spec, x, y


def test_training_learns_and_is_uncertain_off_distribution():
    torch.manual_seed(0)
    spec, x, y = toy()
    model = fit(x, y, TrainConfig(epochs=15), spec.layout())
    m, u = predict(model, x)
    assert ((m >= 0.5) == y).mean() > 0.95
    far = np.zeros((1, spec.dim), dtype=np.float32)
    far[0, 0] = 0.5  # halfway between the classes
    _, u_far = predict(model, far)
    assert u_far[0] > np.median(u)


def test_cross_fit_gives_out_of_fold_predictions():
    spec, x, y = toy(200)
    groups = np.arange(200) % 10
    m, u = cross_fit(x, y, groups, TrainConfig(epochs=5), folds=5, layout=spec.layout())
    assert m.shape == (200,) and (u > 0).all() and (u <= 1).all()


def test_choose_threshold_escalates_the_uncertain_wrong_ones():
    mass = np.array([0.9, 0.1, 0.8, 0.2, 0.6, 0.45])
    y = np.array([1, 0, 1, 0, 0, 1])  # the last two are wrong and the most uncertain
    u = np.array([0.1, 0.1, 0.2, 0.2, 0.8, 0.9])
    c = choose_threshold(mass, u, y, max_escalation=0.34)
    assert c["u_threshold"] == 0.8 and c["accuracy_fast"] == 1.0 and abs(c["escalation"] - 2 / 6) < 1e-9
    c = choose_threshold(mass, u, y, max_escalation=0.0)
    assert c["escalation"] == 0.0 and c["u_threshold"] > 0.9


def test_network_rejects_a_layout_that_does_not_add_up():
    import pytest

    with pytest.raises(ValueError):
        EvidentialMLP(10, layout={"n_action": 3, "slots": 2, "n_slot": 2, "n_summary": 1, "n_hash": 0})

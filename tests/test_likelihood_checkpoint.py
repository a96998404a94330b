"""Bad weights fail at load with the file named: missing, corrupt, wrong feature size, NaN."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from guardian_proxy.config import load_settings
from guardian_proxy.errors import ModelLoadError
from guardian_proxy.likelihood import checkpoint, make_stage, model_path
from guardian_proxy.likelihood.features import FeatureSpec
from guardian_proxy.likelihood.model import EvidentialMLP

ROOT = Path(__file__).resolve().parents[1]


def saved(tmp_path, **kw) -> Path:
    spec = FeatureSpec()
    model = EvidentialMLP(spec.dim, 16, 0.0, spec.layout())
    p = tmp_path / "m.pt"
    checkpoint.save(p, model, spec, kw.get("thr", 0.5), {"trained_on": ["test"]})
    return p


def test_roundtrip(tmp_path):
    p = saved(tmp_path)
    lm = checkpoint.load(p)
    assert lm.u_threshold == 0.5 and lm.spec.dim == FeatureSpec().dim and lm.meta["trained_on"] == ["test"]
    x = np.zeros((2, lm.spec.dim), np.float32)
    assert lm.model(x).shape == (2, 2)


def test_missing_file(tmp_path):
    with pytest.raises(ModelLoadError, match=str(tmp_path / "nope.pt")):
        checkpoint.load(tmp_path / "nope.pt")


def test_corrupt_file(tmp_path):
    p = tmp_path / "bad.pt"
    p.write_bytes(b"\x80\x04 definitely not a checkpoint")
    with pytest.raises(ModelLoadError, match="bad.pt.*corrupt"):
        checkpoint.load(p)
    torch.save({"hello": 1}, p)
    with pytest.raises(ModelLoadError, match="not a guardian-likelihood"):
        checkpoint.load(p)


def test_wrong_feature_size(tmp_path):
    p = saved(tmp_path)
    ck = torch.load(p, weights_only=True)
    ck["features"]["dim"] += 3
    torch.save(ck, p)
    with pytest.raises(ModelLoadError, match="feature size mismatch"):
        checkpoint.load(p)


def test_nan_weights(tmp_path):
    p = saved(tmp_path)
    ck = torch.load(p, weights_only=True)
    k = next(iter(ck["state_dict"]))
    ck["state_dict"][k][0] = float("nan")
    torch.save(ck, p)
    with pytest.raises(ModelLoadError, match="NaN"):
        checkpoint.load(p)


def test_bad_threshold(tmp_path):
    with pytest.raises(ModelLoadError, match="u_threshold"):
        checkpoint.load(saved(tmp_path, thr=float("nan")))


def test_stage_from_settings(tmp_path):
    s = load_settings(state_dir=tmp_path)
    # the shipped weights: the numpy twin of likelihood.pt, loaded without torch (tests/test_footprint.py)
    assert model_path(s).name == "likelihood.npz" and model_path(s).is_file()
    stage = make_stage(s)
    assert 0 < stage.u_threshold <= 1
    s = load_settings(state_dir=tmp_path, likelihood={"mode": "fixed", "fixed_value": 0.3})
    assert make_stage(s).value == 0.3
    s = load_settings(state_dir=tmp_path, likelihood={"model_file": str(tmp_path / "gone.pt")})
    with pytest.raises(ModelLoadError, match="gone.pt"):
        make_stage(s)


@pytest.mark.slow
def test_proxy_refuses_to_start_with_a_corrupt_model(tmp_path):
    bad = tmp_path / "broken.pt"
    bad.write_bytes(b"garbage")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"likelihood: {{model_file: {bad}}}\n")
    r = subprocess.run([str(Path(sys.executable).parent / "guardian-proxy"), "check", "--config", str(cfg), "--url",
                        "http://x.example/", "--data", "email me at a@b.example"], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    assert r.returncode != 0
    assert "broken.pt" in (r.stdout + r.stderr)
    assert "Traceback" not in r.stderr and r.stderr.startswith("error:"), r.stderr  # one clear line

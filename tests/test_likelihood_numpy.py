"""Memory (docs/design/likelihood.md): the likelihood model runs in numpy (likelihood/infer.py) from an .npz
written beside the .pt, so the proxy's workers import no torch. Same outputs as the torch network; the npz is
checked like the .pt at load."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from guardian_proxy.config import load_settings
from guardian_proxy.errors import ModelLoadError
from guardian_proxy.likelihood import checkpoint, model_path
from guardian_proxy.likelihood import reader as rd
from guardian_proxy.likelihood.features import FeatureSpec, featurize_many
from guardian_proxy.likelihood.infer import softplus
from guardian_proxy.likelihood.pairs import read_pairs

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = model_path(load_settings())
#: the OPP-115 pairs the shipped model was built from (scripts/build_pairs.py; local, not committed)
OPP_PAIRS = SHIPPED.parent / "opp115-text.local.pairs.jsonl"


def torch_model(pt: Path):
    """The torch EvidentialMLP with the .pt's weights (the reference the numpy network must equal)."""
    torch = pytest.importorskip("torch")
    from guardian_proxy.likelihood.model import EvidentialMLP

    ck = torch.load(pt, map_location="cpu", weights_only=True)
    m = EvidentialMLP(ck["model"]["dim"], ck["model"]["hidden"], 0.0, ck["model"]["layout"])
    m.load_state_dict({k: v.float() for k, v in ck["state_dict"].items()})
    return m.eval()


def torch_outputs(model, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    import torch

    from guardian_proxy.likelihood.model import dirichlet_outputs

    with torch.no_grad():
        m, u = dirichlet_outputs(model(torch.from_numpy(x)))
    return m.numpy(), u.numpy()


def feature_rows(spec: FeatureSpec, n: int, seed: int = 0) -> np.ndarray:
    """Random rows in the feature layout: 0/1 action and presence flags (slots filled from the front), values in
    [0, 1] elsewhere, some large ones (softplus above its threshold)."""
    rng = np.random.default_rng(seed)
    lay = spec.layout()
    x = rng.random((n, spec.dim), dtype=np.float32)
    x[:, : lay["n_action"]] = rng.random((n, lay["n_action"])) < 0.2
    off = lay["n_action"]
    filled = rng.integers(0, lay["slots"] + 1, n)
    for s in range(lay["slots"]):
        x[:, off + s * lay["n_slot"]] = (s < filled).astype(np.float32)
    x[: n // 10] *= 40.0
    return x


def test_softplus_matches_torch():
    torch = pytest.importorskip("torch")
    z = np.linspace(-50, 50, 2001, dtype=np.float32)
    assert np.abs(softplus(z) - torch.nn.functional.softplus(torch.from_numpy(z)).numpy()).max() <= 1e-6


def test_shipped_npz_equals_the_torch_model_on_random_feature_rows():
    lm = checkpoint.load(SHIPPED)
    assert SHIPPED.suffix == ".npz"
    x = feature_rows(lm.spec, 2000)
    m, u = lm.model.predict(x)
    tm, tu = torch_outputs(torch_model(SHIPPED.with_suffix(".pt")), x)
    assert np.abs(m - tm).max() <= 1e-5 and np.abs(u - tu).max() <= 1e-5


@pytest.mark.slow
def test_shipped_npz_equals_the_torch_model_on_the_opp115_test_pairs():
    if not OPP_PAIRS.is_file():
        pytest.skip(f"{OPP_PAIRS.name} absent (scripts/build_pairs.py opp115 writes it)")
    lm = checkpoint.load(SHIPPED)
    pairs = [p for p in read_pairs(OPP_PAIRS) if p.split == "test"]
    x = featurize_many(((p.action, p.evidence) for p in pairs), lm.spec)
    m, u = lm.model.predict(x)
    tm, tu = torch_outputs(torch_model(SHIPPED.with_suffix(".pt")), x)
    assert len(pairs) > 1000
    assert np.abs(m - tm).max() <= 1e-5 and np.abs(u - tu).max() <= 1e-5


def test_the_npz_and_the_pt_load_to_the_same_network(tmp_path):
    pytest.importorskip("torch")
    from guardian_proxy.likelihood.model import EvidentialMLP

    reader = rd.Reader(np.full((1 << 6, len(rd.OUTPUTS)), 0.01, np.float32), np.zeros(len(rd.OUTPUTS), np.float32), 6)
    spec = FeatureSpec(reader=reader)
    pt = tmp_path / "m.pt"
    checkpoint.save(pt, EvidentialMLP(spec.dim, 16, 0.0, spec.layout()), spec, 0.4, {"trained_on": ["test"]})
    a, b = checkpoint.load(pt), checkpoint.load(pt.with_suffix(".npz"))
    assert a.u_threshold == b.u_threshold == pytest.approx(0.4) and a.meta == b.meta
    assert np.array_equal(a.spec.reader.weight, b.spec.reader.weight) and a.spec.dim == b.spec.dim
    x = feature_rows(spec, 50)
    assert np.array_equal(a.model(x), b.model(x))
    tm, tu = torch_outputs(torch_model(pt), x)
    m, u = b.model.predict(x)
    assert np.abs(m - tm).max() <= 1e-5 and np.abs(u - tu).max() <= 1e-5


def test_export_writes_the_same_npz_as_save(tmp_path):
    pytest.importorskip("torch")
    from guardian_proxy.likelihood.model import EvidentialMLP

    spec = FeatureSpec()
    pt = tmp_path / "m.pt"
    checkpoint.save(pt, EvidentialMLP(spec.dim, 16, 0.0, spec.layout()), spec, 0.5, {"trained_on": ["test"]})
    first = dict(np.load(pt.with_suffix(".npz")))
    pt.with_suffix(".npz").unlink()
    assert checkpoint.export_npz(pt) == pt.with_suffix(".npz")
    again = dict(np.load(pt.with_suffix(".npz")))
    assert first.keys() == again.keys() and all(np.array_equal(first[k], again[k]) for k in first)


def damaged(tmp_path, change) -> Path:
    src = dict(np.load(SHIPPED))
    header = json.loads(str(src["header"][()]))
    change(src, header)
    src["header"] = np.array(json.dumps(header))
    p = tmp_path / "hurt.npz"
    np.savez(p, **src)
    return p


def _nan(src, h):
    src["sd:head.3.bias"] = np.array([np.nan, 0.0], np.float16)


def _shape(src, h):
    src["sd:head.0.weight"] = src["sd:head.0.weight"][:, 1:]


def _missing(src, h):
    del src["sd:slot_net.2.bias"]


def _thr(src, h):
    h["u_threshold"] = 1.5


def _layout(src, h):
    h["model"]["layout"]["n_summary"] += 1


def _reader_nan(src, h):
    src["reader:bias"] = np.full_like(src["reader:bias"], np.inf)


def _reader_outputs(src, h):
    h["reader"]["outputs"] = ["x"]


def _format(src, h):
    h["format"] = "something-else"


@pytest.mark.parametrize("change, match", [
    (_nan, "NaN"), (_shape, "do not fit"), (_missing, "do not fit"), (_thr, "u_threshold"), (_layout, "layout"),
    (_reader_nan, "reader holds NaN"), (_reader_outputs, "outputs differ"), (_format, "not a guardian-likelihood"),
])
def test_a_damaged_npz_fails_at_load_naming_the_file(tmp_path, change, match):
    p = damaged(tmp_path, change)
    with pytest.raises(ModelLoadError, match=match) as e:
        checkpoint.load(p)
    assert "hurt.npz" in str(e.value)


def test_a_corrupt_or_pickled_npz_fails_at_load(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(ModelLoadError, match="bad.npz.*corrupt"):
        checkpoint.load(bad)
    np.savez(bad, header=np.array([{"format": checkpoint.FORMAT}], dtype=object))  # needs pickle: refused
    with pytest.raises(ModelLoadError, match="bad.npz.*corrupt"):
        checkpoint.load(bad)
    with pytest.raises(ModelLoadError, match="gone.npz"):
        checkpoint.load(tmp_path / "gone.npz")


def test_a_pt_without_torch_names_the_npz(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ModelLoadError, match=r"m\.pt.*needs torch.*m\.npz"):
        (tmp_path / "m.pt").write_bytes(b"x")
        checkpoint.load(tmp_path / "m.pt")


CHILD = """
import sys, json
from guardian_proxy.config import load_settings
from guardian_proxy.likelihood import make_stage
from guardian_proxy.types import Action, Evidence, ScoredStatement, Statement
st = Statement(id="x.com:1", domain="x.com", practice="share", text="We share your email address with advertising "
               "partners.", data_categories=["contact"], recipients=["ad_network"], purposes=["advertising"])
stage = make_stage(load_settings(state_dir=sys.argv[1]))
lk = stage.estimate(Action(domain="x.com", host="x.com", categories={"contact": 1}, recipient="ad_network",
                           purposes=["advertising"]), Evidence(statements=[ScoredStatement(statement=st, score=0.9)]))
print(json.dumps({"torch": "torch" in sys.modules, "path": lk.path, "value": lk.value}))
"""


def test_the_default_stage_imports_no_torch(tmp_path):
    r = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["torch"] is False and out["path"] in ("fast", "fallback") and 0 <= out["value"] <= 1


NER_CHILD = """
import sys, json
from guardian_proxy.extract.ner import NerEngine
hits = NerEngine().analyze(["John Smith lives in Paris and works as a nurse."])[0]
torch_then = "torch" in sys.modules
import torch  # still importable afterwards (training, the transformers back end)
print(json.dumps({"torch": torch_then, "labels": sorted({h[2] for h in hits}), "real": hasattr(torch, "tensor")}))
"""


@pytest.mark.slow
def test_spacy_and_presidio_load_without_torch_and_find_the_same_entities():
    pytest.importorskip("torch")
    r = subprocess.run([sys.executable, "-c", NER_CHILD], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["torch"] is False and out["real"] is True
    assert {"PERSON", "LOCATION", "OCCUPATION"} <= set(out["labels"])

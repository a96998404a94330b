"""Saving and loading the evidential classifier, with the checks that make a bad file fail at load.

A checkpoint is a `torch.save` dict read back with `weights_only=True` (no pickled code):
    format       "guardian-likelihood/1"
    features     FeatureSpec.as_dict()   (dim must equal what this code computes for hash_bits)
    model        EvidentialMLP.config()  (dim must equal features.dim)
    state_dict   tensors (stored as float16 to keep models/ small; every value must be finite)
    reader       (when features.reader) the statement reader: {"bits", "outputs", "weight", "bias"[, "idf_weights"]}
                 (float16, finite, shapes checked)
    u_threshold  the routing threshold chosen on the training split
    meta         training data, sizes and the measured numbers (informative)
Any problem raises ModelLoadError naming the file, so the proxy refuses to start.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..errors import ModelLoadError
from .features import FeatureSpec

FORMAT = "guardian-likelihood/1"


class LoadedModel:
    def __init__(self, path: Path, model, spec: FeatureSpec, u_threshold: float, meta: dict):
        self.path, self.model, self.spec, self.u_threshold, self.meta = path, model, spec, u_threshold, meta


def save(path: Path, model, spec: FeatureSpec, u_threshold: float, meta: dict) -> None:
    import torch

    state = {k: v.detach().to(torch.float16) for k, v in model.state_dict().items()}
    ck = {"format": FORMAT, "features": spec.as_dict(), "model": model.config(), "state_dict": state,
          "u_threshold": float(u_threshold), "meta": meta}
    if spec.reader is not None:
        ck["reader"] = {**spec.reader.state(), "weight": torch.from_numpy(spec.reader.weight).to(torch.float16),
                        "bias": torch.from_numpy(spec.reader.bias).to(torch.float16)}
        if spec.reader.idf is not None:
            ck["reader"]["idf_weights"] = torch.from_numpy(spec.reader.idf).to(torch.float16)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(ck, path)


def _reader(path: Path, rd):
    import torch

    from .reader import OUTPUTS, Reader

    try:
        w, b, bits = rd["weight"], rd["bias"], int(rd["bits"])
        if list(rd["outputs"]) != list(OUTPUTS):
            raise ModelLoadError(f"likelihood model {path}: statement reader outputs differ from this version's")
        if not (torch.is_tensor(w) and torch.is_tensor(b) and torch.isfinite(w).all() and torch.isfinite(b).all()):
            raise ModelLoadError(f"likelihood model {path}: statement reader holds NaN/inf or is not a tensor")
        idf = rd.get("idf_weights")
        if idf is not None and not (torch.is_tensor(idf) and torch.isfinite(idf).all()):
            raise ModelLoadError(f"likelihood model {path}: statement reader idf holds NaN/inf or is not a tensor")
        return Reader(w.float().numpy(), b.float().numpy(), bits, None if idf is None else idf.float().numpy())
    except (KeyError, TypeError, ValueError) as e:
        raise ModelLoadError(f"likelihood model {path}: malformed statement reader ({e})") from e


def load(path: Path | str) -> LoadedModel:
    import torch

    from .model import EvidentialMLP

    path = Path(path)
    if not path.is_file():
        raise ModelLoadError(f"likelihood model not found: {path} (train one with scripts/train_likelihood.py "
                             f"or set likelihood.mode: fixed)")
    try:
        ck = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for a corrupt or foreign file
        raise ModelLoadError(f"likelihood model {path} is corrupt or not a checkpoint: {type(e).__name__}: {e}") from e
    if not isinstance(ck, dict) or ck.get("format") != FORMAT:
        raise ModelLoadError(f"likelihood model {path}: not a {FORMAT} checkpoint")
    try:
        fs, mc, sd = ck["features"], ck["model"], ck["state_dict"]
        reader = _reader(path, ck["reader"]) if fs.get("reader") else None
        spec = FeatureSpec(hash_bits=int(fs["hash_bits"]), slots=int(fs["slots"]), reader=reader)
        thr = float(ck["u_threshold"])
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ModelLoadError(f"likelihood model {path}: missing or malformed field ({e})") from e
    if spec.dim != int(fs.get("dim", -1)) or int(mc.get("dim", -1)) != spec.dim:
        raise ModelLoadError(f"likelihood model {path}: feature size mismatch (file says {fs.get('dim')} / "
                             f"{mc.get('dim')}, this version computes {spec.dim})")
    if not (math.isfinite(thr) and 0.0 < thr <= 1.0 + 1e-6):
        raise ModelLoadError(f"likelihood model {path}: u_threshold {thr!r} outside (0, 1]")
    if mc.get("layout") != spec.layout():
        raise ModelLoadError(f"likelihood model {path}: feature layout {mc.get('layout')} differs from this "
                             f"version's {spec.layout()}")
    model = EvidentialMLP(spec.dim, int(mc.get("hidden", 64)), float(mc.get("dropout", 0.0)), spec.layout())
    for k, v in sd.items():
        if not torch.is_tensor(v) or not torch.isfinite(v).all():
            raise ModelLoadError(f"likelihood model {path}: tensor {k!r} holds NaN/inf or is not a tensor")
    try:
        model.load_state_dict({k: v.float() for k, v in sd.items()})
    except RuntimeError as e:
        raise ModelLoadError(f"likelihood model {path}: weights do not fit the network ({e})") from e
    model.eval()
    return LoadedModel(path, model, spec, thr, dict(ck.get("meta") or {}))

"""Saving and loading the evidential classifier, with the checks that make a bad file fail at load.

Two files hold the same model; the training script writes both (`save`):
  `<name>.npz`  what the proxy loads (numpy only, `allow_pickle=False`): torch stays out of its workers (tests/test_footprint.py);
                `header` a JSON string {format, features, model, u_threshold, meta, reader: {bits, outputs}},
                `sd:<name>` the state dict and `reader:weight|bias|idf_weights`, float16
  `<name>.pt`   a `torch.save` dict read back with `weights_only=True` (no pickled code), for torch users:
    format       "guardian-likelihood/1"
    features     FeatureSpec.as_dict()   (dim must equal what this code computes for hash_bits)
    model        EvidentialMLP.config()  (dim must equal features.dim)
    state_dict   tensors (stored as float16 to keep models/ small; every value must be finite)
    reader       (when features.reader) the statement reader: {"bits", "outputs", "chars", "weight", "bias"[, "idf_weights"]}
                 (float16, finite, shapes checked)
    u_threshold  the routing threshold chosen on the training split
    meta         training data, sizes and the measured numbers (informative)
`load` reads either by suffix (a `.pt` needs torch) and returns the numpy network (infer.NumpyEvidentialMLP) both
ways. Any problem raises ModelLoadError naming the file, so the proxy refuses to start.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from ..errors import ModelLoadError
from .features import FeatureSpec

FORMAT = "guardian-likelihood/1"


class LoadedModel:
    def __init__(self, path: Path, model, spec: FeatureSpec, u_threshold: float, meta: dict):
        self.path, self.model, self.spec, self.u_threshold, self.meta = path, model, spec, u_threshold, meta


def npz_path(path: Path | str) -> Path:
    return Path(path).with_suffix(".npz")


def save(path: Path, model, spec: FeatureSpec, u_threshold: float, meta: dict) -> None:
    """Write `path` (.pt, torch) and the numpy twin next to it (npz_path(path)); `model` is an EvidentialMLP."""
    import torch

    state = {k: v.detach().to(torch.float16) for k, v in model.state_dict().items()}
    ck = {"format": FORMAT, "features": spec.as_dict(), "model": model.config(), "state_dict": state,
          "u_threshold": float(u_threshold), "meta": meta}
    if spec.reader is not None:
        ck["reader"] = {**spec.reader.state(), "weight": torch.from_numpy(spec.reader.weight).to(torch.float16),
                        "bias": torch.from_numpy(spec.reader.bias).to(torch.float16)}
        if spec.reader.idf is not None:
            ck["reader"]["idf_weights"] = torch.from_numpy(spec.reader.idf).to(torch.float16)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(ck, path)
    _write_npz(npz_path(path), ck)


def export_npz(pt: Path | str) -> Path:
    """Write the numpy twin of an existing .pt checkpoint (the same float16 values); returns its path."""
    import torch

    pt = Path(pt)
    out = npz_path(pt)
    _write_npz(out, torch.load(pt, map_location="cpu", weights_only=True))
    return out


def _write_npz(out: Path, ck: dict) -> None:
    import torch

    def f16(v):
        return v.detach().to(torch.float16).numpy()

    header = {k: ck[k] for k in ("format", "features", "model", "u_threshold", "meta")}
    arrays = {f"sd:{k}": f16(v) for k, v in ck["state_dict"].items()}
    if ck.get("reader") is not None:
        header["reader"] = {k: v for k, v in ck["reader"].items() if not torch.is_tensor(v)}
        arrays |= {f"reader:{k}": f16(v) for k, v in ck["reader"].items() if torch.is_tensor(v)}
    with open(out, "wb") as f:
        np.savez(f, header=np.array(json.dumps(header)), **arrays)


def _finite(a) -> bool:
    return isinstance(a, np.ndarray) and a.dtype.kind == "f" and bool(np.isfinite(a).all())


def _reader(path: Path, rd):
    from .reader import OUTPUTS, Reader

    try:
        w, b, bits = rd["weight"], rd["bias"], int(rd["bits"])
        if list(rd["outputs"]) != list(OUTPUTS):
            raise ModelLoadError(f"likelihood model {path}: statement reader outputs differ from this version's")
        if not (_finite(w) and _finite(b)):
            raise ModelLoadError(f"likelihood model {path}: statement reader holds NaN/inf or is not a tensor")
        idf = rd.get("idf_weights")
        if idf is not None and not _finite(idf):
            raise ModelLoadError(f"likelihood model {path}: statement reader idf holds NaN/inf or is not a tensor")
        return Reader(w.astype(np.float32), b.astype(np.float32), bits,
                      None if idf is None else idf.astype(np.float32), bool(rd.get("chars", False)))
    except (KeyError, TypeError, ValueError) as e:
        raise ModelLoadError(f"likelihood model {path}: malformed statement reader ({e})") from e


def _read_npz(path: Path) -> dict:
    """The checkpoint dict with numpy arrays in place of tensors."""
    with np.load(path, allow_pickle=False) as z:
        files = set(z.files)
        ck = json.loads(str(z["header"][()]))
        if not isinstance(ck, dict):
            raise ValueError("header is not an object")
        ck["state_dict"] = {k[3:]: z[k] for k in files if k.startswith("sd:")}
        if isinstance(ck.get("reader"), dict):
            ck["reader"] |= {k[7:]: z[k] for k in files if k.startswith("reader:")}
    return ck


def _read_pt(path: Path) -> dict:
    import torch

    ck = torch.load(path, map_location="cpu", weights_only=True)

    def arr(v):  # a tensor → float numpy array; anything else is kept and fails the checks below
        return v.detach().float().numpy() if torch.is_tensor(v) and v.is_floating_point() else v

    if isinstance(ck, dict):
        if isinstance(ck.get("state_dict"), dict):
            ck["state_dict"] = {k: arr(v) for k, v in ck["state_dict"].items()}
        if isinstance(ck.get("reader"), dict):
            ck["reader"] = {k: arr(v) for k, v in ck["reader"].items()}
    return ck


def load(path: Path | str) -> LoadedModel:
    from .infer import NumpyEvidentialMLP

    path = Path(path)
    if not path.is_file():
        raise ModelLoadError(f"likelihood model not found: {path} (train one with scripts/train_likelihood.py "
                             f"or set likelihood.mode: fixed)")
    if path.suffix != ".npz":
        try:
            import torch  # noqa: F401
        except ImportError as e:
            raise ModelLoadError(f"likelihood model {path}: a torch checkpoint needs torch; point likelihood."
                                 f"model_file at its .npz twin ({npz_path(path).name})") from e
    try:
        ck = _read_npz(path) if path.suffix == ".npz" else _read_pt(path)
    except Exception as e:  # numpy, zipfile, json and torch raise many types for a corrupt or foreign file
        first = next((line.strip() for line in str(e).splitlines() if line.strip()), "")[:160]  # torch's is a page
        raise ModelLoadError(f"likelihood model {path} is corrupt or not a checkpoint: {type(e).__name__}: {first}") from e
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
    for k, v in sd.items():
        if not _finite(v):
            raise ModelLoadError(f"likelihood model {path}: tensor {k!r} holds NaN/inf or is not a tensor")
    try:
        model = NumpyEvidentialMLP(spec.dim, int(mc.get("hidden", 64)), spec.layout(), sd)
    except (ValueError, TypeError) as e:
        raise ModelLoadError(f"likelihood model {path}: weights do not fit the network ({e})") from e
    return LoadedModel(path, model, spec, thr, dict(ck.get("meta") or {}))

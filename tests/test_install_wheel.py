"""Installed like a real tool (docs/install.md): the built wheel, installed into a fresh venv outside the
checkout, runs
`guardian-proxy` from any directory with the shipped data inside the package (policies, factor tables, the
likelihood model).

The wheel is built offline from a clean copy of what a source tree ships (pyproject.toml, README.md, the package;
no caches, no `*.local.*` training artefacts, no stale `build/` or `*.egg-info` of the checkout) with this venv's
setuptools (`--no-build-isolation --no-index`). The fresh venv reuses this venv's dependencies through a `.pth`
file naming its site-packages *after* the new venv's own: a plain path line, so the checkout's editable finder
(an `__editable__*.pth` there, processed only for site dirs) is never loaded and `guardian_proxy` is imported from
the wheel's copy (checked)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import httpx
import pytest

from tests.support.proxy_process import _LISTENING, _wait_for_banner, stop_process
from tests.support.upstream import start_upstream

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "guardian_proxy"
#: what a source distribution of the project holds besides the package (LICENSE files, when there are some)
TOP_FILES = ("pyproject.toml", "README.md", "LICENSE", "LICENSE.txt", "LICENSE.md", "NOTICE", "NOTICE.md")
#: never shipped: caches and what the training scripts write next to the shipped model (.gitignore: *.local.*)
NOT_SHIPPED = ("__pycache__", "*.pyc", "*.local.*")
#: a phone app's SDK: not a page, not the user's own client (a request from httpx is addressed to its host)
APP = {"user-agent": "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8)"}


def _clean_env() -> dict:
    """The environment without anything that would point the install back at the checkout."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "GUARDIAN_STATE_DIR")
           and not (k.startswith("GUARDIAN_") and k.endswith("_DIR"))}
    env["HF_HUB_OFFLINE"] = "1"
    return env


def _run(args: list, cwd: Path, timeout: float = 600, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=_clean_env(), capture_output=True, text=True,
                          timeout=timeout, **kw)


def _shipped_files(src: Path) -> set[str]:
    """The package's files other than Python sources (data, static, policies, …), as paths in the wheel."""
    skip = shutil.ignore_patterns(*NOT_SHIPPED)
    out = set()
    for d, dirs, files in os.walk(src / PACKAGE):
        dirs[:] = [x for x in dirs if x not in skip(d, [x])]
        for f in set(files) - skip(d, files):
            if not f.endswith(".py"):
                out.add((Path(d) / f).relative_to(src).as_posix())
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(source copy, wheel, the fresh venv's bin/, a temp cwd outside the checkout)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in TOP_FILES:
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / PACKAGE, src / PACKAGE, ignore=shutil.ignore_patterns(*NOT_SHIPPED))
    # the checkout's own training artefacts are large and left out of the copy; a small one stands in for them, to
    # check that pyproject.toml (exclude-package-data) keeps them out of a wheel built from a checkout
    (src / PACKAGE / "models").mkdir(exist_ok=True)
    (src / PACKAGE / "models" / "probe.local.pairs.jsonl").write_text('{"a": 1}\n')
    dist = tmp / "dist"
    r = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
              ".", "-w", dist], cwd=src)
    assert r.returncode == 0, r.stdout + r.stderr
    (wheel,) = dist.glob("guardian_proxy-*.whl")

    venv = tmp / "venv"
    r = _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp)
    assert r.returncode == 0, r.stdout + r.stderr
    py = venv / "bin" / "python"
    r = _run([sys.executable, "-m", "pip", "--python", py, "install", "-q", "--no-deps", "--no-index", wheel],
             cwd=tmp)
    assert r.returncode == 0, r.stdout + r.stderr
    new_site = Path(_run([py, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                         cwd=tmp).stdout.strip())
    ours = dict.fromkeys(sysconfig.get_path(k) for k in ("purelib", "platlib"))  # this venv's, in order, no dups
    # "zz": processed after anything of the new venv's own; plain path lines: appended to sys.path as they are
    (new_site / "zz-reuse-checkout-dependencies.pth").write_text("".join(f"{p}\n" for p in ours))
    cwd = tmp / "elsewhere"
    cwd.mkdir()
    return src, wheel, venv / "bin", cwd


def test_the_wheel_carries_the_shipped_data_and_no_local_artefacts(installed):
    src, wheel, _, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = _shipped_files(src) - names
    assert not missing, f"files of the package left out of the wheel (package-data in pyproject.toml): {missing}"
    from guardian_proxy.likelihood import DEFAULT_MODEL

    for need in ("policies/index.json", "factor_tables/sensitivity.yaml", f"models/{DEFAULT_MODEL}",
                 "static/index.html", "data/recipients.json"):
        assert f"{PACKAGE}/{need}" in names
    assert not [n for n in names if ".local." in n or "__pycache__" in n]
    assert not [n for n in names if n.startswith(("tests/", "scripts/", "build/"))]


def test_the_install_imports_its_own_copy_from_any_directory(installed):
    _, _, bin_dir, cwd = installed
    code = ("import json, sys, guardian_proxy, mitmproxy; from guardian_proxy import resources as r; "
            "print(json.dumps({'pkg': guardian_proxy.__file__, 'mitmproxy': mitmproxy.__file__, 'path': sys.path, "
            "'finders': [repr(f) for f in sys.meta_path], "
            "'dirs': [str(r.policies_dir()), str(r.factor_tables_dir()), str(r.models_dir())]}))")
    r = _run([bin_dir / "python", "-c", code], cwd=cwd)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    venv = bin_dir.parent.resolve()
    assert Path(got["pkg"]).resolve().is_relative_to(venv), got  # the wheel's copy, not the checkout's
    assert not Path(got["pkg"]).resolve().is_relative_to(ROOT)
    assert str(ROOT) not in got["path"] and not [f for f in got["finders"] if "editable" in f.lower()], got
    for d in got["dirs"]:
        assert Path(d).resolve().is_relative_to(venv) and Path(d).is_dir(), d
    assert not Path(got["mitmproxy"]).resolve().is_relative_to(venv)  # the dependencies are reused, not copied


def test_doctor_from_the_install_finds_policies_factor_tables_and_the_likelihood_model(installed):
    _, _, bin_dir, cwd = installed
    r = _run([bin_dir / "guardian-proxy", "doctor", "--json", "--state-dir", cwd.parent / "doctor-state"], cwd=cwd)
    checks = {c["name"]: c for c in json.loads(r.stdout)["checks"]}
    for name in ("policies", "factor tables", "likelihood"):
        assert checks[name]["state"] == "ok", checks[name]
    assert str(ROOT) not in json.dumps(checks["likelihood"])


def test_run_from_the_install_decides_and_logs_a_request(installed):
    _, _, bin_dir, cwd = installed
    state, confdir, out = cwd.parent / "state", cwd.parent / "mitmconf", cwd.parent / "proxy-output.txt"
    up = start_upstream()
    proc = subprocess.Popen([str(bin_dir / "guardian-proxy"), "run", "--port", "0", "--workers", "1", "--dashboard-port", "0",
                             "--state-dir", str(state), "--confdir", str(confdir),
                             "--redirect-upstream", f"127.0.0.1:{up.port}"],
                            cwd=cwd, env=_clean_env(), stdout=out.open("wb"), stderr=subprocess.STDOUT)
    try:
        text = _wait_for_banner(proc, out, 300)
        port = int(_LISTENING.search(text).group(1))
        body = {"ticket": {"text": "Please call John Smith back at john.smith@example.com", "priority": 2}}
        r = httpx.post("http://support.zendesk.com/api/tickets", proxy=f"http://127.0.0.1:{port}", json=body,
                       headers=APP, timeout=120)
    finally:
        stop_process(proc)
        up.close()
    assert r.status_code == 200, out.read_text(errors="replace")
    (got,) = up.received
    assert got.path == "/api/tickets" and json.loads(got.body)["ticket"]["priority"] == 2
    assert "john.smith@example.com" not in got.body.decode()
    lines = [json.loads(x) for x in (state / "decisions.jsonl").read_text().splitlines() if x.strip()]
    assert [(x["host"], x["action"]) for x in lines] == [("support.zendesk.com", "transform")]
    assert not list(cwd.iterdir())  # nothing written into the directory it was started from

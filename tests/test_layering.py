"""mitmproxy stays inside the guardian_proxy/mitm package: a ruff banned-api rule and a clean import of the pipeline."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_pipeline_import_does_not_load_mitmproxy():
    code = ("import sys; import guardian_proxy.pipeline, guardian_proxy.cli, guardian_proxy.testing; "
            "bad = [m for m in sys.modules if m.split('.')[0] == 'mitmproxy']; print(bad); assert not bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_ruff_bans_mitmproxy_outside_the_mitm_package(tmp_path):
    probe = ROOT / "guardian_proxy" / "_probe_banned.py"
    probe.write_text("import mitmproxy\n")
    try:
        r = subprocess.run([sys.executable, "-m", "ruff", "check", "--select", "TID251", str(probe)],
                           capture_output=True, text=True, cwd=ROOT)
    finally:
        probe.unlink()
    assert r.returncode != 0 and "TID251" in r.stdout
    ok = subprocess.run([sys.executable, "-m", "ruff", "check", "--select", "TID251", "guardian_proxy"],
                        capture_output=True, text=True, cwd=ROOT)
    assert ok.returncode == 0, ok.stdout


STAGES = ("extract", "policy", "likelihood", "anonymize", "session", "agents", "risk")


def test_stages_never_import_each_other():
    import ast

    bad = []
    for stage in STAGES:
        files = [ROOT / "guardian_proxy" / f"{stage}.py"] if stage == "risk" else \
            sorted((ROOT / "guardian_proxy" / stage).rglob("*.py"))
        for f in files:
            for node in ast.walk(ast.parse(f.read_text())):
                if isinstance(node, ast.ImportFrom):
                    mod = node.module or ""
                    if node.level == 0 and mod.startswith("guardian_proxy."):
                        mod, level = mod[len("guardian_proxy."):], 1
                    else:
                        level = node.level - (0 if stage == "risk" else 1)
                    target = mod.split(".")[0] if level >= 1 and mod else None
                    names = [a.name for a in node.names] if level >= 1 and not mod else []
                    for t in [target, *names]:
                        if t in STAGES and t != stage:
                            bad.append(f"{f.relative_to(ROOT)} imports {t}")
    assert not bad, bad

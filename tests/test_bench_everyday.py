"""The everyday-traffic benchmark (scripts/bench_everyday.py) holds its targets on its corpus: breakage ≤ 1 %,
leak ≤ 2 %, and no request without personal data altered; and its judge can fail."""

import importlib.util
from pathlib import Path

import pytest

from guardian_proxy.types import Action, Decision, Rewrite

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_everyday", ROOT / "scripts" / "bench_everyday.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_corpus_is_large_labelled_and_covers_the_flows():
    cases = bench._loader().load_all()
    assert len(cases) >= 300
    labels = {c["label"] for c in cases}
    assert labels == {"intended", "unintended", "no_personal"}
    flows = {c["flow"] for c in cases}
    assert {"sign_in", "sso", "webauthn", "checkout", "payment", "contact", "webmail", "messaging", "search",
            "upload", "account", "autocomplete", "maps", "analytics", "ad_pixel", "session_replay",
            "error_reporting", "cdp", "broker", "ai_service"} <= flows
    assert all(c["values"] for c in cases if c["label"] == "unintended")


def test_judge_counts_both_directions():
    case = next(c for c in bench._loader().load_all() if c["id"] == "signin-github-login-form")
    six = Action(domain="github.com", host="github.com")
    assert bench.judge(case, Decision(action="allow", six=six)) == "ok"
    assert bench.judge(case, Decision(action="deny", six=six)) == "breakage"
    assert bench.judge(case, Decision(action="transform", six=six, rewrite=Rewrite(body=b"login=x"))) == "breakage"
    leak = next(c for c in bench._loader().load_all() if c["label"] == "unintended" and c["raw"].body)
    assert bench.judge(leak, Decision(action="allow", six=six)) == "leak"
    assert bench.judge(leak, Decision(action="deny", six=six)) == "ok"


@pytest.mark.slow
def test_targets_hold(capsys):
    assert bench.main(["--quiet"]) == 0
    out = capsys.readouterr().out
    lines = {ln.split()[0]: ln for ln in out.splitlines() if ln.split() and ln.split()[0] in
             ("breakage", "leak", "needless")}

    def share(name):
        n, _, total = lines[name].split()[1:4]
        return int(n) / int(total)

    assert share("breakage") <= 0.01, out
    assert share("leak") <= 0.02, out
    assert share("needless") == 0, out

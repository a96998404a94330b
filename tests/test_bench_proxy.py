"""scripts/bench_proxy.py end to end on a tiny load, and its integrity check (scripts/bench_cases.py)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import bench_cases  # noqa: E402


def test_cases_are_deterministic_and_verify_themselves():
    for w in bench_cases.WORKLOADS:
        for i in range(30):
            a, b = bench_cases.case(w, i), bench_cases.case(w, i)
            assert a == b
            assert bench_cases.verify(a, a.method, a.target, {"content-type": dict(a.headers).get("content-type", "")},
                                      a.body) == ("identical", "")


def test_verify_catches_what_a_proxy_could_break():
    c = bench_cases.case("personal", 1)  # name + e-mail in JSON
    name, email = c.planted
    ok = c.body.replace(name.encode(), b"[PERSON_1]").replace(email.encode(), b"[EMAIL_1]")
    assert bench_cases.verify(c, "POST", c.target, {}, ok) == ("transformed", "")
    assert bench_cases.verify(c, "POST", c.target, {}, c.body.replace(email.encode(), b"[EMAIL_1]"))[0] == "bad"
    assert bench_cases.verify(c, "POST", c.target, {}, ok[:-1])[0] == "bad"  # invalid JSON
    assert bench_cases.verify(c, "POST", c.target, {"content-length": "3"}, ok)[0] == "bad"
    m = bench_cases.case("mixed", 9)  # multipart upload
    ctype = dict(m.headers)["content-type"]
    assert bench_cases.verify(m, "POST", m.target, {"content-type": ctype}, m.body[:-10])[0] == "bad"
    g = bench_cases.case("bodyless", 3)
    assert bench_cases.verify(g, "GET", g.target + "x", {}, b"")[0] == "bad"


@pytest.mark.slow
def test_quick_benchmark_runs_and_prints_the_json_line():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_proxy.py"), "--requests", "60", "--concurrency", "8",
                        "--workloads", "bodyless,personal", "--warmup", "10", "--latency-n", "5", "--no-hol"],
                       capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert set(out) == {"bare", "guardian", "ratio", "integrity_mismatches", "errors"}
    assert set(out["ratio"]) == {"bodyless_throughput", "mixed_throughput"}
    assert out["integrity_mismatches"] == 0 and out["errors"] == 0
    assert out["guardian"]["personal"]["outcomes"].get("denied", 0) > 0
    assert out["bare"]["personal"]["outcomes"] == {"allowed": 60}
    assert out["guardian"]["peak_rss_mb"] > 0 and "personal_post" in out["guardian"]["sequential_ms"]

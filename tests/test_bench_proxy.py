"""scripts/bench_proxy.py end to end on a tiny load, and its integrity check (scripts/bench_cases.py)."""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import bench_cases  # noqa: E402
import bench_proxy  # noqa: E402


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


def test_workers_axis_and_targets():
    assert bench_proxy.parse_workers("1,N,1,0") == list(dict.fromkeys([1, bench_proxy.cores(), 0]))  # order kept
    assert bench_proxy.parse_workers("2,2") == [2]
    with pytest.raises(argparse.ArgumentTypeError):
        bench_proxy.parse_workers("-1")
    ratio = {"guardian-w2": {"personal_throughput": 0.61, "mixed_throughput": 0.74, "bodyless_throughput": 0.9}}
    guards = {"guardian-w2": {"head_of_line": {"personal_p99_during_ms": 100.0}}}
    verdict, got = bench_proxy.targets_for("guardian-w2", ratio, guards, {"guardian-w2": 2})
    assert verdict == {"personal_ratio>=0.60": True, "mixed_ratio>=0.75": False, "hol_personal_p99<=100ms": True}
    assert got == {"kind": "guardian-w2", "workers": 2, "personal_ratio": 0.61, "mixed_ratio": 0.74,
                   "hol_personal_p99_ms": 100.0}
    verdict, _ = bench_proxy.targets_for("guardian-w2", {}, {"guardian-w2": {}}, {"guardian-w2": 2})
    assert set(verdict.values()) == {None}  # not measured: no verdict either way
    # proxy-bound: bare 2 ms/req on one core; guardian's mitmproxy process 1 ms, the tree 6 ms on min(cores, 3)
    par = min(bench_proxy.cores(), 3)
    g = {"cpu_ms_per_req": 6.0, "cpu_ms_per_req_by_role": {"main": 1.0, "workers": 5.0}}
    assert bench_proxy.proxy_bound({"cpu_ms_per_req": 2.0}, g, 2) == round(2.0 * min(1.0, par / 6.0), 3)
    assert bench_proxy.proxy_bound({"cpu_ms_per_req": 2.0}, {"cpu_ms_per_req": 4.0}, 0) == 0.5


def test_proxy_bound_is_read_round_by_round():
    """Each round's bare CPU against the same round's guardian CPU; the median of the rounds, with min and max; a
    kind against its baseline round by round, where bare's CPU cancels."""
    bare = {"cpu_ms_per_req": 3.0, "rounds": [bench_proxy.per_request(100, {"main": 0.2}),
                                              bench_proxy.per_request(100, {"main": 0.4}),
                                              bench_proxy.per_request(0, {})]}  # a round with nothing done
    g = {"cpu_ms_per_req": 6.0, "cpu_ms_per_req_by_role": {"main": 4.0, "workers": 2.0},
         "rounds": [bench_proxy.per_request(100, {"main": 0.4, "workers": 0.1}),
                    bench_proxy.per_request(100, {"main": 0.5, "workers": 0.3}),
                    bench_proxy.per_request(50, {"main": 0.2})]}
    assert bare["rounds"][0] == {"requests": 100, "cpu_ms_per_req": 2.0, "cpu_ms_per_req_by_role": {"main": 2.0}}
    b = bench_proxy.bound_rounds(bare, g, 0)  # threads: one core, the whole tree
    assert b["rounds"] == [0.4, 0.5, None] and (b["median"], b["min"], b["max"], b["n"]) == (0.45, 0.4, 0.5, 2)
    assert b["pooled"] == 0.5  # 3.0 / 6.0
    base = {"median": 0.5, "rounds": [0.5, 0.4, 0.3]}
    vs = bench_proxy.versus(b, base)
    assert vs["rounds"] == [0.8, 1.25, None] and vs["median"] == round((0.8 + 1.25) / 2, 3) and vs["n"] == 2
    assert bench_proxy.versus(b, None) is None and bench_proxy.spread([None]) is None


def test_the_client_keeps_connections_per_host_unless_told():
    shared = bench_proxy.client_limits(50, True)
    assert (shared.max_connections, shared.max_keepalive_connections) == (50, 50)
    own = bench_proxy.client_limits(50, False)  # no total: a connection is never closed to open one to another host
    assert (own.max_connections, own.max_keepalive_connections, own.keepalive_expiry) == (None, None, None)


def test_baseline_kinds_run_beside_this_checkouts():
    """--baseline DIR: each guardian kind again from DIR's code, named KIND@base, with the same worker count."""
    args = argparse.Namespace(workers=[1, 2], baseline=Path("/tmp/base"))
    assert bench_proxy.kinds_of(args) == {"guardian-w1": 1, "guardian-w1@base": 1, "guardian-w2": 2,
                                          "guardian-w2@base": 2}
    assert bench_proxy.kinds_of(argparse.Namespace(workers=[1], baseline=None)) == {"guardian-w1": 1}


@pytest.mark.slow
def test_proc_reads_the_whole_process_tree(tmp_path):
    """CPU and RSS of a process with two spawned children count the children (as guardian's workers)."""
    script = tmp_path / "tree.py"
    script.write_text("import multiprocessing as mp, sys, time\n"
                      "from multiprocessing.connection import wait\n"
                      "def f():\n    x = bytearray(40_000_000)\n"
                      # half a second of the child's own CPU, however busy the machine (not of wall-clock time),
                      # then it says so and lives as long as its parent (no pause for a loaded machine to outlast)
                      "    while time.process_time() < 0.5: pass\n    print('ready', flush=True)\n"
                      "    wait([mp.parent_process().sentinel])\n"
                      "if __name__ == '__main__':\n    ctx = mp.get_context('spawn')\n"
                      "    ps = [ctx.Process(target=f) for _ in range(2)]\n    [p.start() for p in ps]\n"
                      "    print('started', flush=True)\n    [p.join() for p in ps]\n")
    out = tmp_path / "tree.out"
    proc = bench_proxy.Proc([sys.executable, str(script)], out)
    try:
        while out.read_text().count("ready") < 2:  # both children said so: an event, not a deadline
            assert proc.p.poll() is None, out.read_text()
            time.sleep(0.05)
        by = proc.rss_by_process()
        assert "worker-2" in by and min(by["worker-1"], by["worker-2"]) > 40, by
        assert proc.cpu_by_role()["workers"] > 0.8
        names = [n for n, _ in proc.processes()]
        assert names[:3] == ["main", "worker-1", "worker-2"], names
        assert proc.rss_mb() >= sum(by.values()) * 0.9 and proc.rss_mb() > 80
        assert proc.peak_mb() >= proc.rss_mb() * 0.9
        assert proc.cpu_s() >= proc.cpu_by_role()["workers"] > 0.8
        assert proc.pss_mb() > 0
    finally:
        proc.stop()


@pytest.mark.slow
def test_quick_benchmark_runs_and_prints_the_json_line():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_proxy.py"), "--requests", "60", "--concurrency", "8",
                        "--workloads", "bodyless,personal", "--warmup", "10", "--latency-n", "5", "--no-hol",
                        "--workers", "0,1"],
                       capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert set(out) == {"bare", "guardian", "workers", "ratio", "targets", "targets_measured",
                        "integrity_mismatches", "errors"}
    assert out["integrity_mismatches"] == 0 and out["errors"] == 0
    assert out["workers"] == {"guardian-w0": 0, "guardian-w1": 1} and set(out["guardian"]) == set(out["workers"])
    assert out["bare"]["personal"]["outcomes"] == {"allowed": 60}
    for kind, g in out["guardian"].items():
        ratio = out["ratio"][kind]
        assert set(ratio) == {"bodyless_throughput", "personal_throughput", "mixed_throughput"}
        assert ratio["bodyless_throughput"] > 0 and ratio["personal_throughput"] > 0 and ratio["mixed_throughput"] is None
        assert g["personal"]["outcomes"].get("denied", 0) > 0
        assert g["peak_rss_mb"] > 0 and "personal_post" in g["sequential_ms"]
        assert g["rss_mb_end"] == round(sum(g["rss_mb_by_process"]["end"].values()), 1)
    threads, procs = out["guardian"]["guardian-w0"], out["guardian"]["guardian-w1"]
    assert "worker-1" not in threads["rss_mb_by_process"]["start"]
    assert {"main", "worker-1"} <= set(procs["rss_mb_by_process"]["start"]) and procs["processes"] >= 2
    assert procs["personal"]["cpu_ms_per_req_by_role"]["workers"] > 0  # the workers' CPU is counted
    assert set(out["targets"]) == {"personal_ratio>=0.60", "mixed_ratio>=0.75", "hol_personal_p99<=100ms"}
    assert isinstance(out["targets"]["personal_ratio>=0.60"], bool)
    assert out["targets"]["mixed_ratio>=0.75"] is None and out["targets"]["hol_personal_p99<=100ms"] is None
    assert out["targets_measured"]["kind"] == "guardian-w1"
    for g in out["guardian"].values():  # the proxy-bound ratio of each round, from the rounds' CPU
        pb = g["proxy_bound"]["personal"]
        assert len(pb["rounds"]) == len(g["personal"]["rounds"]) == len(out["bare"]["personal"]["rounds"]) == 5
        assert pb["min"] <= g["proxy_bound_ratio"]["personal"] == pb["median"] <= pb["max"] and pb["pooled"] > 0
        assert sum(r["requests"] for r in g["personal"]["rounds"]) == g["personal"]["requests"] == 60
    assert "| personal | guardian-w1 |" in r.stdout and "targets (guardian-w1)" in r.stdout

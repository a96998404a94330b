"""Under load: one slow request does not stall the others (head-of-line), and --redirect-upstream keeps
upstream keep-alive connections working (HTTP and HTTPS, Host header and TLS SNI preserved)."""

import ssl
import statistics
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.support.proxy_process import start_proxy
from tests.support.upstream import start_upstream

pytestmark = pytest.mark.slow
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import bench_cases  # noqa: E402


def test_keepalive_through_redirect_http_and_https(tmp_path):
    up = start_upstream(tls_dir=tmp_path, names=["www.example.org", "cdn.example.net"])
    sni: list[str] = []
    up.server.socket.context.sni_callback = lambda sock, name, ctx: sni.append(name)
    px = start_proxy(tmp_path, up.port)
    try:
        with httpx.Client(proxy=px.url, timeout=10, verify=ssl.create_default_context(cafile=str(px.ca))) as c:
            for i in range(12):  # one tunnel, one client connection: the sixth request used to stall
                assert c.get(f"https://www.example.org/k{i}").status_code == 200
        assert [r.path for r in up.received] == [f"/k{i}" for i in range(12)]
        assert {r.headers["host"] for r in up.received} == {"www.example.org"}
        assert sni and set(sni) == {"www.example.org"}  # the upstream saw the real name, not the redirect address
    finally:
        px.stop()
        up.close()
    plain = start_upstream()
    (tmp_path / "p").mkdir()
    px = start_proxy(tmp_path / "p", plain.port)
    try:
        with httpx.Client(proxy=px.url, timeout=10) as c:
            for i in range(12):
                host = ("www.example.org", "cdn.example.net", "static.example.com")[i % 3]
                assert c.get(f"http://{host}/k{i}").status_code == 200
        assert [r.headers["host"] for r in plain.received] == \
            [("www.example.org", "cdn.example.net", "static.example.com")[i % 3] for i in range(12)]
    finally:
        px.stop()
        plain.close()


def test_slow_requests_do_not_stall_the_others(tmp_path):
    """Two ~90 KB free-text POSTs take seconds each (NER + rewrite); bodyless GETs are decided on the event loop
    and small POSTs by the worker large bodies never take (guardian_proxy/workers.py), so neither waits for them."""
    up = start_upstream()
    px = start_proxy(tmp_path, up.port, extra=["--workers", "2"])
    box: dict = {"status": [], "s": []}

    def fire(slow):
        t = time.perf_counter()
        with httpx.Client(proxy=px.url, timeout=300) as c:
            box["status"].append(c.post(slow.url, headers=slow.headers, content=slow.body).status_code)
        box["s"].append(time.perf_counter() - t)

    def probe(c, case) -> float:
        t = time.perf_counter()
        r = c.request(case.method, case.url, headers=case.headers, content=case.body or None)
        assert r.status_code in (200, 403)
        return time.perf_counter() - t

    try:
        with httpx.Client(proxy=px.url, timeout=60) as c:
            idle = [probe(c, bench_cases.case("personal", 3 * k + 1)) for k in range(5)]
            threads = [threading.Thread(target=fire, args=(bench_cases.case("slow", j),))
                       for j in range(2)]
            for th in threads:
                th.start()
            time.sleep(0.5)
            gets, posts = [], []
            k = 100
            while any(th.is_alive() for th in threads) and len(posts) < 15:
                k += 1
                gets.append(probe(c, bench_cases.case("bodyless", k)))
                posts.append(probe(c, bench_cases.case("personal", 3 * k + 1)))
            for th in threads:
                th.join()
    finally:
        px.stop()
        up.close()
    assert set(box["status"]) == {200}
    if min(box["s"]) < 2:
        pytest.skip(f"the slow requests took only {min(box['s']):.2f}s: nothing to measure")
    assert gets and max(gets) < 2.0, gets  # never waited for a slow request
    assert statistics.median(posts) < max(1.0, 5 * statistics.median(idle)), (posts, idle)

"""Hostile upstreams (docs/security.md#hostile-upstreams-and-clients): a real `guardian-proxy run` redirected
to a local upstream that answers huge, slow, compressed-bomb and oversized chat bodies
(tests/support/hostile.py), driven by real HTTP clients.

Rules checked: every response no stage reads streams as it arrives (first byte before the body is complete,
RSS flat however large); a response a stage reads is held only up to `limits.max_inspected_response_bytes`
and past it passes on uninspected with one log line; decompressing a chat answer is bounded (a gzip bomb
passes as received, a bomb in a stream ends the stream) and never stalls other requests."""

from __future__ import annotations

import http.client
import json
import os
import threading
import time
import zlib

import pytest

from guardian_proxy.response_bodies import Held, Tee
from guardian_proxy.session.demask import Demasker
from guardian_proxy.session.stream import StreamDemasker, _Decoder
from tests.support.hostile import (
    HostileUpstream,
    RssSampler,
    gzip_stream,
    json_bomb,
    proxy_args,
    sse_bomb,
    write_config,
)
from tests.support.proxy_process import start_proxy

slow = pytest.mark.slow  # the end-to-end tests (a real proxy process); the unit tests below are fast

BOUND = 256 * 1024
EMAIL = "quentin.zarkowsky@gmail.com"
CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": f"Hi, I'm Quentin Zarkowsky ({EMAIL}). Plan a trip."}]}
BIG = int(os.environ.get("HOSTILE_BIG_BYTES", 2 * 1024 ** 3))


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile-resp")
    up = HostileUpstream()
    px = start_proxy(d, up.port, extra=proxy_args(write_config(d, max_inspected_response_bytes=BOUND)))
    yield up, px
    px.stop()
    up.close()


def get(px, url: str, method: str = "GET", body: bytes | None = None, headers: dict | None = None,
        timeout: float = 60) -> http.client.HTTPResponse:
    c = http.client.HTTPConnection("127.0.0.1", px.port, timeout=timeout)
    c.request(method, url, body=body, headers=headers or {})
    return c.getresponse()


def chat(px, answer: str, timeout: float = 60) -> http.client.HTTPResponse:
    return get(px, "http://api.openai.com/v1/chat/completions", "POST", json.dumps(CHAT).encode(),
               {"content-type": "application/json", "authorization": "Bearer sk-test", "x-answer": answer}, timeout)


def quick_get(px) -> float:
    t = time.perf_counter()
    r = get(px, "http://www.example.org/small", timeout=30)
    assert r.status == 200 and r.read() == b'{"ok": true}'
    return time.perf_counter() - t


@slow
def test_first_byte_of_a_slow_body_with_a_length_arrives_before_the_body_is_complete(env):
    up, px = env
    up.gate.clear()
    t = time.perf_counter()
    r = get(px, "http://files.example.org/slow?n=50000000")
    first = r.read(1)
    waited = time.perf_counter() - t
    up.gate.set()  # only now does the upstream send the other 49.9 MB
    rest = len(first) + sum(len(b) for b in iter(lambda: r.read(1 << 20), b""))
    assert r.status == 200 and rest == 50_000_000
    assert waited < 4.0, f"first byte after {waited:.1f}s: the body was buffered"
    assert up.held_until_gate[-1], "the upstream had to time out: the client got nothing while it held the body"


@slow
def test_a_policy_page_streams_and_is_still_learned(env):
    up, px = env
    up.gate.clear()
    t = time.perf_counter()
    r = get(px, "http://www.news-site.com/legal/privacy-policy?n=200000")
    first = r.read(64)
    waited = time.perf_counter() - t
    up.gate.set()
    body = first + r.read()
    assert r.status == 200 and len(body) == 200_000 and b"Privacy Policy" in body
    assert waited < 4.0 and up.held_until_gate[-1]
    learned = px.state_dir / "policies" / "learned.jsonl"
    for _ in range(100):
        if learned.exists() and "news-site.com" in learned.read_text():
            break
        time.sleep(0.1)
    assert "news-site.com" in learned.read_text()


@slow
def test_rss_stays_flat_while_a_huge_body_streams_through(env):
    up, px = env
    r = get(px, f"http://files.example.org/big?n={BIG}", timeout=120)
    n = 0
    t = time.perf_counter()
    with RssSampler(px.proc.pid) as rss:
        buf = bytearray(1 << 20)
        while True:
            k = r.readinto(buf)
            if not k:
                break
            n += k
    secs = time.perf_counter() - t
    assert n == BIG
    print(f"{BIG / 2**20:.0f} MiB in {secs:.1f}s ({BIG / 2**20 / secs:.0f} MiB/s), RSS growth {rss.growth / 2**20:.0f} MiB")
    assert rss.growth < 200 * 2**20, f"RSS grew by {rss.growth / 2**20:.0f} MiB"


@slow
def test_a_chat_answer_without_a_length_is_demasked_within_the_bound(env):
    up, px = env
    r = chat(px, "json")
    body = r.read()
    assert r.status == 200
    assert EMAIL not in json.dumps(up.chats[-1])  # pseudonymised on the way out
    assert EMAIL in json.loads(body)["choices"][0]["message"]["content"]  # and back to the real value


@slow
@pytest.mark.parametrize("answer", ["big-json", "big-chunked"])
def test_a_chat_answer_over_the_bound_passes_uninspected_with_one_log_line(env, answer):
    up, px = env
    before = px.output.read_text(errors="replace").count("without de-masking")
    t = time.perf_counter()
    r = chat(px, answer)
    body = r.read()
    assert r.status == 200 and time.perf_counter() - t < 20
    sent = json.dumps(up.chats[-1])
    assert EMAIL not in sent
    text = json.loads(body)["choices"][0]["message"]["content"]
    assert EMAIL not in text  # not de-masked: the surrogate the upstream saw comes back as it was
    out = px.output.read_text(errors="replace")
    assert out.count("without de-masking") == before + 1
    assert EMAIL not in out and "Zarkowsky" not in out


@slow
def test_a_gzip_bomb_chat_answer_passes_as_received_and_never_stalls_other_requests(env):
    up, px = env
    slow: list[float] = []
    done = threading.Event()

    def others():
        while not done.is_set():
            slow.append(quick_get(px))
            time.sleep(0.05)

    bomb = json_bomb(up.bomb_bytes)
    with RssSampler(px.proc.pid) as rss:
        th = threading.Thread(target=others, daemon=True)
        th.start()
        r = chat(px, "bomb")
        got = r.read()
        time.sleep(0.5)
        done.set()
        th.join(30)
    assert r.status == 200 and r.getheader("content-encoding") == "gzip"
    assert got == bomb  # exactly what the upstream sent: compressed, untouched
    assert rss.growth < 150 * 2**20, f"RSS grew by {rss.growth / 2**20:.0f} MiB for a {len(bomb)}-byte bomb"
    assert slow and max(slow) < 2.0, f"an unrelated GET took {max(slow):.1f}s"


@slow
def test_a_gzip_bomb_in_a_chat_stream_ends_the_stream(env):
    up, px = env
    with RssSampler(px.proc.pid) as rss:
        r = chat(px, "bomb-sse")
        n, first = 0, b""
        for block in iter(lambda: r.read(1 << 20), b""):
            first = first or block
            n += len(block)
    assert r.status == 200 and b"Hi" in first  # the stream began as the upstream sent it
    assert n < 32 * 2**20, f"{n / 2**20:.0f} MiB decoded out of a {up.bomb_bytes >> 20} MiB bomb"
    assert rss.growth < 150 * 2**20, f"RSS grew by {rss.growth / 2**20:.0f} MiB"
    assert quick_get(px) < 2.0


# ------------------------------------------------------------------ unit: the bounded stream decoder, Held, Tee

MB = 1 << 20


def _compress(coding: str, parts: list[bytes]) -> bytes:
    import brotli
    import zstandard

    raw = b"".join(parts)
    if coding == "gzip":
        return gzip_stream(parts)
    if coding == "deflate":
        return zlib.compress(raw, 9)
    if coding == "br":
        return brotli.compress(raw)
    return zstandard.ZstdCompressor(level=19).compress(raw)


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd"])
def test_stream_decoding_stops_at_the_bound(coding):
    bomb = _compress(coding, [b"A" * MB] * 64)
    d = _Decoder(coding, limit=2 * MB, total=8 * MB)
    out = d.feed(bomb)
    assert d.over and len(out) == 2 * MB and set(out) == {ord("A")}
    assert d.feed(b"more") == b""
    ok = _Decoder(coding, limit=2 * MB, total=8 * MB)  # a real stream, chunk by chunk, decodes whole
    text = b"".join(b"data: {\"n\": %d}\n\n" % i for i in range(20000))
    wire = _compress(coding, [text])
    assert b"".join(ok.feed(wire[i:i + 1000]) for i in range(0, len(wire), 1000)) == text and not ok.over


def test_stream_decoding_bounds_the_whole_stream():
    wire = gzip_stream([b"B" * MB] * 10, level=1)
    d = _Decoder("gzip", limit=2 * MB, total=4 * MB)
    got = b"".join(d.feed(wire[i:i + 1024]) for i in range(0, len(wire), 1024))
    assert d.over and len(got) == 4 * MB


def test_a_bomb_in_a_demasked_stream_ends_it_after_its_last_whole_event():
    sd = StreamDemasker("openai_chat", Demasker([("Alex Smith", "John Doe", True)]), coding="gzip")
    wire = sse_bomb(64 * MB)
    out = b"".join(sd(wire[i:i + 16384]) for i in range(0, len(wire), 16384)) + sd(b"")
    assert out.startswith(b'data: {"id":"c"') and b'"content":"Hi"' in out
    assert len(out) <= 8 * MB + 1024 and sd.dead


def test_held_releases_past_its_bound_and_finishes_within_it():
    overs = []
    h = Held(10, lambda body: body.upper(), lambda: overs.append(1))
    assert h(b"abc") == [] and h(b"def") == [] and h(b"") == [b"ABCDEF"] and not overs
    h = Held(10, lambda body: body.upper(), lambda: overs.append(1))
    assert h(b"abcdef") == [] and h(b"ghijkl") == [b"abcdefghijkl"] and h(b"mn") == [b"mn"] and h(b"") == []
    assert overs == [1]
    h = Held(10, lambda body: 1 / 0, lambda: None)  # a failing reader: the body as received
    assert h(b"xy") == [] and h(b"") == [b"xy"]


def test_tee_passes_every_chunk_at_once_and_copies_within_its_bound():
    got, overs = [], []
    t = Tee(10, got.append, lambda: overs.append(1))
    assert t(b"abc") == [b"abc"] and t(b"def") == [b"def"] and t(b"") == [] and got == [b"abcdef"]
    t = Tee(4, got.append, lambda: overs.append(1))
    assert t(b"abc") == [b"abc"] and t(b"def") == [b"def"] and t(b"") == [] and len(got) == 1 and overs == [1]

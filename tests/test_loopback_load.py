"""1,000 concurrent honest connections from loopback (R-CONNECTION-CAPS): every one is answered,
none is lost, and a plain GET succeeds while all of them are in flight; the slowloris defence (a request head
within the header timeout) still holds for loopback without a count per address (tests/test_hostile_clients.py).

Every local program connects from 127.0.0.1: a busy machine or an agent fleet is not a slowloris. The upstream
holds every answer until all 1,000 requests have reached it, so the 1,000 are in flight at once through the proxy.
Judged by answers received, never by elapsed time: a wait fails only when nothing has moved for STALL_S (a
generous bound for a busy 2-core machine), each wait ends on an event."""

from __future__ import annotations

import asyncio
import resource
import threading

import httpx
import pytest

from tests.support.hostile import proxy_args, write_config
from tests.support.proxy_process import start_proxy

pytestmark = pytest.mark.slow

N = 1000
STALL_S = 90.0  # no progress at all for this long: something is lost


def _raise_open_files(need: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            pytest.skip(f"the open-file limit ({hard}) is under the {need} this test needs")
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


class GatedUpstream:
    """An asyncio HTTP/1.1 server on its own thread and loop (a listen backlog of 4096): /held/<i> is answered
    only once `expect` of them have arrived (or `release()`), /now at once. Every answer closes its connection."""

    def __init__(self, expect: int):
        self.expect, self.arrived, self.answered = expect, 0, 0
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.progress = threading.Event()  # set on every arrival
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self.ready.wait(30)

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.gate = asyncio.Event()

        async def start():
            self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=4096)
            self.port = self.server.sockets[0].getsockname()[1]
            self.ready.set()

        self.loop.run_until_complete(start())
        self.loop.run_forever()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            path = head.split(b" ", 2)[1].decode()
            if path.startswith("/held/"):
                self.arrived += 1
                self.progress.set()
                if self.arrived >= self.expect:
                    self.gate.set()
                await self.gate.wait()
            body = path.encode()
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: %d\r\n"
                         b"connection: close\r\n\r\n%s" % (len(body), body))
            await writer.drain()
            self.answered += 1
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    def release(self):
        self.loop.call_soon_threadsafe(self.gate.set)

    async def _shutdown(self):
        self.gate.set()
        self.server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def close(self):
        asyncio.run_coroutine_threadsafe(self._shutdown(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


async def _one(port: int, i: int, done: asyncio.Queue) -> tuple[int, str]:
    """One honest client: connect, send a whole request at once, read the whole answer."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET http://app{i % 7}.example.org/held/{i} HTTP/1.1\r\nHost: app{i % 7}.example.org\r\n"
                     f"Accept: */*\r\n\r\n".encode())
        await writer.drain()
        answer = await reader.read()  # until the proxy closes after the answer (the upstream said close)
        writer.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0
        result = (status, body.decode(errors="replace"))
    except (ConnectionError, OSError, asyncio.IncompleteReadError) as e:
        result = (-1, type(e).__name__)
    await done.put(i)
    return result


async def _wait_progress(count, target: int, what: str, counts_of=None) -> None:
    """Wait until `count()` reaches `target`; fail only when it has not moved for STALL_S."""
    last, still = count(), 0.0
    while count() < target:
        await asyncio.sleep(0.2)
        now = count()
        still = 0.0 if now != last else still + 0.2
        last = now
        assert still < STALL_S, f"{what}: {now} of {target} after {STALL_S:.0f}s without progress"


def test_a_thousand_concurrent_loopback_connections_are_all_answered(tmp_path):
    _raise_open_files(3 * N + 512)
    up = GatedUpstream(expect=N + 1)  # never opens by itself: release() after the plain GET, so none can finish early
    # the defaults for connections (a per-client cap used to refuse or replace honest loopback clients)
    px = start_proxy(tmp_path, up.port, extra=proxy_args(write_config(tmp_path)))
    try:
        async def main():
            done: asyncio.Queue = asyncio.Queue()
            tasks = [asyncio.create_task(_one(px.port, i, done)) for i in range(N)]
            # every request reaches the upstream while all are held open: the 1,000 are in flight at once
            await _wait_progress(lambda: up.arrived + done.qsize(), N, "requests reaching the upstream")
            finished_early = done.qsize()
            # a plain GET meanwhile, from another program on this machine
            try:
                async with httpx.AsyncClient(proxy=px.url, timeout=STALL_S, trust_env=False) as c:
                    r = await c.get("http://www.example.org/now")
                plain = (r.status_code, r.text)
            except httpx.HTTPError as e:
                plain = (-1, type(e).__name__)
            up.release()
            await _wait_progress(done.qsize, N, "answers received")
            return finished_early, plain, await asyncio.gather(*tasks)

        finished_early, plain, results = asyncio.run(main())
    finally:
        px.stop()
        up.close()
    lost = {i: r for i, r in enumerate(results) if r != (200, f"/held/{i}")}
    why: dict = {}
    for r in lost.values():
        why[r[1] if r[0] == -1 else r[0]] = why.get(r[1] if r[0] == -1 else r[0], 0) + 1
    assert not lost, f"{len(lost)} of {N} got no right answer ({why}); {finished_early} ended before the " \
        f"upstream had all {N}; the plain GET meanwhile: {plain}"
    assert plain == (200, "/now") and finished_early == 0 and up.arrived == N

"""procinfo's batched lookups (guardian_proxy/procinfo.py `ProcessFinder.lookup_many`, `AppLookup`): the sockets of
connections opened together are found in one walk of /proc, each answer is the one a lookup of its own gives, and
the addon's thread takes whatever queued while it was busy as one batch."""

import asyncio
import os
import sys
import threading
from types import SimpleNamespace

import pytest

from guardian_proxy import procinfo
from guardian_proxy.procinfo import App, AppLookup, ProcessFinder

LE = sys.byteorder == "little"

# /proc/net/tcp: three client sockets of one program (ports 50000-50002, inodes 4242-4244), one of another program
# (port 50003, inode 5000), one whose program closed it (TIME_WAIT, port 50004) and one nobody holds (port 50005)
ROW = "   {n}: 0100007F:{port:04X} 0100007F:1F90 {st} 00000000:00000000 00:00000000 00000000  {uid}        0 {ino} 1\n"
SOCKETS = [(50000, 4242, "01"), (50001, 4243, "01"), (50002, 4244, "01"), (50003, 5000, "01"), (50004, 0, "06"),
           (50005, 6000, "01")]


def _proc(tmp_path, uid):
    proc = tmp_path / "proc"
    (proc / "net").mkdir(parents=True)
    head = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    (proc / "net" / "tcp").write_text(head + "".join(ROW.format(n=i, port=p, st=st, uid=uid, ino=ino)
                                                     for i, (p, ino, st) in enumerate(SOCKETS)))
    (proc / "net" / "tcp6").write_text(head)
    for pid, inodes, exe, argv in [(977, [4242, 4243, 4244], "/usr/bin/curl", ["curl", "http://x.example/"]),
                                   (978, [5000], "/usr/bin/python3.11", ["python3", "agent.py", "--key", "s3cret"]),
                                   (979, [], "/usr/bin/bash", ["bash"])]:
        d = proc / str(pid)
        (d / "fd").mkdir(parents=True)
        os.symlink("/dev/null", d / "fd" / "0")
        for i, ino in enumerate(inodes):
            os.symlink(f"socket:[{ino}]", d / "fd" / str(i + 3))
        os.symlink(exe, d / "exe")
        (d / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
        (d / "comm").write_text(os.path.basename(exe) + "\n")
    return proc


def _count_fd_reads(monkeypatch) -> list[str]:
    seen: list[str] = []
    real = os.readlink

    def readlink(path, *a, **k):
        if k.get("dir_fd") is not None or f"{os.sep}fd{os.sep}" in str(path):  # a descriptor of a process's table
            seen.append(str(path))
        return real(path, *a, **k)

    monkeypatch.setattr(procinfo.os, "readlink", readlink)
    return seen


@pytest.mark.skipif(not LE, reason="fixture text is little-endian")
def test_a_batch_answers_as_lookups_one_by_one(tmp_path):
    proc = str(_proc(tmp_path, os.geteuid()))
    clients = [("127.0.0.1", p, None) for p, _, _ in SOCKETS] + [("192.0.2.7", 50000, None), (None, None, None)]
    one_by_one = [ProcessFinder(proc=proc).lookup(*c) for c in clients]
    batch = ProcessFinder(proc=proc).lookup_many(clients)
    assert batch == one_by_one
    assert [a.pid for a in batch[:4]] == [977, 977, 977, 978]
    assert batch[4] == App("unknown", why="gone") and batch[5] == App("unknown", why="not-found")
    assert batch[6] == procinfo.REMOTE and batch[7] == App("unknown", why="error")
    assert "s3cret" not in repr(batch)


@pytest.mark.skipif(not LE, reason="fixture text is little-endian")
def test_a_burst_of_one_programs_connections_reads_its_fd_table_once(tmp_path, monkeypatch):
    proc = str(_proc(tmp_path, os.geteuid()))
    burst = [("127.0.0.1", p, None) for p in (50000, 50001, 50002)]
    f = ProcessFinder(proc=proc)
    assert f.lookup(*burst[0]).pid == 977  # the program is remembered: tried first from now on
    reads = _count_fd_reads(monkeypatch)
    for c in burst:
        f.lookup(*c)
    alone = len(reads)
    reads.clear()
    assert [a.pid for a in f.lookup_many(burst)] == [977] * 3
    assert len(reads) == 4 < alone  # fd 0 and the three sockets, once (one by one: 2 + 3 + 4 reads)
    assert f.lookups == 7


@pytest.mark.skipif(not LE, reason="fixture text is little-endian")
def test_a_batch_over_two_programs_remembers_both(tmp_path):
    """Remembering an owner while the walk goes on (the other socket's owner still to be found) is safe."""
    f = ProcessFinder(proc=str(_proc(tmp_path, os.geteuid())))
    f.lookup("127.0.0.1", 50003)  # 978 remembered
    got = f.lookup_many([("127.0.0.1", 50003, None), ("127.0.0.1", 50000, None)])
    assert [a.pid for a in got] == [978, 977]
    assert list(f.recent) == [978, 977]


@pytest.mark.skipif(not LE, reason="fixture text is little-endian")
def test_a_batch_keeps_the_walks_bounds_and_permissions(tmp_path):
    proc = str(_proc(tmp_path, os.geteuid()))
    clients = [("127.0.0.1", 50000, None), ("127.0.0.1", 50003, None)]
    bounded = ProcessFinder(proc=proc, max_pids=1).lookup_many(clients)  # newest first: 979, then the limit
    assert bounded == [App("unknown", why="scan-limit")] * 2
    other = ProcessFinder(proc=proc)
    other.euid = os.geteuid() + 1 if os.geteuid() else 1000  # not root, not the sockets' owner
    assert other.lookup_many(clients) == [App("unknown", why="no-permission")] * 2


def test_the_addon_takes_what_queued_meanwhile_as_one_batch():
    """While the lookup thread is busy, the connections that open wait in one queue and are looked up together."""
    release = threading.Event()
    started = threading.Event()

    class Finder:
        def __init__(self):
            self.batches: list[list] = []

        def lookup_many(self, clients):
            self.batches.append([c[1] for c in clients])
            started.set()
            release.wait(10)
            return [App("curl", pid=7, exe="/usr/bin/curl", kind="tool") for _ in clients]

    async def main():
        finder = Finder()
        look = AppLookup(finder=finder, wait_s=30)
        clients = [SimpleNamespace(id=f"c{i}", peername=("127.0.0.1", 50000 + i), sockname=None) for i in range(4)]
        look.client_connected(clients[0])
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 10)  # the thread holds the first
        for c in clients[1:]:
            look.client_connected(c)
        release.set()
        apps = [await look.app_of(c) for c in clients]
        look.done()
        return finder.batches, apps

    batches, apps = asyncio.run(main())
    assert batches == [[50000], [50001, 50002, 50003]]
    assert all(a["name"] == "curl" for a in apps)


def test_the_addon_still_takes_a_finder_with_lookup_only():
    class Finder:
        lookups = 0

        def lookup(self, addr, port, sockname=None):
            self.lookups += 1
            return App("wget", pid=9, exe="/usr/bin/wget", kind="tool")

    async def main():
        look = AppLookup(finder=Finder())
        got = await look.app_of(SimpleNamespace(id="c1", peername=("127.0.0.1", 50000), sockname=None))
        look.done()
        return got

    assert asyncio.run(main())["name"] == "wget"


def _reopen(proc, pid: int, fd: int, target: str, port: int | None = None, inode: int | None = None) -> None:
    """In the fixture: `pid`'s descriptor `fd` now links to `target`; a new client socket (port, inode) listed."""
    link = proc / str(pid) / "fd" / str(fd)
    link.unlink()
    os.symlink(target, link)
    if port is not None:
        with (proc / "net" / "tcp").open("a") as f:
            f.write(ROW.format(n=99, port=port, st="01", uid=os.geteuid(), ino=inode))


@pytest.mark.skipif(not LE, reason="fixture text is little-endian")
def test_a_socket_at_a_descriptor_freed_by_a_closed_connection_is_found_without_a_walk(tmp_path, monkeypatch):
    """A program that closes a connection and opens the next gets the freed descriptor: it is read first, alone."""
    proc = _proc(tmp_path, os.geteuid())
    f = ProcessFinder(proc=str(proc))
    assert f.lookup("127.0.0.1", 50000).pid == 977  # socket 4242 at 977's descriptor 3
    f.closed("127.0.0.1", 50000)
    _reopen(proc, 977, 3, "socket:[4250]", port=50006, inode=4250)
    reads = _count_fd_reads(monkeypatch)
    got = f.lookup("127.0.0.1", 50006)
    assert (got.pid, got.name) == (977, "curl") and f.hinted == 1
    assert reads == [str(proc / "977" / "fd" / "3")]  # no listing of its table, no other descriptor read


@pytest.mark.skipif(not LE, reason="fixture text is little-endian")
def test_a_freed_descriptor_that_now_holds_something_else_leaves_the_walk_to_find_the_owner(tmp_path):
    """The link decides, never the hint: a freed descriptor reused for a file, the new socket held by another
    program, is found in that program's table by the walk, as without the hint."""
    proc = _proc(tmp_path, os.geteuid())
    f = ProcessFinder(proc=str(proc))
    assert f.lookup("127.0.0.1", 50000).pid == 977
    f.closed("127.0.0.1", 50000)
    _reopen(proc, 977, 3, "/tmp/some.log")
    _reopen(proc, 978, 3, "socket:[4251]", port=50007, inode=4251)  # 978's socket 5000 closed, this one new
    got = f.lookup("127.0.0.1", 50007)
    assert (got.pid, got.name) == (978, "python3 agent.py") and f.hinted == 0
    f.closed("127.0.0.1", 50099)  # a connection never looked up: nothing to free
    assert f.lookup("127.0.0.1", 50001).pid == 977


def test_the_addon_frees_a_looked_up_connections_descriptor_when_it_closes():
    class Finder:
        def __init__(self):
            self.closed_ = []

        def lookup_many(self, clients):
            return [App("curl", pid=7, exe="/usr/bin/curl", kind="tool") for _ in clients]

        def closed(self, addr, port):
            self.closed_.append((addr, port))

    async def main():
        finder = Finder()
        look = AppLookup(finder=finder)
        seen = SimpleNamespace(id="c1", peername=("127.0.0.1", 50000), sockname=None)
        await look.app_of(seen)
        look.client_disconnected(seen)
        look.client_disconnected(SimpleNamespace(id="c2", peername=("127.0.0.1", 50001), sockname=None))
        look.done()
        return finder.closed_

    assert asyncio.run(main()) == [("127.0.0.1", 50000)]


@pytest.mark.skipif(not LE, reason="fixture text is little-endian")
def test_a_program_no_longer_remembered_keeps_no_freed_descriptors(tmp_path):
    """The freed lists stay bounded by the remembered programs: a connection of a program that has dropped out of
    `recent` (more than 32 others since) frees nothing when it closes."""
    f = ProcessFinder(proc=str(_proc(tmp_path, os.geteuid())))
    assert f.lookup("127.0.0.1", 50000).pid == 977
    f.recent.pop(977)  # as if 32 other programs had been looked up since
    f.closed("127.0.0.1", 50000)
    f.lookup("127.0.0.1", 50003)  # takes the closed queue
    assert 977 not in f._freed

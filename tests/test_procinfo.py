"""Which program sent it (guardian_proxy/procinfo.py): /proc/net/tcp parsing on fixture text, the owner walk on a
fixture /proc tree, the display name (never an argument), a real socket of a real process, the mitmproxy addon
(one lookup per connection; `remote` for another machine), the decision log's `app` field and `log --app`."""

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest
from mitmproxy.test import tflow
from typer.testing import CliRunner

from guardian_proxy import procinfo
from guardian_proxy.cli import app as cli_app
from guardian_proxy.cli.filters import RecordFilter, app_matches
from guardian_proxy.cli.logs import render
from guardian_proxy.decision_log import record
from guardian_proxy.mitm.flows import to_raw
from guardian_proxy.procinfo import (
    App,
    AppLookup,
    ProcessFinder,
    display_name,
    find_sockets,
    kind_of,
    proc_address,
)
from guardian_proxy.types import Action, Decision, RawRequest

linux_only = pytest.mark.skipif(not procinfo.supported(), reason="needs Linux /proc/net/tcp")
LE = sys.byteorder == "little"

# /proc/net/tcp as Linux prints it (x86, little-endian words): a listening socket on 127.0.0.1:8080, the proxy's
# accepted socket (local 127.0.0.1:8080, remote 127.0.0.1:50000), the client's socket (local 127.0.0.1:50000,
# inode 4242), and a TIME_WAIT leftover of an earlier client (127.0.0.1:50001, inode 0)
TCP = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  {uid}        0 1111 1 0 100 0 0 10 0
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000  {uid}        0 2222 1 0 20 4 30 10 -1
   2: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  {uid}        0 4242 1 0 20 4 30 10 -1
   3: 0100007F:C351 0100007F:1F90 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0
"""
# /proc/net/tcp6: a client on ::1 port 50002 (inode 5353)
TCP6 = """\
  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:C352 00000000000000000000000001000000:1F90 01 00000000:00000000 00:00000000 00000000  {uid}        0 5353 1 0 20 4 30 10 -1
"""


def test_proc_address_spelling():
    if LE:
        assert proc_address("127.0.0.1", 50000) == [("tcp", "0100007F:C350"),
                                                    ("tcp6", "0000000000000000FFFF00000100007F:C350")]
        assert proc_address("::1", 50002) == [("tcp6", "00000000000000000000000001000000:C352")]
    # an IPv4 client seen through a dual-stack listener (`::ffff:127.0.0.1`) is looked up as IPv4
    assert proc_address("::ffff:127.0.0.1", 50000) == proc_address("127.0.0.1", 50000)


@pytest.mark.skipif(not LE, reason="fixture text is little-endian")
def test_find_sockets_matches_the_local_side_only():
    text = TCP.format(uid=1000)
    got = find_sockets(text, "0100007F:C350")
    assert [(e.inode, e.state, e.uid) for e in got] == [(4242, "01", 1000)]  # not the proxy's socket (remote side)
    assert find_sockets(text, "0100007F:1F90")[0].inode == 2222  # the listening socket is left out
    assert [e.inode for e in find_sockets(TCP6.format(uid=0), "00000000000000000000000001000000:C352")] == [5353]
    assert find_sockets(text, "0100007F:D000") == []
    assert find_sockets("", "0100007F:C350") == [] and find_sockets("garbage 0100007F:C350", "0100007F:C350") == []


@pytest.mark.parametrize("exe, argv, name", [
    ("/usr/bin/curl", ["curl", "-H", "Authorization: Bearer s3cret", "https://x.example/?email=jane@x.com"], "curl"),
    ("/usr/bin/python3.11", ["python3", "agent.py", "--token", "s3cret"], "python3 agent.py"),
    ("/usr/bin/python3.11", ["/usr/bin/python3", "-u", "-W", "ignore", "/home/jane/bots/agent.py", "jane@x.com"],
     "python3 agent.py"),
    ("/usr/bin/python3.11", ["python3", "-m", "http.server", "8000"], "python3 -m http.server"),
    ("/usr/bin/python3.11", ["python3", "-c", "import os; print('jane@x.com')"], "python3 -c"),
    ("/usr/bin/node", ["node", "--require", "dotenv/config", "/srv/app/server.js", "--key=s3cret"], "node server.js"),
    ("/usr/bin/bash", ["bash", "-c", "curl -d ssn=123-45-6789 x.example"], "bash -c"),
    ("/usr/lib/jvm/bin/java", ["java", "-Xmx1g", "-jar", "/opt/tool/tool.jar", "--user", "jane"], "java -jar tool.jar"),
    ("/usr/lib/chromium/chromium", ["/usr/lib/chromium/chromium", "--type=utility", "--lang=en"], "chromium"),
    ("/opt/app/bin/thing (deleted)", ["thing"], "thing"),
    (None, [], "?"),
])
def test_display_name_keeps_the_program_and_the_script_never_an_argument(exe, argv, name):
    got = display_name(exe, argv)
    assert got == name
    assert "s3cret" not in got and "jane" not in got and "@" not in got


def test_kind():
    assert kind_of("curl") == "tool" and kind_of("python3 agent.py") == "tool" and kind_of("node -e") == "tool"
    assert kind_of("chromium") == "browser" and kind_of("firefox") == "browser" and kind_of("chrome") == "browser"
    assert kind_of("spotify") == "other"


def _fake_proc(tmp_path, uid, with_fd=True):
    proc = tmp_path / "proc"
    (proc / "net").mkdir(parents=True)
    (proc / "net" / "tcp").write_text(TCP.format(uid=uid))
    (proc / "net" / "tcp6").write_text(TCP6.format(uid=uid))
    for pid, inodes, exe, argv in [(301, [1111, 2222], "/usr/bin/python3.11", ["guardian-proxy", "run"]),
                                   (977, [4242] if with_fd else [], "/usr/bin/curl",
                                    ["curl", "-d", "email=jane@x.com", "http://x.example/"]),
                                   (978, [5353], "/home/jane/.local/bin/python3.12",
                                    ["python3", "/home/jane/agent.py", "--key", "s3cret"])]:
        d = proc / str(pid)
        (d / "fd").mkdir(parents=True)
        for i, ino in enumerate(inodes):
            os.symlink(f"socket:[{ino}]", d / "fd" / str(i + 3))
        os.symlink("/dev/null", d / "fd" / "0")
        os.symlink(exe, d / "exe")
        (d / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
        (d / "comm").write_text(os.path.basename(exe)[:15] + "\n")
    return proc


@pytest.mark.skipif(not LE, reason="fixture text is little-endian")
def test_finder_on_a_fixture_proc_tree(tmp_path):
    uid = os.geteuid()
    f = ProcessFinder(proc=str(_fake_proc(tmp_path, uid)))
    a = f.lookup("127.0.0.1", 50000)
    assert (a.name, a.pid, a.exe, a.kind) == ("curl", 977, "/usr/bin/curl", "tool")
    assert a.record() == {"name": "curl", "pid": 977, "exe": "/usr/bin/curl", "kind": "tool"}
    b = f.lookup("::1", 50002)
    assert b.name == "python3 agent.py" and b.pid == 978
    assert b.exe == "~/.local/bin/python3.12"  # the home directory's user name is left out
    assert "s3cret" not in json.dumps(b.record())
    assert f.lookup("127.0.0.1", 50001) == App("unknown", why="gone")  # TIME_WAIT: the program closed it
    assert f.lookup("127.0.0.1", 50999) == App("unknown", why="gone")  # loopback, not in the table
    assert f.lookup("192.0.2.7", 50000) == procinfo.REMOTE  # another machine
    assert f.lookup("/tmp/sock", 0).name == "unknown" and f.lookup(None, None).name == "unknown"
    assert list(f.recent) == [977, 978]  # the owners, tried first next time (the latest first)


@pytest.mark.skipif(not LE, reason="fixture text is little-endian")
def test_finder_says_why_it_cannot_know(tmp_path):
    f = ProcessFinder(proc=str(_fake_proc(tmp_path, 4321)))
    f.euid = 1000  # not root, not the socket's owner: another user's process
    assert f.lookup("127.0.0.1", 50000) == App("unknown", why="no-permission")
    g = ProcessFinder(proc=str(_fake_proc(tmp_path / "b", os.geteuid(), with_fd=False)))
    assert g.lookup("127.0.0.1", 50000) == App("unknown", why="not-found")  # no visible process holds it
    h = ProcessFinder(proc=str(_fake_proc(tmp_path / "c", os.geteuid())), max_pids=1)
    assert h.lookup("127.0.0.1", 50000) == App("unknown", why="scan-limit")  # the walk is bounded


def test_unsupported_platform(monkeypatch):
    monkeypatch.setattr(procinfo.sys, "platform", "darwin")
    assert ProcessFinder().lookup("127.0.0.1", 50000) == App("unknown", why="unsupported")


AGENT = """\
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"x")
s.recv(1)
"""


@linux_only
def test_a_real_process_behind_a_real_socket(tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        p = subprocess.Popen([sys.executable, str(script), str(srv.getsockname()[1]), "jane@x.com"])
        try:
            conn, peer = srv.accept()
            with conn:
                conn.recv(1)
                t = time.process_time()
                a = ProcessFinder().lookup(*peer)
                cpu = time.process_time() - t
                conn.sendall(b"y")
        finally:
            p.wait(10)
    assert a.pid == p.pid and a.kind == "tool", a
    assert a.name.startswith("python") and a.name.endswith(" agent.py") and "jane" not in a.name
    assert cpu < 1.0  # bounded (a few ms on an idle machine; generous for a loaded one)


@linux_only
def test_sock_diag_finds_the_client_socket_by_both_ends_and_by_port():
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        with socket.create_connection(srv.getsockname()) as c:
            s, peer = srv.accept()
            with s:
                try:
                    hit = procinfo.diag_exact(peer[0], peer[1], *s.getsockname())
                except OSError as e:
                    pytest.skip(f"netlink sock_diag refused here: {e}")
                assert hit.inode == os.fstat(c.fileno()).st_ino and hit.state == "01"
                assert procinfo.diag_exact(peer[0], peer[1], "127.0.0.1", 1) is None
                # by port (transparent mode): the client's side only, not the proxy's accepted socket
                got = procinfo._diag_entries(peer[0], peer[1])  # (a TIME_WAIT leftover on the port has inode 0)
                assert [e.inode for e in got if e.inode] == [os.fstat(c.fileno()).st_ino]
                # and the three ways agree
                ways = []
                for netlink, sockname in ((True, s.getsockname()), (True, None), (False, None)):
                    f = ProcessFinder()
                    f.netlink = netlink
                    ways.append(f.lookup(peer[0], peer[1], sockname))
                assert {a.pid for a in ways} == {os.getpid()}


def _client(cid, peer, sockname=None):
    return SimpleNamespace(id=cid, peername=peer, sockname=sockname)


@linux_only
def test_addon_one_lookup_per_connection_and_remote_word():
    async def main():
        look = AppLookup()
        local = socket.socket()
        local.bind(("127.0.0.1", 0))
        local.listen()
        c = socket.create_connection(local.getsockname())
        s, peer = local.accept()
        try:
            cl = _client("c1", peer, s.getsockname())
            look.client_connected(cl)
            f1, f2 = tflow.tflow(), tflow.tflow()
            f1.client_conn.peername = f2.client_conn.peername = peer
            f1.client_conn.id = f2.client_conn.id = "c1"
            await look.requestheaders(f1)
            await look.requestheaders(f2)
            assert f1.metadata[procinfo.META]["pid"] == os.getpid()
            assert f2.metadata[procinfo.META] == f1.metadata[procinfo.META]
            assert look.finder.lookups == 1  # one lookup per connection, not per request
            raw = to_raw(f1)
            assert raw.app == f1.metadata[procinfo.META]
            # another machine's client: the stated word
            rf = tflow.tflow()
            rf.client_conn.peername = ("192.0.2.7", 40123)
            await look.requestheaders(rf)
            assert to_raw(rf).app == {"name": "remote"}
            look.client_disconnected(cl)
            assert "c1" not in look.done_
        finally:
            for x in (c, s, local):
                x.close()
            look.done()

    asyncio.run(main())


def test_addon_udp_client_is_not_looked_up():
    async def main():
        look = AppLookup()
        f = tflow.tflow()
        f.client_conn.transport_protocol = "udp"
        await look.requestheaders(f)
        assert f.metadata[procinfo.META] == {"name": "unknown", "why": "udp"} and look.finder.lookups == 0
        look.done()

    asyncio.run(main())


def test_addon_waits_a_bounded_time():
    class Slow:
        lookups = 0

        def lookup(self, addr, port, sockname=None):
            time.sleep(0.5)
            return App("curl", pid=1, exe="/usr/bin/curl", kind="tool")

    async def main():
        look = AppLookup(finder=Slow(), wait_s=0.05)
        f = tflow.tflow()
        await look.requestheaders(f)
        assert f.metadata[procinfo.META] == {"name": "unknown", "why": "timeout"}
        await asyncio.sleep(0.6)
        g = tflow.tflow()
        g.client_conn = f.client_conn
        await look.requestheaders(g)  # a later request of the same connection gets the finished lookup
        assert g.metadata[procinfo.META]["name"] == "curl"
        look.done()

    asyncio.run(main())


def _decision(app=None):
    raw = RawRequest(method="POST", url="http://api.example.com/v1/x", app=app)
    d = Decision(action="allow", six=Action(domain="example.com", host="api.example.com"))
    return raw, d


def test_decision_log_app_field():
    raw, d = _decision({"name": "python3 agent.py", "pid": 42, "exe": "/usr/bin/python3", "kind": "tool"})
    rec = record(raw, d)
    assert rec["app"] == {"name": "python3 agent.py", "pid": 42, "exe": "/usr/bin/python3", "kind": "tool"}
    raw, d = _decision({"name": "x", "pid": 1, "exe": "/srv/jane.doe@example.com/bin/x", "kind": "other"})
    assert "jane.doe@example.com" not in json.dumps(record(raw, d))  # it passes the log's masking like the rest
    raw, d = _decision()
    assert "app" not in record(raw, d)  # outside the proxy (check, bench): no field


def test_app_filter_and_render():
    curl = {"app": {"name": "curl", "pid": 977, "exe": "/usr/bin/curl", "kind": "tool"}, "action": "deny"}
    agent = {"app": {"name": "python3 agent.py", "pid": 978, "exe": "/usr/bin/python3.11", "kind": "tool"}}
    remote = {"app": {"name": "remote"}}
    old = {}
    assert app_matches(curl["app"], "CURL") and app_matches(curl["app"], "977")
    assert app_matches(agent["app"], "agent.py") and app_matches(agent["app"], "python3")
    assert app_matches(agent["app"], "python3.11") and not app_matches(agent["app"], "curl")
    keep = RecordFilter(app="remote")
    assert [keep(r) for r in (curl, agent, remote, old)] == [False, False, True, False]
    assert "curl" in render({**curl, "method": "GET", "host": "x.example", "path": "/"})
    assert "remote" in render({**remote, "method": "GET", "host": "x.example", "path": "/"})


def test_log_cli_app_option(tmp_path):
    log = tmp_path / "decisions.jsonl"
    recs = [{"ts": 1735689600.0 + i, "id": f"id{i}", "action": "allow", "method": "GET", "host": "x.example",
             "path": "/", "app": a} for i, a in enumerate([
                 {"name": "curl", "pid": 977, "exe": "/usr/bin/curl", "kind": "tool"},
                 {"name": "chromium", "pid": 12, "exe": "/usr/lib/chromium/chromium", "kind": "browser"},
                 {"name": "unknown", "why": "no-permission"}])]
    log.write_text("".join(json.dumps(r) + "\n" for r in recs))
    run = CliRunner().invoke
    r = run(cli_app, ["log", "--log", str(log), "--json", "--app", "chromium"])
    assert r.exit_code == 0, r.output
    assert [json.loads(x)["id"] for x in r.output.splitlines()] == ["id1"]
    r = run(cli_app, ["log", "--log", str(log), "--app", "unknown"])
    assert r.exit_code == 0 and "unknown" in r.output and "chromium" not in r.output


def test_dashboard_app_filter_and_summary():
    from guardian_proxy.dashboard.hub import summary
    from guardian_proxy.dashboard.query import parse

    agent = {"id": "a", "host": "api.openai.com", "action": "allow",
             "app": {"name": "python3 agent.py", "pid": 978, "exe": "/usr/bin/python3.11", "kind": "tool"}}
    curl = {"id": "c", "host": "x.example", "action": "deny", "app": {"name": "curl", "pid": 9, "exe": "/usr/bin/curl"}}
    remote = {"id": "r", "host": "x.example", "action": "allow", "app": {"name": "remote"}}
    old = {"id": "o", "host": "x.example", "action": "allow"}
    recs = [agent, curl, remote, old]

    def ids(q):
        return [r["id"] for r in recs if parse(q)(r)]

    assert ids("app:curl") == ["c"]
    assert ids("app:agent.py") == ["a"] and ids('app:"python3 agent.py"') == ["a"] and ids("app:python3") == ["a"]
    assert ids("app:remote") == ["r"] and ids("-app:curl") == ["a", "r", "o"]
    assert ids("app:curl action:blocked") == ["c"]
    assert ids("agent.py") == ["a"]  # a plain word finds the app's name too
    assert summary(agent)["app"]["name"] == "python3 agent.py"  # the live table's row carries it


def test_detail_sentence_names_the_program_when_no_page_sent_it():
    from guardian_proxy.dashboard.wording import sentence

    rec = {"host": "api.openai.com", "recipient": "ai_service", "action": "allow"}
    agent = {"name": "python3 agent.py", "pid": 978, "exe": "/usr/bin/python3.11", "kind": "tool"}
    assert "sent by python3 agent.py (no web page)" in sentence({**rec, "app": agent})
    assert "sent by an app or tool (no web page)" in sentence({**rec, "app": {"name": "remote"}})
    assert "sent by an app or tool (no web page)" in sentence(rec)

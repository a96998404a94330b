"""Which program sent it: the local process behind a client connection (Linux, /proc).

Given the client's address and port as mitmproxy sees them (`client_conn.peername`; in transparent mode too,
where the client socket is still this machine's), the client socket is the line of `/proc/net/tcp` or
`/proc/net/tcp6` whose *local* address is that address and port (the proxy's accepted socket is the line whose
remote address it is); its inode names the socket, and the process holding it is the one with a
`/proc/<pid>/fd/*` link `socket:[inode]`. From that process: the executable (`/proc/<pid>/exe`) and the command
line, of which only the program and, for an interpreter, the script's file name are kept
(`curl`, `python3 agent.py`, `node server.js`, `chromium`): never an argument, which may hold personal data.

The record (`App.record()`, the decision log's `app` field):

- `{"name": "curl", "pid": 4242, "exe": "/usr/bin/curl", "kind": "tool"}`: found. `kind` is `browser`, `tool`
  (a command-line client or an agent runtime: curl, wget, python, node …) or `other`. An executable under the
  owner's home directory is shown as `~/…`.
- `{"name": "remote"}`: the client is another machine (its address is not a socket of this machine's network
  namespace). A container on its own network is another machine here.
- `{"name": "unknown", "why": …}`: the socket is this machine's but its process cannot be known. `why` is one of
  `no-permission` (another user's process and the proxy is not root, or a process in another PID namespace),
  `udp` (a UDP client: DNS, HTTP/3, WireGuard; only TCP is looked up),
  `gone` (the program closed the connection or exited before the lookup), `not-found` (no process this proxy
  can see holds it: a container sharing the network but not the PID namespace), `scan-limit` (the bounded walk of
  /proc ended first), `unsupported` (not Linux: macOS and Windows are not implemented), `timeout` (the lookup had
  not finished when the request had to be decided), `error`.

Transparent mode: mitmproxy gives the client's own address as `peername` and the original destination
(SO_ORIGINAL_DST) as `sockname`, which are the two ends of the client's socket, so the same lookup applies.

Cost: the kernel's sock_diag (netlink: what `ss` uses): a lookup in its hash by both ends of the connection (the
client's address, and where it connected: the proxy's address, or the original destination in transparent mode),
else a dump filtered by the port in the kernel; where netlink is refused, one read of /proc/net/tcp{,6} (searched as bytes for the address; only the matching lines are parsed),
then a walk of /proc/<pid>/fd, first of the processes that owned earlier connections, then of the socket owner's
(uid) processes, newest first, bounded by MAX_PIDS and MAX_SCAN_S. One lookup per client connection
(`AppLookup` starts it off the event loop when the connection opens; every request of the connection shares it);
the connections that open while the lookup thread is busy share one walk (a burst from one program reads its fd
table once). Before the walk, the descriptors that held a program's earlier connections, now closed, are read
first: a program that closes a connection and opens the next (an HTTP client's pool at its limit) gets the
lowest free descriptor, most often the one just freed, so its new socket is found in one `readlink`, not in a read
of its whole fd table (a client holding 388 descriptors: ~0.5 ms a lookup for the walk). What is read is the link
itself: a descriptor found this way is the socket's, whoever held it before.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import os
import re
import sys
import threading
import time
from collections import OrderedDict, deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

PROC = "/proc"
MAX_PIDS = 4096  # processes whose fd table is read at most per lookup
MAX_SCAN_S = 0.25  # seconds (wall) a lookup's walk of /proc may take
WAIT_S = 0.5  # how long a request waits for its connection's lookup before it is decided with `unknown`
META = "guardian_app"  # flow.metadata key (the record, set by AppLookup, read by mitm/flows.py to_raw)
_LISTEN = "0A"
_TIME_WAIT = "06"
FREED_PER_PID = 8  # descriptors remembered per program as freed by its closed connections (read first)
MAX_PLACES = 4096  # connections whose socket's place (pid, descriptor) is remembered until they close

#: interpreters whose script name is the program's real name (`python3 agent.py`)
_INTERPRETER = re.compile(r"^(?:python[\d.]*|pypy[\d.]*|node(?:js)?|deno|bun|ruby[\d.]*|perl[\d.]*|php[\d.]*|"
                          r"java|Rscript|lua[\d.]*|tclsh[\d.]*|osascript|pwsh|(?:ba|da|z|k|c|tc|fi)?sh)$")
#: options of an interpreter that take the next argument as their value (not the script)
_TAKES_VALUE = frozenset({"-W", "-X", "-Q", "-r", "--require", "--import", "--loader", "--experimental-loader",
                          "-cp", "-classpath", "--class-path", "-I", "-e", "-E"})
#: options after which the program is given inline or as a module (kept as the option, never its value,
#: except a module name: `python3 -m http.server`)
_INLINE = frozenset({"-c", "-e", "--eval", "-p", "--print", "-E"})
_MODULE = frozenset({"-m", "-jar"})
#: command-line clients and agent runtimes: a request from one of them is the user's own tool, not a page's
_TOOLS = re.compile(r"^(?:curl|wget|wget2|http|https|httpie|xh|aria2c|lynx|w3m|links|elinks|git|git-remote-https?|"
                    r"ssh|scp|rsync|pip[\d.]*|npm|npx|yarn|pnpm|cargo|go|gh|az|aws|gcloud|kubectl|helm|docker|"
                    r"podman|ollama|openssl|nc|ncat|socat|httpx|"
                    r"python[\d.]*|pypy[\d.]*|node(?:js)?|deno|bun|ruby[\d.]*|perl[\d.]*|php[\d.]*|java|Rscript|"
                    r"lua[\d.]*|pwsh|(?:ba|da|z|k|c|tc|fi)?sh)$")
_BROWSERS = re.compile(r"^(?:chromium(?:-browser)?|chrome|google-chrome(?:-\w+)?|headless_shell|chrome-headless-shell|"
                       r"firefox(?:-\w+)?|firefox-bin|librewolf|waterfox|brave(?:-browser)?|msedge|microsoft-edge\w*|"
                       r"opera|vivaldi(?:-bin)?|epiphany|WebKitNetworkProcess|qutebrowser|falkon|konqueror|"
                       r"Safari|safari|midori|thorium|floorp|zen|tor|torbrowser)$")
_NAME_MAX = 80


@dataclass(frozen=True)
class App:
    """A program that sent a connection, or the stated word for one that cannot be known."""

    name: str  # `curl`, `python3 agent.py`, `remote`, `unknown`
    pid: int | None = None
    exe: str | None = None
    kind: str | None = None  # browser | tool | other (only when found)
    why: str | None = None  # for `unknown`: no-permission, gone, scan-limit, unsupported, timeout, error

    def record(self) -> dict:
        """The decision log's `app` field (log-safe: no argument of the command line)."""
        if self.pid is None:
            return {"name": self.name, **({"why": self.why} if self.why else {})}
        return {"name": self.name, "pid": self.pid, "exe": self.exe, "kind": self.kind}


REMOTE = App("remote")


def unknown(why: str) -> App:
    return App("unknown", why=why)


def supported() -> bool:
    return sys.platform.startswith("linux") and os.path.exists(os.path.join(PROC, "net", "tcp"))


# ------------------------------------------------------------------ /proc/net/tcp{,6}

def _hex_words(packed: bytes) -> str:
    """An address as /proc/net/tcp prints it: each 32-bit word in the host's byte order, `%08X`."""
    out = []
    for i in range(0, len(packed), 4):
        w = packed[i:i + 4]
        out.append((w[::-1] if sys.byteorder == "little" else w).hex().upper())
    return "".join(out)


def proc_address(addr: str, port: int) -> list[tuple[str, str]]:
    """The (table, `ADDR:PORT`) spellings under which a client socket at `addr`, `port` may be listed: an IPv4
    client in `tcp` (and in `tcp6` as an IPv4-mapped address); an IPv6 one in `tcp6`."""
    ip = ipaddress.ip_address(addr.split("%", 1)[0])
    mapped = getattr(ip, "ipv4_mapped", None)
    v4 = mapped or (ip if ip.version == 4 else None)
    p = f"{int(port):04X}"
    if v4 is not None:
        return [("tcp", f"{_hex_words(v4.packed)}:{p}"),
                ("tcp6", f"{_hex_words(ipaddress.IPv6Address('::ffff:' + str(v4)).packed)}:{p}")]
    return [("tcp6", f"{_hex_words(ip.packed)}:{p}")]


@dataclass(frozen=True)
class SocketEntry:
    local: str
    remote: str
    state: str
    uid: int
    inode: int


def find_sockets(text: bytes | str, local: str) -> list[SocketEntry]:
    """The lines of a /proc/net/tcp{,6} text whose local address is `local` (`0100007F:C350`), listening
    sockets left out. Only the lines that contain the spelling are parsed."""
    data = text.encode() if isinstance(text, str) else text
    needle = local.encode()
    out = []
    start = 0
    while True:
        i = data.find(needle, start)
        if i < 0:
            return out
        ls = data.rfind(b"\n", 0, i) + 1
        le = data.find(b"\n", i)
        le = len(data) if le < 0 else le
        start = le
        f = data[ls:le].split()
        # sl local rem st tx:rx tr:when retrnsmt uid timeout inode …
        if len(f) < 10 or f[1] != needle or f[3].decode() == _LISTEN:
            continue
        try:
            out.append(SocketEntry(f[1].decode(), f[2].decode(), f[3].decode(), int(f[7]), int(f[9])))
        except ValueError:
            continue


# ------------------------------------------------------------------ netlink sock_diag (the cheap way)

_NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_NLM_F_REQUEST, _NLM_F_DUMP = 0x1, 0x300
_NLMSG_ERROR, _NLMSG_DONE = 2, 3
_INET_DIAG_REQ_BYTECODE = 1
_BC_S_COND = 7
_STATES = 0xFFF & ~(1 << 10)  # every TCP state but LISTEN


def diag_sockets(family: int, port: int, timeout_s: float = 1.0) -> list[tuple[bytes, str, int, int]]:
    """(local address bytes, state as /proc writes it, uid, inode) of every TCP socket of this network namespace
    whose local port is `port`, from the kernel's sock_diag (netlink; a filter in the kernel, no text): what
    `ss -tn sport = :PORT` asks. OSError where netlink is not there (not Linux, a seccomp profile)."""
    import socket
    import struct

    # bytecode: S_COND {family any, prefix 0, port}: yes → past the end (accept), no → 4 beyond it (reject)
    bc = struct.pack("=BBH", _BC_S_COND, 12, 16) + struct.pack("=BBxxi", socket.AF_UNSPEC, 0, int(port))
    attr = struct.pack("=HH", 4 + len(bc), _INET_DIAG_REQ_BYTECODE) + bc
    body = struct.pack("=BBBxI", family, socket.IPPROTO_TCP, 0, _STATES) + b"\0" * 48 + attr
    msg = struct.pack("=IHHII", 16 + len(body), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST | _NLM_F_DUMP, 1, 0) + body
    out = []
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG) as nl:
        nl.settimeout(timeout_s)
        nl.sendall(msg)
        while True:
            data = nl.recv(65536)
            if not data:
                return out
            off = 0
            while off + 16 <= len(data):
                length, kind = struct.unpack_from("=IH", data, off)
                if kind == _NLMSG_DONE:
                    return out
                if kind == _NLMSG_ERROR:
                    raise OSError(-struct.unpack_from("=i", data, off + 16)[0], "sock_diag refused")
                if length < 16 + 72:
                    raise OSError("sock_diag: short message")
                state = data[off + 17]
                src = data[off + 24:off + 40] if data[off + 16] == socket.AF_INET6 else data[off + 24:off + 28]
                uid, inode = struct.unpack_from("=II", data, off + 16 + 64)
                out.append((src, f"{state:02X}", uid, inode))
                off += (length + 3) & ~3


@functools.lru_cache(maxsize=1024)
def _address(addr: str):
    """The IP address of `addr` (a zone `%eth0` left out); ValueError if it is none. Remembered: a lookup parses its
    two ends, which are the same few addresses connection after connection (~40 µs a lookup to parse again)."""
    return ipaddress.ip_address(addr.split("%", 1)[0])


def _plain(addr: str):
    ip = _address(str(addr))
    return getattr(ip, "ipv4_mapped", None) or ip


def diag_exact(addr: str, port: int, peer: str, peer_port: int) -> SocketEntry | None:
    """The one TCP socket whose local side is (addr, port) and whose remote side is (peer, peer_port), by a
    sock_diag lookup in the kernel's hash (no walk): None when there is none. OSError where netlink is not
    there."""
    import errno
    import socket
    import struct

    a, b = _plain(addr), _plain(peer)
    if a.version != b.version:
        return None
    family = socket.AF_INET if a.version == 4 else socket.AF_INET6
    sockid = struct.pack("!HH", int(port), int(peer_port)) + a.packed.ljust(16, b"\0") + b.packed.ljust(16, b"\0") \
        + struct.pack("=III", 0, 0xFFFFFFFF, 0xFFFFFFFF)  # any interface, no cookie
    body = struct.pack("=BBBxI", family, socket.IPPROTO_TCP, 0, 0xFFF) + sockid
    msg = struct.pack("=IHHII", 16 + len(body), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, 1, 0) + body
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG) as nl:
        nl.settimeout(1.0)
        nl.sendall(msg)
        data = nl.recv(65536)
    if len(data) < 20:
        raise OSError("sock_diag: short answer")
    kind = struct.unpack_from("=H", data, 4)[0]
    if kind == _NLMSG_ERROR:
        code = -struct.unpack_from("=i", data, 16)[0]
        if code == errno.ENOENT:
            return None
        raise OSError(code, "sock_diag refused")
    if len(data) < 16 + 72:
        raise OSError("sock_diag: short answer")
    uid, inode = struct.unpack_from("=II", data, 16 + 64)
    return SocketEntry("", "", f"{data[17]:02X}", uid, inode)


def _diag_entries(addr: str, port: int) -> list[SocketEntry]:
    """The sockets whose local side is (addr, port), by sock_diag (IPv4, and IPv6 with an IPv4-mapped twin)."""
    import socket

    ip = ipaddress.ip_address(addr.split("%", 1)[0])
    v4 = getattr(ip, "ipv4_mapped", None) or (ip if ip.version == 4 else None)
    want = {v4.packed, ipaddress.IPv6Address("::ffff:" + str(v4)).packed} if v4 is not None else {ip.packed}
    out = []
    for family in ((socket.AF_INET, socket.AF_INET6) if v4 is not None else (socket.AF_INET6,)):
        for src, state, uid, inode in diag_sockets(family, port):
            if src in want:
                out.append(SocketEntry("", "", state, uid, inode))
    return out


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


# ------------------------------------------------------------------ the process and its name

def display_name(exe: str | None, argv: list[str], comm: str = "") -> str:
    """`curl`, `python3 agent.py`, `python3 -m http.server`, `node -e`, `chromium`: the program and, for an
    interpreter, its script's file name (never an argument, never a directory)."""
    arg0 = os.path.basename(argv[0]) if argv and argv[0] else ""
    prog = os.path.basename(exe or "").removesuffix(" (deleted)") or arg0 or comm or "?"
    if arg0 and arg0 != prog and prog.startswith(arg0) and not prog[len(arg0)].isalpha():
        prog = arg0  # the name it was started by, for the same program (`python3` for python3.11)
    name = prog
    if _INTERPRETER.match(prog):
        args = iter(argv[1:])
        for a in args:
            if a in _MODULE:
                nxt = next(args, "")
                name = f"{prog} {a} {os.path.basename(nxt) if a == '-jar' else nxt}".strip()
                break
            if a in _INLINE:
                name = f"{prog} {a}"
                break
            if a == "--":
                a = next(args, "")
                if a:
                    name = f"{prog} {os.path.basename(a)}"
                break
            if a.startswith("-"):
                if a in _TAKES_VALUE:
                    next(args, None)
                continue
            name = f"{prog} {os.path.basename(a.rstrip('/')) or a}"
            break
    return name[:_NAME_MAX]


def kind_of(prog: str) -> str:
    base = prog.split(" ", 1)[0]
    if _BROWSERS.match(base):
        return "browser"
    if _TOOLS.match(base):
        return "tool"
    return "other"


@functools.lru_cache(maxsize=64)
def _home_of(uid: int) -> str | None:
    try:
        import pwd

        return pwd.getpwuid(uid).pw_dir or None
    except (KeyError, ImportError, OSError):
        return None


def _shown_exe(exe: str | None, uid: int | None) -> str | None:
    """The executable's path, with the owner's home directory as `~` (a user name is personal)."""
    if not exe:
        return exe
    exe = exe.removesuffix(" (deleted)")
    home = _home_of(uid) if uid is not None else None
    if home and home != "/" and exe.startswith(home.rstrip("/") + "/"):
        return "~" + exe[len(home.rstrip("/")):]
    if exe.startswith("/home/"):  # another user's home: its name is left out too
        return "~/" + exe[len("/home/"):].partition("/")[2]
    return exe


def describe(pid: int, uid: int | None = None, proc: str = PROC) -> App:
    base = os.path.join(proc, str(pid))
    try:
        exe = os.readlink(os.path.join(base, "exe"))
    except OSError:
        exe = None
    argv = [a.decode("utf-8", "replace") for a in _read(os.path.join(base, "cmdline")).split(b"\0") if a]
    comm = _read(os.path.join(base, "comm")).decode("utf-8", "replace").strip()
    name = display_name(exe, argv, comm)
    return App(name, pid=pid, exe=_shown_exe(exe, uid), kind=kind_of(name))


# ------------------------------------------------------------------ the lookup

class ProcessFinder:
    """Finds the process behind a client socket. Thread-safe enough for one lookup thread; remembers the pids
    that owned earlier connections (a browser opens many) and tries them first."""

    def __init__(self, proc: str = PROC, max_pids: int = MAX_PIDS, max_scan_s: float = MAX_SCAN_S):
        self.proc = proc
        self.max_pids, self.max_scan_s = max_pids, max_scan_s
        self.recent: OrderedDict[int, None] = OrderedDict()
        self.euid = os.geteuid() if hasattr(os, "geteuid") else -1
        self.lookups = 0
        self.netlink = True  # sock_diag first; /proc/net/tcp{,6} where it is refused
        self._supported: bool | None = None  # supported(), asked once
        # where each open connection's socket was found: (addr, port) → inode → (pid, descriptor); a connection
        # that closes (`closed`, from any thread) frees its descriptor, which the program's next socket most often
        # takes: `_freed` pid → those descriptors, newest last, read before any walk
        self._inode_of: OrderedDict[tuple, int] = OrderedDict()
        self._place: OrderedDict[int, tuple[int, int]] = OrderedDict()
        self._closed: deque[tuple] = deque()
        self._freed: dict[int, deque[int]] = {}
        self.hinted = 0  # sockets found at a freed descriptor, without a walk (for tests and benchmarks)

    def lookup(self, addr: str | None, port: int | None, sockname: tuple | None = None) -> App:
        """The App for a client at (addr, port) as the proxy sees it; never raises. `sockname`: the proxy's side
        of the connection (where the client connected: a lookup in the kernel's hash instead of a walk)."""
        return self.lookup_many([(addr, port, sockname)])[0]

    def lookup_many(self, clients: list[tuple]) -> list[App]:
        """`lookup` for each (addr, port, sockname), in order, with one walk of /proc for all of them: a program
        that opens several connections at once (a browser's six per host, an HTTP client's pool) has its fd table
        read once, not once per connection. Never raises."""
        self.lookups += len(clients)
        out: list[App | None] = []
        owners: dict[int, dict[int, list[int]]] = {}  # uid → socket inode → indices of `clients` it answers
        for i, (addr, port, sockname) in enumerate(clients):
            try:
                got = self._socket(addr, port, sockname)
            except Exception:
                got = unknown("error")
            if isinstance(got, SocketEntry):
                owners.setdefault(got.uid, {}).setdefault(got.inode, []).append(i)
                out.append(None)
            else:
                out.append(got)
        for uid, inodes in owners.items():
            try:
                found = self.owners(set(inodes), uid)
            except Exception:
                found = {}
            for inode, idx in inodes.items():
                for i in idx:
                    out[i] = found.get(inode) or unknown("error")
                    addr, port = clients[i][0], clients[i][1]
                    if inode in self._place:
                        self._inode_of.pop((addr, port), None)
                        self._inode_of[(addr, port)] = inode
                        while len(self._inode_of) > MAX_PLACES:
                            self._inode_of.popitem(last=False)
        return out  # type: ignore[return-value]

    def closed(self, addr: str | None, port: int | None) -> None:
        """The client connection at (addr, port) closed: the descriptor its socket had is free (thread-safe: queued,
        taken by the next lookup)."""
        if addr and port is not None:
            self._closed.append((addr, port))

    def _take_closed(self) -> None:
        while self._closed:
            inode = self._inode_of.pop(self._closed.popleft(), None)
            place = self._place.pop(inode, None) if inode is not None else None
            if place is not None and place[0] in self.recent:  # a program no longer remembered keeps no freed list
                pid, fd = place
                freed = self._freed.get(pid)
                if freed is None:
                    freed = self._freed[pid] = deque(maxlen=FREED_PER_PID)
                if fd in freed:
                    freed.remove(fd)
                freed.append(fd)

    def _found_at(self, inode: int, pid: int, fd: int) -> None:
        self._place.pop(inode, None)
        self._place[inode] = (pid, fd)
        while len(self._place) > MAX_PLACES:
            self._place.popitem(last=False)

    def _by_freed(self, targets: dict[str, int], found: dict[int, App], named: dict[int, App], uid: int) -> None:
        """Read the freed descriptors of the remembered programs (newest first) before any walk; what is found
        there leaves `targets`."""
        for pid in list(reversed(self.recent)):
            freed = self._freed.get(pid)
            if not freed:
                continue
            for fd in reversed(list(freed)):
                try:
                    link = os.readlink(os.path.join(self.proc, str(pid), "fd", str(fd)))
                except OSError:
                    continue
                inode = targets.pop(link, None)
                if inode is None:
                    continue
                freed.remove(fd)
                self.hinted += 1
                if pid not in named:
                    self._remember(pid)
                    named[pid] = describe(pid, uid, self.proc)
                found[inode] = named[pid]
                self._found_at(inode, pid, fd)
                if not targets:
                    return

    def _socket(self, addr: str | None, port: int | None, sockname: tuple | None = None) -> SocketEntry | App:
        """The client's live socket (its inode and owner uid), or the App that says why there is none."""
        if not addr or port is None:
            return unknown("error")
        try:
            _address(str(addr))
        except ValueError:  # a unix socket, a virtual peer (wireguard, local redirect)
            return unknown("error")
        if self.proc == PROC:
            if self._supported is None:
                self._supported = supported()
            if not self._supported:
                return unknown("unsupported")
        entries: list[SocketEntry] | None = None
        if self.proc == PROC and self.netlink:
            try:
                hit = diag_exact(str(addr), int(port), str(sockname[0]), int(sockname[1])) \
                    if sockname and sockname[0] else None
                # not found by both ends (a NAT this side did not see): every socket on the client's port
                entries = [hit] if hit is not None else _diag_entries(str(addr), int(port))
            except OSError:
                self.netlink = False  # not there (a seccomp profile): /proc/net/tcp from now on
        if entries is None:
            entries = []
            for table, local in proc_address(str(addr), int(port)):
                entries += find_sockets(_read(os.path.join(self.proc, "net", table)), local)
        live = [e for e in entries if e.inode and e.state != _TIME_WAIT]
        if not live:
            return unknown("gone") if entries or _is_loopback(addr) else REMOTE
        return live[0]

    def owner(self, inode: int, uid: int) -> App:
        return self.owners({inode}, uid)[inode]

    def owners(self, inodes: set[int], uid: int) -> dict[int, App]:
        """The process holding each socket inode (all owned by `uid`): one walk of /proc/<pid>/fd for all of them,
        the processes that owned earlier connections first, each fd table read until every socket it may still
        hold is found; bounded by max_pids and max_scan_s."""
        if self.euid not in (0, uid):
            return {i: unknown("no-permission") for i in inodes}
        targets = {f"socket:[{i}]": i for i in inodes}
        found: dict[int, App] = {}
        named: dict[int, App] = {}  # pid → its App (read once per walk)
        self._take_closed()
        if self._freed:
            self._by_freed(targets, found, named, uid)
            if not targets:
                return found
        deadline = time.monotonic() + self.max_scan_s
        denied = 0
        scanned = 0
        for pid in self._candidates(uid):
            if not targets:
                break
            if scanned >= self.max_pids or time.monotonic() > deadline:
                found.update((i, unknown("scan-limit")) for i in targets.values())
                return found
            scanned += 1
            try:
                dir_fd = os.open(os.path.join(self.proc, str(pid), "fd"), os.O_RDONLY | os.O_DIRECTORY)
            except PermissionError:
                denied += 1
                continue
            except OSError:
                continue
            try:
                fds = os.listdir(dir_fd)
            except PermissionError:
                denied += 1
                fds = []
            except OSError:
                fds = []
            try:
                for fd in fds:
                    try:  # readlinkat in the open fd directory: no walk of /proc/<pid>/fd per descriptor
                        inode = targets.pop(os.readlink(fd, dir_fd=dir_fd), None)
                    except OSError:
                        continue
                    if inode is not None:
                        if pid not in named:
                            self._remember(pid)
                            named[pid] = describe(pid, uid, self.proc)
                        found[inode] = named[pid]
                        if fd.isdigit():
                            self._found_at(inode, pid, int(fd))
                        if not targets:
                            break
            finally:
                os.close(dir_fd)
        why = unknown("no-permission" if denied else "not-found")
        found.update((i, why) for i in targets.values())
        return found

    def _candidates(self, uid: int):
        seen = set()
        for pid in list(reversed(self.recent)):  # a copy: a walk for several sockets remembers pids as it goes
            seen.add(pid)
            yield pid
        try:
            pids = sorted((int(n) for n in os.listdir(self.proc) if n.isdigit()), reverse=True)
        except OSError:
            return
        me = os.getpid()
        for pid in pids:
            if pid in seen or pid == me:
                continue
            try:
                if os.stat(os.path.join(self.proc, str(pid))).st_uid != uid:
                    continue
            except OSError:
                continue
            yield pid
        if me not in seen:
            yield me  # the proxy's own requests (a health check) last: its own table is the largest

    def _remember(self, pid: int) -> None:
        self.recent.pop(pid, None)
        self.recent[pid] = None
        while len(self.recent) > 32:
            self._freed.pop(self.recent.popitem(last=False)[0], None)


def _is_loopback(addr: str) -> bool:
    try:
        ip = ipaddress.ip_address(str(addr).split("%", 1)[0])
    except ValueError:
        return False
    return (getattr(ip, "ipv4_mapped", None) or ip).is_loopback


def app_matches_rule(app: dict | None, rule: str) -> bool:
    """An override's `app` against the request's (RawRequest.app): `curl` matches curl; `python3` (a program
    alone) matches that program whatever its script, by its shown name or its executable's file name;
    `python3 agent.py` matches that script (`python agent.py` too). Case-insensitive. A request whose program is
    not known (None, `remote`, `unknown`) matches only a rule naming that word."""
    if not isinstance(app, dict) or not app.get("name"):
        return False
    r = " ".join(rule.lower().split())
    name = str(app["name"]).lower()
    if r == name:
        return True
    prog, _, rest = name.partition(" ")
    exe = os.path.basename(str(app.get("exe") or "")).lower()
    r_prog, _, r_rest = r.partition(" ")
    if app.get("pid") is None or r_prog not in {prog, exe} and not (exe and exe.startswith(r_prog) and
                                                                  not exe[len(r_prog)].isalpha()):
        return False
    return not r_rest or r_rest == rest


# ------------------------------------------------------------------ the mitmproxy addon

class AppLookup:
    """mitmproxy addon: one lookup per client connection, started off the event loop when the connection opens
    (while the program still holds it), awaited (at most WAIT_S) by the first request; the record goes into
    `flow.metadata[META]`, where mitm/flows.py `to_raw` reads it. Add it before GuardianAddon.

    The lookups run on one thread, in batches: the connections that opened while it was busy are looked up
    together (`ProcessFinder.lookup_many`: a burst of connections from one program costs one read of its fd
    table, not one per connection)."""

    def __init__(self, finder: ProcessFinder | None = None, wait_s: float = WAIT_S):
        self.finder = finder or ProcessFinder()
        self.wait_s = wait_s
        self.pending: dict[str, asyncio.Future] = {}
        self.done_: dict[str, dict] = {}
        self._pool: ThreadPoolExecutor | None = None
        self._queue: list[tuple] = []  # (addr, port, sockname, concurrent Future) not yet taken by the thread
        self._lock = threading.Lock()

    def _start(self, client) -> asyncio.Future | None:
        cid = getattr(client, "id", None)
        if cid is None:
            return None
        fut = self.pending.get(cid)
        if fut is None and cid not in self.done_ and getattr(client, "transport_protocol", "tcp") != "tcp":
            self.done_[cid] = unknown("udp").record()  # UDP (DNS, QUIC, WireGuard): only TCP is looked up
            return None
        if fut is None and cid not in self.done_:
            loop = asyncio.get_running_loop()  # RuntimeError without one (nothing queued then)
            peer = getattr(client, "peername", None) or (None, None)
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="guardian-procinfo")
            cf: Future = Future()
            with self._lock:
                self._queue.append((peer[0], peer[1], getattr(client, "sockname", None), cf))
            self._pool.submit(self._drain)
            fut = asyncio.wrap_future(cf, loop=loop)
            self.pending[cid] = fut
        return fut

    def _drain(self) -> None:
        """On the lookup thread: every connection queued by now, in one batch (the later calls find it empty)."""
        with self._lock:
            batch, self._queue = self._queue, []
        batch = [b for b in batch if b[3].set_running_or_notify_cancel()]
        if not batch:
            return
        try:
            many = getattr(self.finder, "lookup_many", None)
            apps = many([b[:3] for b in batch]) if many is not None else [self.finder.lookup(*b[:3]) for b in batch]
        except Exception:
            apps = [unknown("error")] * len(batch)
        for b, app in zip(batch, apps, strict=True):
            b[3].set_result(app)

    def client_connected(self, client) -> None:
        try:
            self._start(client)
        except RuntimeError:  # no running loop (a test calling the hook by hand)
            pass

    async def app_of(self, client) -> dict:
        cid = getattr(client, "id", None)
        if cid in self.done_:
            return self.done_[cid]
        fut = self._start(client)
        if fut is None:
            return self.done_.get(cid) or unknown("error").record()
        try:
            app = await asyncio.wait_for(asyncio.shield(fut), self.wait_s)
        except TimeoutError:
            return unknown("timeout").record()
        except Exception:
            app = unknown("error")
        rec = app.record()
        self.done_[cid] = rec
        self.pending.pop(cid, None)
        return rec

    async def requestheaders(self, flow) -> None:
        if flow.client_conn is not None and META not in flow.metadata:
            flow.metadata[META] = await self.app_of(flow.client_conn)

    async def tcp_start(self, flow) -> None:
        if flow.client_conn is not None and META not in flow.metadata:
            flow.metadata[META] = await self.app_of(flow.client_conn)

    udp_start = tcp_start

    def client_disconnected(self, client) -> None:
        cid = getattr(client, "id", None)
        self.pending.pop(cid, None)
        if self.done_.pop(cid, None) is not None:  # looked up: its socket's descriptor is free now
            closed = getattr(self.finder, "closed", None)
            peer = getattr(client, "peername", None) or (None, None)
            if closed is not None:
                closed(peer[0], peer[1])

    def done(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

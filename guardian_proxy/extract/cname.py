"""The CNAME chain of a host, to unmask trackers served under a site's own name (CNAME cloaking).

A marketing or analytics vendor can be served as `metrics.shop.example` (a CNAME to `shop.example.eulerian.net`):
to the browser and to a host-name check it is the shop itself. The chain of the DNS answer says who it is.

The proxy's own DNS answer (guardian_proxy/dns_answer.py, `detector.cname_lookup`, on by default): when a request's
headers arrive the proxy asks the system's resolver (the first `nameserver` of /etc/resolv.conf, or
`detector.dns_server`) the A question for its host, reads the CNAME chain and the addresses of that answer, and hands
the chain's last name to the evaluation (`RawRequest.canonical_host`). The connection resolves through the system as
usual (one extra question per name per TTL, to the same resolver); with `detector.dns_connect` it goes to the
answer's first address instead (one answer for the decision and the connection). `lookup(host)` → `Answer`:

- bounded: one UDP query, `timeout` seconds (0.5), a chain of at most 8 names, answers of at most 4 KiB;
- cached: per host for the answer's TTL (at most `ttl`, 5 min; a failure for 30 s), at most `max_entries` hosts
  (least recent out);
- left to the system where the system answers differently: a name in /etc/hosts, a name without a dot (search
  domains), an IP address, no A record (IPv6 only) or no answer: no chain, and the connection resolves as usual.

`CnameResolver(host)` (the chain's last name or None) is the same lookup for callers that only need the name.
Standard library only (RFC 1035 wire format); any failure is "no CNAME" (None).
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

_CNAME, _A, _IN = 5, 1, 1


def system_nameserver(resolv_conf: Path = Path("/etc/resolv.conf")) -> tuple[str, int] | None:
    try:
        for line in resolv_conf.read_text(encoding="utf-8", errors="replace").splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0] == "nameserver":
                return parts[1], 53
    except OSError:
        return None
    return None


def parse_nameserver(spec: str | None) -> tuple[str, int] | None:
    """`detector.dns_server`: "HOST", "HOST:PORT" or "[V6]:PORT"; None or "" → the system's (resolv.conf)."""
    if not spec:
        return system_nameserver()
    spec = spec.strip()
    if spec.startswith("["):
        host, _, port = spec[1:].partition("]")
        return host, int(port.lstrip(":") or 53)
    if spec.count(":") == 1:
        host, port = spec.split(":")
        return host, int(port)
    return spec, 53


def hosts_file_names(path: Path = Path("/etc/hosts")) -> frozenset[str]:
    """Names /etc/hosts gives an address: the system answers those itself, never from DNS."""
    names: set[str] = set()
    try:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            parts = line.split("#", 1)[0].split()
            names.update(p.lower().rstrip(".") for p in parts[1:])
    except OSError:
        pass
    return frozenset(names)


@dataclass(frozen=True)
class Answer:
    """One DNS answer: the last name of its CNAME chain (None: no CNAME) and its IPv4 addresses, in order."""

    canonical: str | None
    addresses: tuple[str, ...] = ()
    ttl: float = 300.0


def _query(host: str, qid: int) -> bytes:
    labels = b"".join(bytes([len(p)]) + p for p in (x.encode("idna") for x in host.split(".") if x))
    return struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + labels + b"\x00" + struct.pack(">HH", _A, _IN)


def _name(msg: bytes, off: int, depth: int = 0) -> tuple[str, int]:
    """The (possibly compressed) name at `off` and the offset after it."""
    labels, end = [], None
    for _ in range(128):
        n = msg[off]
        if n & 0xC0 == 0xC0:  # a pointer
            if depth > 16:
                raise ValueError("pointer loop")
            ptr = struct.unpack(">H", msg[off:off + 2])[0] & 0x3FFF
            end = off + 2 if end is None else end
            rest, _ = _name(msg, ptr, depth + 1)
            return ".".join(labels + ([rest] if rest else [])), end
        off += 1
        if n == 0:
            return ".".join(labels), off if end is None else end
        labels.append(msg[off:off + n].decode("ascii", errors="replace").lower())
        off += n
    raise ValueError("name too long")


def cname_chain(msg: bytes, qid: int | None = None) -> dict[str, str]:
    """{name: CNAME target} from the answer section of a DNS response."""
    return _records(msg, qid)[0]


def _records(msg: bytes, qid: int | None = None) -> tuple[dict[str, str], dict[str, list[str]], int | None]:
    """({name: CNAME target}, {name: [IPv4 address, …]}, the smallest TTL) of a response's answer section."""
    qid_, flags, qd, an = struct.unpack(">HHHH", msg[:8])
    if (qid is not None and qid_ != qid) or not flags & 0x8000:
        return {}, {}, None
    off = 12
    for _ in range(qd):
        _, off = _name(msg, off)
        off += 4
    chain: dict[str, str] = {}
    addrs: dict[str, list[str]] = {}
    ttl_min = None
    for _ in range(an):
        owner, off = _name(msg, off)
        rtype, _cls, ttl, rdlen = struct.unpack(">HHIH", msg[off:off + 10])
        off += 10
        if rtype == _CNAME:
            chain[owner.rstrip(".")] = _name(msg, off)[0].rstrip(".")
        elif rtype == _A and rdlen == 4:
            addrs.setdefault(owner.rstrip("."), []).append(socket.inet_ntoa(msg[off:off + 4]))
        ttl_min = ttl if ttl_min is None else min(ttl_min, ttl)
        off += rdlen
    return chain, addrs, ttl_min


class CnameResolver:
    """host → the last name of its CNAME chain, or None (no CNAME, or no answer); `lookup(host)` → the whole
    `Answer` (chain and addresses) or None."""

    def __init__(self, nameserver: tuple[str, int] | None = None, timeout: float = 0.5, ttl: float = 300.0,
                 max_entries: int = 4096, max_hops: int = 8, hosts: frozenset[str] | None = None):
        self.nameserver = nameserver if nameserver is not None else system_nameserver()
        self.timeout, self.ttl, self.max_entries, self.max_hops = timeout, ttl, max_entries, max_hops
        self.hosts = hosts if hosts is not None else hosts_file_names()
        self._cache: OrderedDict[str, tuple[float, Answer | None]] = OrderedDict()
        self._lock = threading.Lock()
        self.queries = 0  # how many questions were sent (tests, stats)

    def __call__(self, host: str) -> str | None:
        ans = self.lookup(host)
        return ans.canonical if ans is not None else None

    def asks(self, host: str) -> bool:
        """Whether DNS answers for this name (not an address, a name the hosts file gives, or one without a dot)."""
        host = (host or "").lower().rstrip(".")
        return bool(host) and "." in host and self.nameserver is not None and host not in self.hosts and \
            not _is_address(host)

    def cached(self, host: str) -> tuple[bool, Answer | None]:
        """(found, answer) from the cache alone: never waits."""
        host = (host or "").lower().rstrip(".")
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(host)
            if hit is not None and hit[0] > now:
                self._cache.move_to_end(host)
                return True, hit[1]
        return False, None

    def lookup(self, host: str) -> Answer | None:
        host = (host or "").lower().rstrip(".")
        if not self.asks(host):
            return None
        found, ans = self.cached(host)
        if found:
            return ans
        now = time.monotonic()
        ans, ok = self._resolve(host)
        life = min(self.ttl, max(1.0, ans.ttl)) if ok and ans is not None else (self.ttl if ok else 30.0)
        with self._lock:
            self._cache[host] = (now + life, ans)
            self._cache.move_to_end(host)
            while len(self._cache) > self.max_entries:
                self._cache.popitem(last=False)
        return ans

    def _resolve(self, host: str) -> tuple[Answer | None, bool]:
        qid = int.from_bytes(os.urandom(2), "big")
        try:
            family = socket.AF_INET6 if ":" in self.nameserver[0] else socket.AF_INET
            with socket.socket(family, socket.SOCK_DGRAM) as s:
                s.settimeout(self.timeout)
                s.connect(self.nameserver)
                self.queries += 1
                s.send(_query(host, qid))
                deadline = time.monotonic() + self.timeout
                while True:
                    s.settimeout(max(0.001, deadline - time.monotonic()))
                    msg = s.recv(4096)
                    if len(msg) >= 12 and struct.unpack(">H", msg[:2])[0] == qid:
                        break
            chain, addrs, ttl = _records(msg, qid)
        except (OSError, ValueError, struct.error, IndexError, UnicodeError):
            return None, False
        name, seen = host, {host}
        for _ in range(self.max_hops):
            nxt = chain.get(name)
            if not nxt or nxt in seen:
                break
            seen.add(nxt)
            name = nxt
        return Answer(name if name != host else None, tuple(addrs.get(name, ())),
                      float(ttl) if ttl is not None else self.ttl), True


def _is_address(host: str) -> bool:
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host.strip("[]"))
            return True
        except OSError:
            continue
    return False

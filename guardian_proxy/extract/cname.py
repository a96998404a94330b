"""The CNAME chain of a host, to unmask trackers served under a site's own name (CNAME cloaking).

A marketing or analytics vendor can be served as `metrics.shop.example` (a CNAME to `shop.example.eulerian.net`):
to the browser and to a host-name check it is the shop itself. The chain of the DNS answer says who it is.
`CnameResolver(host)` asks the system's resolver (the first `nameserver` of /etc/resolv.conf, the one the proxy's
own connection to the host asks) the same A question the connection asks and reads the CNAME records of the
answer: it discloses nothing the connection does not, and it is

- bounded: one UDP query, `timeout` seconds (0.5), a chain of at most 8 names, answers of at most 4 KiB;
- cached: per host for `ttl` seconds (5 min; a failure for 30 s), at most `max_entries` hosts (least recent out);
- asked only where it matters: the extractor consults it for a first-party-looking subdomain (same site, or the
  user's own client's addressee) of a request that carries personal data (so a page load's many requests without
  any never wait for it), in the evaluation pool, not on the proxy's event loop.

Standard library only (RFC 1035 wire format); any failure is "no CNAME" (None).
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from collections import OrderedDict
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
    qid_, flags, qd, an = struct.unpack(">HHHH", msg[:8])
    if (qid is not None and qid_ != qid) or not flags & 0x8000:
        return {}
    off = 12
    for _ in range(qd):
        _, off = _name(msg, off)
        off += 4
    out: dict[str, str] = {}
    for _ in range(an):
        owner, off = _name(msg, off)
        rtype, _cls, _ttl, rdlen = struct.unpack(">HHIH", msg[off:off + 10])
        off += 10
        if rtype == _CNAME:
            out[owner.rstrip(".")] = _name(msg, off)[0].rstrip(".")
        off += rdlen
    return out


class CnameResolver:
    """host → the last name of its CNAME chain, or None (no CNAME, or no answer)."""

    def __init__(self, nameserver: tuple[str, int] | None = None, timeout: float = 0.5, ttl: float = 300.0,
                 max_entries: int = 4096, max_hops: int = 8):
        self.nameserver = nameserver if nameserver is not None else system_nameserver()
        self.timeout, self.ttl, self.max_entries, self.max_hops = timeout, ttl, max_entries, max_hops
        self._cache: OrderedDict[str, tuple[float, str | None]] = OrderedDict()
        self._lock = threading.Lock()
        self.queries = 0  # how many questions were sent (tests, stats)

    def __call__(self, host: str) -> str | None:
        host = (host or "").lower().rstrip(".")
        if not host or self.nameserver is None:
            return None
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(host)
            if hit is not None and hit[0] > now:
                self._cache.move_to_end(host)
                return hit[1]
        target, ok = self._resolve(host)
        with self._lock:
            self._cache[host] = (now + (self.ttl if ok else 30.0), target)
            self._cache.move_to_end(host)
            while len(self._cache) > self.max_entries:
                self._cache.popitem(last=False)
        return target

    def _resolve(self, host: str) -> tuple[str | None, bool]:
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
            chain = cname_chain(msg, qid)
        except (OSError, ValueError, struct.error, IndexError, UnicodeError):
            return None, False
        name, seen = host, {host}
        for _ in range(self.max_hops):
            nxt = chain.get(name)
            if not nxt or nxt in seen:
                break
            seen.add(nxt)
            name = nxt
        return (name if name != host else None), True

"""The proxy's own DNS answer: the CNAME chain for the evaluation; the address for the connection only on request
(R-CNAME-CLOAKED).

A mitmproxy addon, added after `GuardianAddon` (guardian_proxy/mitm/app.py `build`), on while `detector.cname_lookup`
is (the default):

- `requestheaders`: as soon as a request's headers arrive (its body may still be on the way) the destination's A
  question is asked (extract/cname.py `CnameResolver.lookup`: one bounded UDP query in a worker thread, never on the
  event loop; cached for the answer's TTL, at most 5 min, at most 4,096 names) and the answer kept on the flow;
  `to_raw` hands the chain's last name to the evaluation as `RawRequest.canonical_host`, where the extractor checks
  it for a known tracker behind a first-party-looking name (CNAME cloaking). A cached answer is used without waiting.
- By default that is all: the connection resolves the name through the system (getaddrinfo: /etc/hosts, nsswitch,
  mDNS, split-DNS VPNs, IPv6 first where the system prefers it), as without this addon. The cost is one extra DNS
  question per name per TTL, to the same resolver the system asks, which learns nothing it would not learn anyway.
- `connect=True` (`detector.dns_connect`, off by default): `request` (after the decision) sends the request to the
  answer's first IPv4 address, the Host header, HTTP/2 authority and TLS SNI keeping the name (so upstream
  certificate verification is still against the name), and the connection asks no DNS question of its own: one
  answer for both the decision and the connection. Fallback: when the connection to the answered address fails
  (`server_connect_error`), that name is connected through the system resolver for the answer's lifetime (at least
  60 s). The failed request itself cannot be retried in mitmproxy 11: the error reaches the HTTP layer, which answers
  the client 502, after the last hook (`error`) that could act, and a hook cannot open the connection itself.

Left to the system resolver, as without this addon: IP addresses, names in /etc/hosts or without a dot, names
with no A record (IPv6 only) or no answer in time; every request when `--redirect-upstream` sends it elsewhere (the
chain is still read: tests and benchmarks). Not added in `upstream:` and `reverse:` modes (the proxy does not
resolve the request's host there). It is given mitmproxy's flows and hook data by guardian_proxy/mitm/, the one package that
imports mitmproxy.
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor

from .extract.cname import Answer, CnameResolver

log = logging.getLogger("guardian_proxy")
META = "guardian_dns"  # flow.metadata key: {"host", "canonical", "address"}


class DnsAnswer:
    #: how long a name whose answered address refused stays with the system resolver, at least
    FALLBACK_S = 60.0
    MAX_FALLBACK = 4096

    def __init__(self, resolver: CnameResolver, connect: bool = False):
        self.resolver = resolver
        self.connect = connect  # True: connect to the answer's address (detector.dns_connect); False: read the chain
        self.pool = ThreadPoolExecutor(4, thread_name_prefix="guardian-dns")
        #: (client connection id, address) → the name a request of that client was sent to that address for
        self._sni: dict[tuple[str, tuple[str, int]], str] = {}
        #: name → until when it is connected through the system resolver (its answered address failed)
        self._system: dict[str, float] = {}

    async def requestheaders(self, flow) -> None:
        host = (flow.request.host or "").lower().rstrip(".")
        if flow.response is not None or not self.resolver.asks(host):
            return
        found, ans = self.resolver.cached(host)
        if not found:
            try:
                ans = await asyncio.get_running_loop().run_in_executor(self.pool, self.resolver.lookup, host)
            except RuntimeError:  # shutting down
                return
        self.keep(flow, host, ans)

    @staticmethod
    def keep(flow, host: str, ans: Answer | None) -> None:
        if ans is not None:
            flow.metadata[META] = {"host": host, "canonical": ans.canonical,
                                   "address": ans.addresses[0] if ans.addresses else None}

    def request(self, flow) -> None:
        """After the decision: the request goes to the answer's address, the name kept for Host, authority, SNI."""
        got = flow.metadata.get(META)
        r = flow.request
        if not self.connect or flow.response is not None or not got or not got.get("address") or \
                (r.host or "").lower().rstrip(".") != got["host"] or self._to_system(got["host"]):
            return
        key = (flow.client_conn.id, (got["address"], r.port))
        if self._sni.get(key, r.host) != r.host:
            # another name of this client already goes to that address: mitmproxy would reuse its connection (it
            # matches connections by address), whose certificate was checked for the other name; the system's
            return
        host_header, authority = r.headers.get("host"), r.authority
        flow.metadata.setdefault("guardian_url", r.url)  # the reply's handling still sees the name
        self._sni[key] = r.host
        r.host = got["address"]  # the setter rewrites Host and authority: put them back
        if host_header is not None:
            r.headers["host"] = host_header
        r.authority = authority

    def server_connect(self, data) -> None:
        name = self._sni.get((data.client.id, tuple(data.server.address or ())))
        if name is not None and data.server.tls:
            data.server.sni = name

    def server_connect_error(self, data) -> None:
        """The answered address failed: that name goes through the system resolver from the next request on."""
        name = self._sni.pop((data.client.id, tuple(data.server.address or ())), None)
        if name is None:
            return
        name = name.lower().rstrip(".")
        found, ans = self.resolver.cached(name)
        life = max(self.FALLBACK_S, ans.ttl if found and ans is not None else 0.0)
        if len(self._system) >= self.MAX_FALLBACK:
            self._system.pop(next(iter(self._system)))
        self._system[name] = time.monotonic() + life
        log.info("guardian-proxy: the DNS answer's address for a host refused; the system resolver connects it")

    def _to_system(self, host: str) -> bool:
        until = self._system.get(host)
        if until is None:
            return False
        if until > time.monotonic():
            return True
        del self._system[host]
        return False

    def client_disconnected(self, client) -> None:
        for k in [k for k in self._sni if k[0] == client.id]:
            del self._sni[k]

    def done(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def canonical_host(flow) -> str | None:
    """The chain's last name the proxy's DNS answer gave for this flow's host (for `RawRequest.canonical_host`)."""
    got = flow.metadata.get(META)
    return got.get("canonical") if got else None


class ScriptDnsAnswer:
    """The same addon under `mitmdump -s` / `mitmweb -s` (guardian_proxy/mitm/script.py), listed after
    `GuardianAddon`: the settings (`detector.cname_lookup`, `dns_server`, `dns_connect`) are known only once the
    guardian's gateway is built in its thread, so the first request waits for it as `GuardianAddon.request` does
    (it answers 503 when it cannot be built, and then nothing is asked here). Off in `upstream:` and `reverse:`
    modes, read from each flow's own proxy mode; no connection to the answer while `guardian_redirect_upstream`
    sends requests elsewhere."""

    def __init__(self, guardian):
        self.guardian = guardian
        self.inner: DnsAnswer | None = None
        self.off = False

    async def _ready(self) -> DnsAnswer | None:
        if self.inner is None and not self.off:
            if self.guardian.gateway is None and not await self.guardian._until_ready():
                return None
            det = self.guardian.gateway.settings.detector
            if self.inner is None and not self.off:
                if not det.cname_lookup:
                    self.off = True
                else:
                    from .extract.cname import CnameResolver, parse_nameserver

                    self.inner = DnsAnswer(CnameResolver(parse_nameserver(det.dns_server)), connect=det.dns_connect)
        return self.inner

    async def requestheaders(self, flow) -> None:
        mode = getattr(getattr(flow.client_conn, "proxy_mode", None), "type_name", "regular")
        if mode in ("upstream", "reverse") or flow.response is not None:
            return
        inner = await self._ready()
        if inner is not None:
            await inner.requestheaders(flow)

    def request(self, flow) -> None:
        if self.inner is not None and getattr(self.guardian, "redirect", None) is None:
            self.inner.request(flow)

    def server_connect(self, data) -> None:
        if self.inner is not None:
            self.inner.server_connect(data)

    def server_connect_error(self, data) -> None:
        if self.inner is not None:
            self.inner.server_connect_error(data)

    def client_disconnected(self, client) -> None:
        if self.inner is not None:
            self.inner.client_disconnected(client)

    def done(self) -> None:
        if self.inner is not None:
            self.inner.done()

"""The proxy's own DNS answer: the CNAME chain for the evaluation, the address for the connection (issue 25 item 3).

A mitmproxy addon, added after `GuardianAddon` (guardian_proxy/addon.py `_serve`), on while `detector.cname_lookup`
is (the default):

- `requestheaders`: as soon as a request's headers arrive (its body may still be on the way) the destination's A
  question is asked once (extract/cname.py `CnameResolver.lookup`: one bounded UDP query, cached for the answer's
  TTL) and the answer kept on the flow; `to_raw` hands the chain's last name to the evaluation as
  `RawRequest.canonical_host`, where the extractor checks it for a known tracker behind a first-party-looking name
  (CNAME cloaking);
- `request` (after the decision): the request is sent to the answer's first address, the Host header, HTTP/2
  authority and TLS SNI keeping the name, so the connection makes no DNS question of its own: the chain costs no
  exchange beyond the one the proxy needs anyway. A cached answer is used without waiting.

Left to the system resolver, as without this addon: IP addresses, names in /etc/hosts or without a dot, names
with no A record (IPv6 only) or no answer in time; every request when `--redirect-upstream` sends it elsewhere (the
chain is still read: tests and benchmarks). Not added in `upstream:` and `reverse:` modes (the proxy does not
resolve the request's host there). It is given mitmproxy's flows and hook data by addon.py, the one module that
imports mitmproxy.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor

from .extract.cname import Answer, CnameResolver

log = logging.getLogger("guardian_proxy")
META = "guardian_dns"  # flow.metadata key: {"host", "canonical", "address"}


class DnsAnswer:
    def __init__(self, resolver: CnameResolver, connect: bool = True):
        self.resolver = resolver
        self.connect = connect  # False: read the chain only (--redirect-upstream sends the request elsewhere)
        self.pool = ThreadPoolExecutor(4, thread_name_prefix="guardian-dns")
        #: (client connection id, address) → the name a request of that client was sent to that address for
        self._sni: dict[tuple[str, tuple[str, int]], str] = {}

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
                (r.host or "").lower().rstrip(".") != got["host"]:
            return
        host_header, authority = r.headers.get("host"), r.authority
        flow.metadata.setdefault("guardian_url", r.url)  # the reply's handling still sees the name
        self._sni[(flow.client_conn.id, (got["address"], r.port))] = r.host
        r.host = got["address"]  # the setter rewrites Host and authority: put them back
        if host_header is not None:
            r.headers["host"] = host_header
        r.authority = authority

    def server_connect(self, data) -> None:
        name = self._sni.get((data.client.id, tuple(data.server.address or ())))
        if name is not None and data.server.tls:
            data.server.sni = name

    def client_disconnected(self, client) -> None:
        for k in [k for k in self._sni if k[0] == client.id]:
            del self._sni[k]

    def done(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def canonical_host(flow) -> str | None:
    """The chain's last name the proxy's DNS answer gave for this flow's host (for `RawRequest.canonical_host`)."""
    got = flow.metadata.get(META)
    return got.get("canonical") if got else None

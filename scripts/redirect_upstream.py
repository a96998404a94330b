"""mitmdump addon: send every request to one address, keeping the Host header and TLS SNI — the same
thing `guardian-proxy run --redirect-upstream` does, for a bare-mitmdump baseline in benchmarks.

    mitmdump -s scripts/redirect_upstream.py --set redirect_upstream=127.0.0.1:9000

The request's destination is changed (not only the connection's address in `server_connect`) so that
mitmproxy reuses the upstream keep-alive connection for the next request of the same client.
"""

from __future__ import annotations

from mitmproxy import ctx, exceptions, http
from mitmproxy.proxy import server_hooks


class RedirectUpstream:
    def __init__(self):
        self.address: tuple[str, int] | None = None
        self.sni: dict[str, str] = {}  # client connection id → the host name the client asked for

    def load(self, loader) -> None:
        loader.add_option("redirect_upstream", str, "", "Send every upstream connection to HOST:PORT.")

    def configure(self, updated) -> None:
        if "redirect_upstream" not in updated:
            return
        value = ctx.options.redirect_upstream
        if not value:
            self.address = None
            return
        host, sep, port = value.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise exceptions.OptionsError(f"redirect_upstream: expected HOST:PORT, got {value!r}")
        self.address = (host.strip("[]"), int(port))

    def request(self, flow: http.HTTPFlow) -> None:
        if self.address is None or flow.response is not None:
            return
        r = flow.request
        host_header, authority = r.headers.get("host"), r.authority
        self.sni[flow.client_conn.id] = r.host
        r.host, r.port = self.address  # the setters rewrite Host and authority: put them back
        if host_header is not None:
            r.headers["host"] = host_header
        r.authority = authority

    def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        if self.address is None:
            return
        data.server.address = self.address
        if data.server.tls and data.client.id in self.sni:
            data.server.sni = self.sni[data.client.id]

    def client_disconnected(self, client) -> None:
        self.sni.pop(client.id, None)


addons = [RedirectUpstream()]

"""mitmdump addon: send every request to one address, keeping the Host header and TLS SNI — the same
thing `guardian-proxy run --redirect-upstream` does, for a bare-mitmdump baseline in benchmarks.

    mitmdump -s scripts/redirect_upstream.py --set redirect_upstream=127.0.0.1:9000

The request's destination is changed (not only the connection's address in `server_connect`) so that
mitmproxy reuses the upstream keep-alive connection for the next request of the same client.
"""

from __future__ import annotations

from mitmproxy import ctx, exceptions, http
from mitmproxy.proxy import server_hooks

from guardian_proxy.mitm.redirect import UpstreamRedirect


class RedirectUpstream:
    """The `redirect_upstream` option around guardian-proxy's own UpstreamRedirect."""

    def __init__(self):
        self.redirect: UpstreamRedirect | None = None

    def load(self, loader) -> None:
        loader.add_option("redirect_upstream", str, "", "Send every upstream connection to HOST:PORT.")

    def configure(self, updated) -> None:
        if "redirect_upstream" not in updated:
            return
        value = ctx.options.redirect_upstream
        if not value:
            self.redirect = None
            return
        host, sep, port = value.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise exceptions.OptionsError(f"redirect_upstream: expected HOST:PORT, got {value!r}")
        self.redirect = UpstreamRedirect((host.strip("[]"), int(port)))

    def request(self, flow: http.HTTPFlow) -> None:
        if self.redirect is not None and flow.response is None:
            self.redirect.request(flow)

    def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        if self.redirect is not None:
            self.redirect.server_connect(data)

    def client_disconnected(self, client) -> None:
        if self.redirect is not None:
            self.redirect.client_disconnected(client)


addons = [RedirectUpstream()]

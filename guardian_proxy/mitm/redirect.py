"""`--redirect-upstream` / `guardian_redirect_upstream`: every request goes to one address, as an addon of its own
in the chain, after the guardian (`app.build`), so it sees only what the guardian let through."""

from __future__ import annotations

from mitmproxy import http
from mitmproxy.proxy import server_hooks


class UpstreamRedirect:
    """The request (not only its connection) goes to `address`, so mitmproxy reuses the upstream keep-alive
    connection (rewriting just the address in `server_connect` opened a new connection per request, and the sixth
    on one client connection stalled). The Host header and HTTP/2 authority keep the original name;
    `server_connect` puts it back into the TLS SNI. `address` None: off. A request that already has its answer
    (blocked, or refused while the guardian is not ready) or an error is left alone; so is a connection another
    addon refused. Also used by scripts/redirect_upstream.py for the bare-mitmdump baseline of the benchmark."""

    def __init__(self, address: tuple[str, int] | None = None):
        self.address = address
        self._sni: dict[str, str] = {}  # client connection id → the host it asked for

    def request(self, flow: http.HTTPFlow) -> None:
        if self.address is None or flow.response is not None or flow.error is not None:
            return
        r = flow.request
        host_header, authority = r.headers.get("host"), r.authority
        self._sni[flow.client_conn.id] = r.host
        r.host, r.port = self.address  # the setters rewrite Host and authority: put them back
        if host_header is not None:
            r.headers["host"] = host_header
        r.authority = authority

    def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        if self.address is None or data.server.error:
            return
        data.server.address = self.address
        if data.server.tls and data.client.id in self._sni:
            data.server.sni = self._sni[data.client.id]

    def client_disconnected(self, client) -> None:
        self._sni.pop(client.id, None)

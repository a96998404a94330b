"""A flow as the pipeline sees it: where it really goes (`destination`, `real_url`), the `RawRequest` made of it
(`to_raw`, `ws_raw`, `stream_raw`) and what it is (`wants_html`, `is_preflight`; whether a reply is a stream:
session/reply.py `is_stream`, the one reply filter's)."""

from __future__ import annotations

import functools

from mitmproxy import http
from mitmproxy.net.http import url as mitm_url

from .. import domains
from ..procinfo import META as APP_META
from ..types import RawRequest

#: `domains.is_ip` by the host (every request asks; a name costs `ipaddress` two failed parses, ~5 µs)
is_ip = functools.lru_cache(maxsize=4096)(domains.is_ip)


@functools.lru_cache(maxsize=4096)  # every request asks for its Host header's (~7 µs a parse)
def _name(authority: str | None) -> str | None:
    """The host name of a Host header or :authority value (port, brackets, case and a trailing dot dropped)."""
    if not authority:
        return None
    try:
        host = mitm_url.parse_authority(authority.strip(), check=False)[0]
    except ValueError:
        return authority.strip().lower()
    return host.strip("[]").lower().rstrip(".") or None


def destination(flow: http.HTTPFlow) -> tuple[str, str | None]:
    """(the host the request really goes to, the name its Host header or :authority claims when that differs).

    The destination is where mitmproxy connects: the CONNECT authority or the absolute URL's host (regular,
    upstream and SOCKS modes). In the transparent modes mitmproxy only knows the original IP address: a TLS
    request goes to the name its client sent as SNI (the upstream certificate is verified against that name), and
    a plain-HTTP one is pinned to its Host header (the connection then goes to that name, so the name decided on
    is the name reached). A Host header never chooses the destination otherwise: `Host: mybank.example` sent to
    stats.g.doubleclick.net is decided (and logged) as doubleclick, flagged `host_mismatch`."""
    r = flow.request
    host = r.host.strip("[]").lower().rstrip(".")
    claimed = _name(r.host_header)
    if is_ip(host):
        sni = flow.client_conn.sni if flow.client_conn is not None else None
        if r.scheme == "https" and sni:
            host = sni.lower().rstrip(".")
        elif r.scheme == "http" and claimed and not is_ip(claimed):
            r.host = claimed  # mitmproxy connects to this name; the Host header keeps its value
            host = claimed
    return host, (claimed if claimed and claimed != host else None)


def real_url(flow: http.HTTPFlow, host: str | None = None) -> str:
    """The request's URL with the host it really goes to (`destination`, unless given), never the Host header's."""
    r = flow.request
    host = host if host is not None else destination(flow)[0]
    if r.first_line_format == "authority":
        return f"{host}:{r.port}"
    return mitm_url.unparse(r.scheme, host, r.port, r.path)


def raw_scheme(flow) -> str:
    return "udp" if getattr(flow, "type", "tcp") == "udp" else "tcp"


def to_raw(flow: http.HTTPFlow) -> RawRequest:
    r = flow.request
    host, claimed = destination(flow)
    dns = flow.metadata.get("guardian_dns")  # the proxy's own DNS answer (guardian_proxy/dns_answer.py)
    canonical = dns.get("canonical") if dns and dns.get("host") == (host or "").lower().rstrip(".") else None
    return RawRequest(method=r.method, url=real_url(flow, host), headers=[(k, v) for k, v in r.headers.items(multi=True)],
                      body=r.raw_content or b"", client=client_address(flow), claimed_host=claimed, canonical_host=canonical,
                      app=flow.metadata.get(APP_META))  # the program that sent it (procinfo.AppLookup)


def client_address(flow) -> str | None:
    """The client's IP address as text (None when mitmproxy does not know it)."""
    return str(flow.client_conn.peername[0]) if flow.client_conn and flow.client_conn.peername else None


#: the handshake headers a WebSocket message's evaluation sees (who sent it; never cookies or credentials)
_WS_HEADERS = frozenset({"host", "origin", "user-agent", "referer", "sec-fetch-site", "sec-fetch-mode",
                         "sec-fetch-dest"})
WS_KEEP = 16  # WebSocket messages kept per flow (mitmproxy otherwise keeps all until the connection closes)


def wants_html(flow: http.HTTPFlow) -> bool:
    accept = flow.request.headers.get("accept", "")
    return "text/html" in accept and "application/json" not in accept


def is_preflight(flow: http.HTTPFlow) -> bool:
    """A browser's CORS preflight: OPTIONS with an Origin and Access-Control-Request-Method."""
    h = flow.request.headers
    return flow.request.method.upper() == "OPTIONS" and bool(h.get("origin")) and \
        bool(h.get("access-control-request-method"))



def ws_raw(flow: http.HTTPFlow, content: bytes, is_text: bool) -> RawRequest:
    """One client→server WebSocket message as the pipeline sees it: the handshake's URL, the headers that say who
    sent it (never its cookies or credentials: the handshake was decided with those), the message as body."""
    r = flow.request
    keep = [(k, v) for k, v in r.headers.items(multi=True) if k.lower() in _WS_HEADERS]
    ctype = ("application/json" if content.lstrip()[:1] in (b"{", b"[") else "text/plain; charset=utf-8") \
        if is_text else "application/octet-stream"
    return RawRequest(method="POST", url=real_url(flow), headers=keep + [("content-type", ctype)], body=content,
                      client=client_address(flow), websocket=flow.id, app=flow.metadata.get(APP_META))


def stream_raw(flow, content: bytes = b"") -> RawRequest:
    """A raw TCP/UDP connection (non-HTTP bytes through CONNECT, TLS to a port that does not speak HTTP, or
    the transparent modes) as the pipeline sees it: `tcp://host:port/` (the SNI name when mitmproxy only knows
    an IP), OPEN for the connection, SEND with one client message as an opaque body. The destination is the
    one seen at the start (before `server_connect` may redirect the connection)."""
    url = flow.metadata.get("guardian_url")
    if url is None:
        host, port = flow.server_conn.address or ("", 0)
        sni = flow.client_conn.sni if flow.client_conn is not None else None
        if is_ip(str(host)) and sni:
            host = sni
        scheme = raw_scheme(flow)
        url = flow.metadata["guardian_url"] = f"{scheme}://{mitm_url.hostport(scheme, host, port)}/"
    return RawRequest(method="SEND" if content else "OPEN", url=url,
                      headers=[("content-type", "application/octet-stream")] if content else [], body=content,
                      client=client_address(flow), app=flow.metadata.get(APP_META))


def content_length(response: http.Response) -> int | None:
    """A response's Content-Length (None when it has none, or not a number)."""
    try:
        n = int(response.headers.get("content-length", ""))
    except ValueError:
        return None
    return n if n >= 0 else None

"""The doctor's test request: proof that the running proxy's whole path works.

The doctor starts a one-shot HTTP server on 127.0.0.1 (a free port) and sends one request for
`http://127.0.0.1:<port>/guardian-proxy-doctor/<nonce>` to the proxy's listen address, in the absolute form
a client configured with the proxy sends. The proxy has no loopback bypass (NO_PROXY is a client-side
convention, and the doctor talks to the proxy directly), so the request passes the listener, the guardian
decision and mitmproxy's upstream connection. Only when the server saw that very nonce and the answer
came back with it does the path count as working; a request to an unroutable name would prove only that
something answers on the port. The request carries no personal data and is logged like any other (host
127.0.0.1, path /guardian-proxy-doctor/…).
"""

from __future__ import annotations

import http.client
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PATH = "/guardian-proxy-doctor/"


def _server(nonce: str, seen: list[str]) -> ThreadingHTTPServer:
    body = f"guardian-proxy doctor {nonce}\n".encode()

    class H(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            seen.append(self.path)
            self.send_response(200)
            self.send_header("content-type", "text/plain")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return ThreadingHTTPServer(("127.0.0.1", 0), H)


def through_proxy(host: str, port: int, timeout: float = 20.0) -> tuple[str, str]:
    """(state, detail): ok when a request to a local server went through the proxy at host:port and back."""
    nonce = secrets.token_hex(8)
    seen: list[str] = []
    srv = _server(nonce, seen)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    target = f"http://127.0.0.1:{srv.server_address[1]}{PATH}{nonce}"
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    t0 = time.monotonic()
    try:
        conn = http.client.HTTPConnection(host, port, timeout=timeout)
        try:
            conn.request("GET", target, headers={"user-agent": "guardian-proxy-doctor", "connection": "close"})
            r = conn.getresponse()
            body = r.read(65536).decode("utf-8", "replace")
            status, headers = r.status, {k.lower(): v for k, v in r.getheaders()}
        finally:
            conn.close()
    except (OSError, http.client.HTTPException) as e:
        return "fail", f"no answer from the proxy at {where}: {type(e).__name__}: {e}"
    finally:
        srv.shutdown()
        srv.server_close()
    ms = round((time.monotonic() - t0) * 1000)
    reached = f"{PATH}{nonce}" in seen
    if reached and status == 200 and nonce in body:
        return "ok", (f"a test request to a local server (127.0.0.1:{srv.server_address[1]}) went through the "
                      f"proxy at {where} and came back in {ms} ms")
    if status == 407:
        return "warn", (f"the proxy at {where} answered 407: it asks clients for credentials (--proxyauth), "
                        "which the doctor does not have, so the path beyond was not tested")
    if headers.get("x-guardian-blocked"):
        return "warn", (f"the proxy at {where} answered but blocked the test request (decision "
                        f"{headers.get('x-guardian-decision', '?')}): an override or rule denies 127.0.0.1")
    return "fail", (f"the proxy at {where} answered {status} but the test request "
                    f"{'reached' if reached else 'never reached'} the local server"
                    + ("" if reached else " (is it started with --redirect-upstream, or is another program "
                       "listening on that port?)"))

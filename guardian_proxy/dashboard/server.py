"""The dashboard's HTTP server: stdlib `ThreadingHTTPServer` on 127.0.0.1 in its own daemon thread, so it
never touches the proxy's event loop. Routes:

    GET  /                      the page (token once in ?token=, then a cookie)
    GET  /static/<file>         script and style shipped in guardian_proxy/static
    GET  /proxy.pac             proxy auto-config for browsers (no token: it holds only the proxy address)
    GET  /api/snapshot          recent decisions + aggregates
    GET  /api/stats             aggregates
    GET  /api/events            server-sent events: one `decision` event per decision
    GET  /api/decision/<id>     the log-safe detail of one decision
    GET  /api/config            settings (secrets masked), mode, model status
    GET  /api/overrides         overrides in force
    POST /api/overrides         {"action": "allow"|"deny", "domain": D, "category": C?}  → immediate, persisted
    POST /api/overrides/remove  {"number": n}  (numbered as `guardian-proxy overrides` lists them)
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from pydantic import ValidationError

from ..errors import GuardianError
from ..resources import PACKAGE_DIR
from .hub import Hub
from .security import HEADERS

log = logging.getLogger("guardian_proxy.dashboard")
STATIC_DIR = PACKAGE_DIR / "static"
TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml",
         ".png": "image/png", ".html": "text/html; charset=utf-8"}
KEEPALIVE_S = 15.0
MAX_POST = 16 * 1024


class Handler(BaseHTTPRequestHandler):
    server_version = "guardian-dashboard"
    app = None  # the DashboardServer, set on a subclass per server

    def log_message(self, fmt, *args):  # quiet: requests are not worth a line each
        log.debug("dashboard: " + fmt, *args)

    # ------------------------------------------------------------------ replies

    def _send(self, code: int, body: bytes, ctype: str, extra: dict | None = None) -> None:
        self.send_response(code)
        for k, v in {**HEADERS, "Content-Type": ctype, "Content-Length": str(len(body)), **(extra or {})}.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, obj, code: int = 200) -> None:
        self._send(code, json.dumps(obj, ensure_ascii=False).encode(), "application/json")

    def _error(self, code: int, message: str) -> None:
        self._json({"error": message}, code)

    # ------------------------------------------------------------------ routing

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        path = urlsplit(self.path).path
        if path == "/proxy.pac":
            return self._send(200, self.app.pac().encode(), "application/x-ns-proxy-autoconfig")
        if path == "/favicon.ico":
            return self._send(204, b"", "image/x-icon")
        ok, why = self.app.guard.same_site(self.headers)
        if not ok:
            return self._error(403, why)
        if path.startswith("/static/"):
            return self._static(path[len("/static/"):])
        g = self.app.guard
        if path == "/":
            if g._eq(g.query_token(self.path)):
                return self._send(303, b"", "text/plain", {"Location": "/", "Set-Cookie": g.set_cookie()})
            if not g.can_read(self.path, self.headers):
                return self._send(401, NO_TOKEN_PAGE, "text/html; charset=utf-8")
            return self._send(200, self.app.page(), "text/html; charset=utf-8")
        if not path.startswith("/api/"):
            return self._error(404, "not found")
        if not g.can_read(self.path, self.headers):
            return self._error(401, "token required")
        a = self.app
        if path == "/api/snapshot":
            return self._json(a.hub.snapshot())
        if path == "/api/stats":
            return self._json(a.hub.stats_dict())
        if path == "/api/events":
            return self._events()
        if path.startswith("/api/decision/"):
            d = a.hub.detail(path.rsplit("/", 1)[1])
            return self._json(d) if d is not None else self._error(404, "unknown decision (too old?)")
        if path == "/api/config":
            return self._json(a.config_view())
        if path == "/api/overrides":
            return self._json({"overrides": a.overrides.entries()})
        return self._error(404, "not found")

    def do_POST(self) -> None:  # noqa: N802
        path = urlsplit(self.path).path
        ok, why = self.app.guard.same_site(self.headers)
        if not ok:
            return self._error(403, why)
        if not self.app.guard.can_write(self.headers):
            return self._error(403, "X-Guardian-Token header required")
        if "application/json" not in (self.headers.get("Content-Type") or ""):
            return self._error(415, "send application/json")
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_POST:
            return self._error(413, "too large")
        try:
            body = json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            return self._error(400, "invalid JSON")
        store = self.app.overrides
        try:
            if path == "/api/overrides":
                if body.get("action") not in ("allow", "deny") or not isinstance(body.get("domain"), str):
                    return self._error(400, "expected {action: allow|deny, domain, category?}")
                o = store.add(body["action"], body["domain"], body.get("category"))
                log.warning("dashboard override: always %s %s%s", o.action, o.domain,
                            f" ({o.category})" if o.category else "")
            elif path == "/api/overrides/remove":
                store.remove(int(body.get("number", -1)))
            else:
                return self._error(404, "not found")
        except ValidationError as e:
            return self._error(400, "; ".join(f"{'.'.join(map(str, x['loc'])) or 'override'}: {x['msg']}"
                                              for x in e.errors()))
        except (GuardianError, ValueError, TypeError) as e:
            return self._error(400, str(e) or type(e).__name__)
        return self._json({"overrides": store.entries()})

    def do_OPTIONS(self) -> None:  # noqa: N802  (CORS preflight: never granted)
        self._error(403, "cross-origin requests are not allowed")

    # ------------------------------------------------------------------ bodies

    def _static(self, name: str) -> None:
        f = STATIC_DIR / name
        if "/" in name or name.startswith(".") or not f.is_file():
            return self._error(404, "not found")
        self._send(200, f.read_bytes(), TYPES.get(f.suffix, "application/octet-stream"))

    def _events(self) -> None:
        hub: Hub = self.app.hub
        sub = hub.subscribe()
        try:
            self.send_response(200)
            for k, v in {**HEADERS, "Content-Type": "text/event-stream", "Connection": "close"}.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(b"retry: 1500\n\n")
            self.wfile.flush()
            last = time.monotonic()
            while not sub.dropped and not hub.closed.is_set():
                try:
                    msg = sub.get(timeout=1.0)
                except queue.Empty:
                    if time.monotonic() - last > KEEPALIVE_S:
                        self.wfile.write(b": keepalive\n\n")
                        self.wfile.flush()
                        last = time.monotonic()
                    continue
                if msg is None:
                    break
                self.wfile.write(b"event: decision\ndata: " + msg.encode() + b"\n\n")
                self.wfile.flush()
                last = time.monotonic()
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
        finally:
            hub.unsubscribe(sub)
            self.close_connection = True


NO_TOKEN_PAGE = (b"<!doctype html><meta charset='utf-8'><title>guardian-proxy dashboard</title>"
                 b"<body>"
                 b"<h1>guardian-proxy dashboard</h1><p>Open the address <code>guardian-proxy run</code> printed "
                 b"at start: it carries this run's token (<code>?token=...</code>).</p></body>")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def make_server(app, host: str, port: int) -> tuple[_Server, threading.Thread]:
    handler = type("BoundHandler", (Handler,), {"app": app})
    httpd = _Server((host, port), handler)
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.25}, name="guardian-dashboard",
                         daemon=True)
    return httpd, t

"""The dashboard's HTTP server: stdlib `ThreadingHTTPServer` on 127.0.0.1 in its own daemon thread, so it
never touches the proxy's event loop. Routes:

    GET  /                      the page (token once in ?token=, then a cookie)
    GET  /static/<file>         script and style shipped in guardian_proxy/static
    GET  /proxy.pac             proxy auto-config for browsers (no token: it holds only the proxy address)
    GET  /api/snapshot?q=F      recent decisions (those filter F matches, query.py) + aggregates
    GET  /api/stats             aggregates
    GET  /api/events?q=F        server-sent events: one `decision` event per decision (that F matches); a new
                                token ends the stream with one `token` event
    GET  /api/sites?q=F         recent decisions grouped by the page that made them (sites.py)
    GET  /api/apps?q=F          recent decisions grouped by the program that sent them (apps.py)
    GET  /api/decision/<id>     the log-safe detail of one decision
    GET  /api/config            settings (secrets masked), mode, model status
    GET  /api/overrides         overrides in force
    POST /api/overrides         {"action": "allow"|"deny", "domain": D, "category": C?, "for": T?, "app": A?}
                                → immediate, persisted; T: forever (default) | once | restart | a duration (30m,
                                1h, 2d); A: only what that program sends (the Apps tab: `python3 agent.py`)
    POST /api/overrides/remove  {"id": ID}  (or, from old pages, {"number": n}: a position, which shifts)
    GET  /block/view?grant=G    one decision, from the block page's link (block_actions.py: G is its proof)
    POST /block/allow           the block page's buttons (form: grant, for=once|1h|forever) → 303 to the blocked URL
"""

from __future__ import annotations

import json
import logging
import queue
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from pydantic import ValidationError

from ..errors import GuardianError
from ..overrides import describe_override
from ..resources import PACKAGE_DIR
from . import block_actions
from . import query as query_mod
from .hub import Hub
from .security import HEADERS

log = logging.getLogger("guardian_proxy.dashboard")
STATIC_DIR = PACKAGE_DIR / "static"
TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml",
         ".png": "image/png", ".html": "text/html; charset=utf-8"}
KEEPALIVE_S = 15.0
#: how often an idle live stream checks that its token is still the one in force (a busy one: before every event)
TOKEN_CHECK_S = 0.5
MAX_POST = 16 * 1024
#: bounds against a flood of connections (docs/security.md): at most MAX_HANDLERS handler
#: threads at once (each open live view holds one); a request head must be complete within HEAD_TIMEOUT_S, and a
#: socket read or write that waits longer fails. At the cap a new connection replaces the oldest one still
#: sending its head; when none is, it gets a 503 and is closed.
MAX_HANDLERS = 64
HEAD_TIMEOUT_S = 10.0
_BUSY = (b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
         b"Connection: close\r\n\r\nbusy\n")


class Handler(BaseHTTPRequestHandler):
    server_version = "guardian-dashboard"
    app = None  # the DashboardServer, set on a subclass per server
    timeout = HEAD_TIMEOUT_S  # the socket's timeout (StreamRequestHandler.setup)

    def parse_request(self) -> bool:
        ok = super().parse_request()
        self.server.head_done(self.request)  # the head is complete: no longer under the head deadline
        return ok

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
        if path == "/block/view":  # from the block page: cross-site by design, the grant is the proof
            return self._send(*_reply(block_actions.view_get(self.app, self.path, self.headers)))
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
        if path in ("/api/snapshot", "/api/events", "/api/sites", "/api/apps"):
            try:
                keep = query_mod.parse((parse_qs(urlsplit(self.path).query).get("q") or [""])[0]) or None
            except ValueError as e:
                return self._error(400, str(e))
            if path == "/api/snapshot":
                return self._json(a.hub.snapshot(keep=keep))
            if path == "/api/sites":
                return self._json({"sites": a.hub.sites(keep)})
            if path == "/api/apps":
                return self._json({"apps": a.hub.apps(keep)})
            return self._events(keep)
        if path == "/api/stats":
            return self._json(a.hub.stats_dict())
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
        if path == "/block/allow":  # the block page's buttons: cross-site by design, the grant is the proof
            n = int(self.headers.get("Content-Length") or 0)
            if n > MAX_POST:
                return self._error(413, "too large")
            return self._send(*_reply(block_actions.allow_post(self.app, self.headers, self.rfile.read(n))))
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
                if body.get("action") not in ("allow", "deny") or not isinstance(body.get("domain"), str) or \
                        not isinstance(body.get("for") or "", str) or not isinstance(body.get("app") or "", str):
                    return self._error(400, "expected {action: allow|deny, domain, category?, for?, app?}")
                o = store.add(body["action"], body["domain"], body.get("category"), body.get("for"),
                              **({"app": body["app"]} if body.get("app") else {}))
                log.warning("dashboard override %s: %s", o.id, describe_override(o))
            elif path == "/api/overrides/remove":
                store.remove(str(body["id"]) if body.get("id") is not None else int(body.get("number", -1)))
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

    def _events(self, keep=None) -> None:
        """The live stream. It is bound to the token it was opened with: once that token is replaced
        (`guardian-proxy dashboard --new-token`), the stream sends one `token` event and ends, before any later
        decision, and the page says the token changed (a reconnect with the old cookie gets a 401)."""
        hub: Hub = self.app.hub
        guard = self.app.guard
        opened_with = guard.token
        sub = hub.subscribe(keep)
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
                    msg = sub.get(timeout=TOKEN_CHECK_S)
                except queue.Empty:
                    msg = ""
                if guard.token != opened_with:  # one stat of the token file (security.TokenFile.current)
                    self.wfile.write(b"event: token\ndata: {\"changed\":true}\n\n")
                    self.wfile.flush()
                    break
                if msg == "":
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
                 b"<h1>guardian-proxy dashboard</h1><p>Open the address <code>guardian-proxy dashboard</code> prints "
                 b"(<code>guardian-proxy dashboard --open</code> opens it): it carries the dashboard's token "
                 b"(<code>?token=...</code>).</p></body>")


def _reply(r: tuple[int, bytes, dict]) -> tuple[int, bytes, str, dict]:
    """A block_actions answer (status, body, headers) as `Handler._send` arguments."""
    code, body, headers = r
    headers = dict(headers)
    return code, body, headers.pop("Content-Type", "text/plain"), headers


class _Server(ThreadingHTTPServer):
    """A thread per connection, at most `max_handlers` at once; heads past `head_timeout_s` are cut (their socket
    shut down by the serving thread's `service_actions`, which runs every poll interval)."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128
    max_handlers = MAX_HANDLERS
    head_timeout_s = HEAD_TIMEOUT_S

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._slots = threading.Semaphore(self.max_handlers)
        self._heads: dict = {}  # socket → deadline of its request head (oldest first)
        self._heads_lock = threading.Lock()

    def process_request(self, request, client_address):
        if not self._slots.acquire(blocking=False):
            self._cut_oldest_head()
            if not self._slots.acquire(timeout=1.0):
                return self._busy(request)
        with self._heads_lock:
            self._heads[request] = time.monotonic() + self.head_timeout_s
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._release(request)
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._release(request)

    def head_done(self, request) -> None:
        with self._heads_lock:
            self._heads.pop(request, None)

    def service_actions(self) -> None:
        now = time.monotonic()
        with self._heads_lock:
            late = [s for s, t in self._heads.items() if t < now]
            for s in late:
                del self._heads[s]
        for s in late:
            self._cut(s)

    def _release(self, request) -> None:
        self.head_done(request)
        self._slots.release()

    def _cut_oldest_head(self) -> None:
        with self._heads_lock:
            oldest = next(iter(self._heads), None)
            if oldest is not None:
                del self._heads[oldest]
        if oldest is not None:
            self._cut(oldest)

    @staticmethod
    def _cut(sock) -> None:
        try:
            sock.shutdown(socket.SHUT_RDWR)  # its thread's read returns: the handler ends, the slot is freed
        except OSError:
            pass

    def _busy(self, request) -> None:
        try:
            request.setblocking(False)
            request.sendall(_BUSY)
        except OSError:
            pass
        self.shutdown_request(request)


def make_server(app, host: str, port: int) -> tuple[_Server, threading.Thread]:
    handler = type("BoundHandler", (Handler,), {"app": app})
    httpd = _Server((host, port), handler)
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.25}, name="guardian-dashboard",
                         daemon=True)
    return httpd, t

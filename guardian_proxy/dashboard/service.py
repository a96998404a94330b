"""`Dashboard`: what `guardian-proxy run` starts beside the proxy (see server.py for the routes).

    dash = Dashboard(gateway.settings, port=8081, proxy=("127.0.0.1", 8080), mode=None,
                     run_options={"ssl_insecure": False, "redirect_upstream": None, "ca": "/path/ca.pem"})
    if dash.start(): print(dash.url)          # a busy port: start() is False and dash.error says why
    dash.publish(raw_request, decision)       # per decision, from any thread; never raises
    dash.stop()

The token is the state dir's (security.TokenFile): the same address works after a restart. The configuration
view's "run" options (--ssl-insecure, --redirect-upstream, the CA path, the confdir) are those given in
`run_options`, completed from `<state_dir>/runtime.json` (written by the running proxy) for any not given.

A fleet (state.backend redis): the view is every gateway's. The hub is seeded from the shared decision feed
(guardian_proxy/state/decisions.py; the local log when Redis does not answer), and one background thread polls
the feed (XREAD BLOCK, under state.timeout_s a call) for the other gateways' decisions; this gateway's own come
through `publish`, with their detail, as before. A Redis that is down only pauses the others' decisions (one
warning a minute); a request handler never waits on Redis.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from ..config import Settings
from ..errors import ConfigError
from ..overrides import DashboardOverrides
from ..state import StateUnavailable, gateway_id, uses_redis
from ..types import Decision, RawRequest
from .hub import Hub, tail_records
from .security import Guard, stable_token
from .server import STATIC_DIR, make_server

log = logging.getLogger("guardian_proxy.dashboard")
HOST = "127.0.0.1"
SECRET_SETTINGS = ("proxyauth", "log_salt")
#: the `run` flags the configuration view shows, in this order (from run_options, else runtime.json)
RUN_OPTIONS = ("ssl_insecure", "redirect_upstream", "ca", "confdir", "listen", "pid", "version")
STATUS_TTL_S = 60.0
FEED_WARN_EVERY_S = 60.0


def pac_text(proxy_host: str, proxy_port: int) -> str:
    """Everything but loopback and plain host names through the proxy; no DIRECT fallback (fail closed)."""
    if proxy_host in ("0.0.0.0", "::", ""):
        proxy_host = "127.0.0.1"
    addr = f"[{proxy_host}]" if ":" in proxy_host else proxy_host
    return (
        "// guardian-proxy: proxy auto-config\n"
        "function FindProxyForURL(url, host) {\n"
        "  if (isPlainHostName(host) || host === \"localhost\" || shExpMatch(host, \"127.*\") ||\n"
        "      host === \"::1\" || host === \"[::1]\") {\n"
        "    return \"DIRECT\";\n"
        "  }\n"
        f"  return \"PROXY {addr}:{proxy_port}\";\n"
        "}\n"
    )


class Dashboard:
    def __init__(self, settings: Settings, port: int = 8081, proxy: tuple[str, int] | None = None,
                 mode: str | None = None, token: str | None = None, overrides=None, run_options: dict | None = None):
        self.settings = settings
        self.port = port
        self.proxy = proxy or (settings.host, settings.port)
        self.mode = mode or "regular"
        self.run_options = dict(run_options or {})
        self.token_file = None
        if token is None:
            token, self.token_file = stable_token(settings.state_dir)
        self.guard = Guard(port, token, self.token_file)
        self.fleet = uses_redis(settings)  # the decisions of every gateway sharing the Redis store
        self.gateway = gateway_id(settings) if self.fleet else None
        self.hub = Hub(gateway=self.gateway)
        self._feed = None
        self._poller: threading.Thread | None = None
        self._stop_poll = threading.Event()
        self.overrides = DashboardOverrides(settings, overrides)  # overrides: the Gateway's store, if given
        self.error: str | None = None
        self.started = time.time()
        self._httpd = None
        self._status: tuple[float, list] | None = None

    # ------------------------------------------------------------------ lifecycle

    @property
    def running(self) -> bool:
        return self._httpd is not None

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def url(self) -> str:
        """The address to open: it carries the dashboard's token (the same across restarts)."""
        return f"{self.base_url}/?token={self.guard.token}"

    @property
    def pac_url(self) -> str:
        return f"{self.base_url}/proxy.pac"

    def start(self) -> bool:
        try:
            httpd, thread = make_server(self, HOST, self.port)
        except OSError as e:
            self.error = f"dashboard not started: {HOST}:{self.port} {e.strerror or e} (use --dashboard-port N, 0 = off)"
            log.warning(self.error)
            return False
        if self.port == 0:  # an OS-chosen port (tests)
            self.port = httpd.server_address[1]
            self.guard = Guard(self.port, self.guard.token, self.token_file)
        last = self._seed()
        self._httpd = httpd
        thread.start()
        if self.fleet and self._feed is not None:
            self._poller = threading.Thread(target=self._poll, args=(last,), name="guardian-dashboard-feed",
                                            daemon=True)
            self._poller.start()
        return True

    def _seed(self) -> str | None:
        """The earlier decisions: the fleet's feed (redis), else this gateway's log. Returns the feed entry the
        poller goes on from (None: not known yet)."""
        if self.fleet:
            try:
                from ..state import open_feed

                self._feed = open_feed(self.settings)
                last = self._feed.last_id()
                self.hub.seed(self._feed.recent(self.hub.recent.maxlen, end=last))
                return last
            except (StateUnavailable, ConfigError) as e:
                log.warning("dashboard: the fleet's decisions are not shown yet (%s); this gateway's log is", e)
        self.hub.seed(tail_records(self.settings.decision_log))
        return None

    def _poll(self, last: str | None) -> None:
        """The other gateways' decisions, as the feed gets them (this gateway's own come through `publish`)."""
        feed, warned = self._feed, None
        while not self._stop_poll.is_set():
            try:
                if last is None:
                    last = feed.last_id()
                last, recs = feed.read_after(last)
            except Exception as e:  # Redis down or slow: wait and retry; never ends the thread
                now = time.monotonic()
                if warned is None or now - warned >= FEED_WARN_EVERY_S:
                    warned = now
                    log.warning("dashboard: the fleet's decisions paused: %s", e)
                self._stop_poll.wait(1.0)
                continue
            for rec in recs:
                if rec.get("gateway") != self.gateway:
                    self.hub.publish_remote(rec)

    def stop(self) -> None:
        self._stop_poll.set()
        if self._poller is not None:
            self._poller.join(timeout=2 * self.settings.state.timeout_s + 1.0)
            self._poller = None
        self.hub.close()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    # ------------------------------------------------------------------ data in

    def publish(self, req: RawRequest, decision: Decision) -> None:
        """Record one decision (log record + log-safe detail). Never raises: the proxy must not care."""
        try:
            from ..decision_log import record
            from .detail import detail_of

            rec = record(req, decision)
            if self.gateway is not None:
                rec["gateway"] = self.gateway
            if decision.six.site and "site" not in rec:  # the page that made the request (the per-site view)
                from ..logmask import mask_host

                rec["site"] = mask_host(decision.six.site)
            self.hub.publish(rec, detail_of(req, decision, rec))
        except Exception:
            log.exception("dashboard: could not publish decision %s", getattr(decision, "id", "?"))

    # ------------------------------------------------------------------ data out

    def proxy_address(self) -> tuple[str, int]:
        """Where the proxy listens. Started on port 0 (the kernel's choice), the port it got is known once it listens:
        from the runtime file this process wrote then."""
        if not self.proxy[1]:
            rt = read_runtime(self.settings.state_dir)
            if rt.get("pid") == os.getpid() and rt.get("listen"):
                host, port = rt["listen"][0]
                self.proxy = (self.proxy[0] if host in ("", "0.0.0.0", "::") else host, int(port))
        return self.proxy

    def pac(self) -> str:
        return pac_text(*self.proxy_address())

    def page(self) -> bytes:
        html = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
        return html.replace("__GUARDIAN_TOKEN__", self.guard.token).encode()

    def model_status(self, refresh: bool = False) -> list[dict]:
        now = time.monotonic()
        if refresh or self._status is None or now - self._status[0] > STATUS_TTL_S:
            from .components import all_status

            self._status = (now, all_status(self.settings))
        return self._status[1]

    def run_view(self) -> dict:
        """How the proxy was started: `run_options`, completed from the runtime file for what they lack
        (None: not known)."""
        runtime = read_runtime(self.settings.state_dir)
        out = {k: self.run_options.get(k, runtime.get(k)) for k in RUN_OPTIONS}
        for k, v in self.run_options.items():
            out.setdefault(k, v)
        if isinstance(out.get("redirect_upstream"), list | tuple):
            host, port = out["redirect_upstream"]
            out["redirect_upstream"] = f"{host}:{port}"
        out = {k: str(v) if k in ("ca", "confdir") and v is not None else v for k, v in out.items()}
        out["given"] = sorted(k for k in out if k in self.run_options or k in runtime)  # the rest: not known
        return out

    def config_view(self) -> dict:
        cfg = self.settings.model_dump(mode="json")
        for k in SECRET_SETTINGS:
            if cfg.get(k):
                cfg[k] = "***"
        return {"settings": cfg, "mode": self.mode, "proxy": "{}:{}".format(*self.proxy_address()), "run": self.run_view(),
                "dashboard": self.base_url, "pac_url": self.pac_url, "decision_log": str(self.settings.decision_log),
                "started": self.started, "models": self.model_status(), "subscribers": self.hub.subscribers,
                "fleet": self.fleet_view()}

    def fleet_view(self) -> dict:
        """Which store the view reads: this gateway alone (local), or a fleet (redis) and this gateway's id."""
        from ..state import where

        return {"backend": self.settings.state.backend, "where": where(self.settings), "gateway": self.gateway}


def read_runtime(state_dir) -> dict:
    """What the running proxy wrote about itself (guardian_proxy/runtime.py), or {} when none runs."""
    from .. import runtime

    return runtime.read(state_dir) or {}

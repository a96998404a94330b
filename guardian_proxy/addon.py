"""The mitmproxy addon: the ONLY module that imports mitmproxy.

It turns a flow into a RawRequest, runs `Gateway.evaluate` off the event loop (a thread pool sized
to the cores), stores the decision in `flow.metadata["guardian"]` and applies it:
allow → untouched; transform → body/URL/cookies rewritten in their own encoding; deny → the
request never leaves and the client gets an answer by what sent it (`block_kind`): the 403 page for a
navigation, a silent 204 or pixel for beacons and tracker calls, a readable JSON 403 for other fetches.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mitmproxy import ctx, exceptions, http
from mitmproxy.net.http import url as mitm_url
from mitmproxy.proxy import server_hooks

from . import codec, console
from .config import LimitSettings
from .connections import ConnectionGuard
from .domains import is_ip, split_hostport
from .errors import BodyTooLarge, GuardianError
from .failure import Ticket
from .pipeline import Gateway
from .procinfo import META as APP_META
from .procinfo import AppLookup
from .response_bodies import Held, Tee
from .types import TRACKER_CLASSES, Decision, RawRequest

log = logging.getLogger("guardian_proxy")

MAX_POLICY_PAGE_BYTES = 4 * 1024 * 1024  # wire bytes of a privacy-policy page the proxy will learn from


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
    client = None
    if flow.client_conn and flow.client_conn.peername:
        client = str(flow.client_conn.peername[0])
    host, claimed = destination(flow)
    dns = flow.metadata.get("guardian_dns")  # the proxy's own DNS answer (guardian_proxy/dns_answer.py)
    canonical = dns.get("canonical") if dns and dns.get("host") == (host or "").lower().rstrip(".") else None
    return RawRequest(method=r.method, url=real_url(flow, host), headers=[(k, v) for k, v in r.headers.items(multi=True)],
                      body=r.raw_content or b"", client=client, claimed_host=claimed, canonical_host=canonical,
                      app=flow.metadata.get(APP_META))  # the program that sent it (procinfo.AppLookup)


def never_empty(stream):
    """mitmproxy sends whatever a stream callable returns as one HTTP/1 chunk, and an empty chunk is the
    chunked-encoding terminator: a callable that holds a whole input chunk back (a surrogate or a tool call
    not yet complete) must return no chunk at all, not b"" — else the client sees the response end early
    and reads the rest as garbage on its keep-alive connection."""

    def call(data: bytes):
        out = stream(data)
        return out if out else []

    return call


_STREAM_TYPES = ("text/event-stream", "application/x-ndjson", "application/ndjson", "application/jsonl",
                 "application/vnd.amazon.eventstream", "application/grpc", "multipart/x-mixed-replace")
#: the handshake headers a WebSocket message's evaluation sees (who sent it; never cookies or credentials)
_WS_HEADERS = frozenset({"host", "origin", "user-agent", "referer", "sec-fetch-site", "sec-fetch-mode",
                         "sec-fetch-dest"})
WS_KEEP = 16  # WebSocket messages kept per flow (mitmproxy otherwise keeps all until the connection closes)


def is_stream(content_type: str | None) -> bool:
    return (content_type or "").lower().strip().startswith(_STREAM_TYPES)


def wants_html(flow: http.HTTPFlow) -> bool:
    accept = flow.request.headers.get("accept", "")
    return "text/html" in accept and "application/json" not in accept


#: a transparent 1×1 GIF: what a blocked tracking pixel gets, so its onload fires and nothing retries
PIXEL_GIF = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")


def block_kind(flow: http.HTTPFlow, decision: Decision) -> str:
    """How a blocked request is answered, by what sent it (stated in the README, "Blocked requests"):

    page      a navigation (or a non-browser client asking for HTML): the 403 explanation page
    pixel     an image request to a tracker or in the background: 200 with a 1×1 GIF
    silent    a browser's beacon, ping or tracker call (sendBeacon, or a fetch/XHR to an analytics, ad, broker or
              social host, or any background request): 204 with CORS headers — a browser SDK that gets a network
              error (a 403 without CORS headers) retries, one that gets a 2xx does not, and nothing left the machine
    explain   any other fetch/XHR, and every non-browser client (SDKs, agents, curl): 403 with a JSON explanation,
              readable by a page (CORS headers); server-side SDKs do not retry a 4xx"""
    h = flow.request.headers
    mode, dest = h.get("sec-fetch-mode", "").lower(), h.get("sec-fetch-dest", "").lower()
    if mode == "navigate" or (not mode and wants_html(flow)):
        return "page"
    if not (mode or dest or h.get("origin") or h.get("ping-from")):
        return "explain"  # not a browser
    quiet = decision.six.recipient in TRACKER_CLASSES or decision.six.basis == "background"
    if dest == "image" and quiet:
        return "pixel"
    if quiet or dest == "report" or h.get("ping-from") or h.get("ping-to"):
        return "silent"
    return "explain"


def _cors(flow: http.HTTPFlow) -> dict[str, str]:
    origin = flow.request.headers.get("origin")
    if not origin:
        return {}
    return {"access-control-allow-origin": origin, "access-control-allow-credentials": "true",
            "access-control-expose-headers": "x-guardian-decision", "vary": "Origin"}


def is_preflight(flow: http.HTTPFlow) -> bool:
    """A browser's CORS preflight: OPTIONS with an Origin and Access-Control-Request-Method."""
    h = flow.request.headers
    return flow.request.method.upper() == "OPTIONS" and bool(h.get("origin")) and \
        bool(h.get("access-control-request-method"))


_TOKENS = (r"[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:\s*,\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*")  # HTTP tokens, comma-separated


def _preflight_grant(flow: http.HTTPFlow) -> dict[str, str]:
    """What the preflight asked for (its method and headers, when they are plain tokens), granted for its origin
    only and never cached (`max-age: 0`): the grant stands for the proxy's own answer to the call that follows."""
    import re

    h = flow.request.headers
    method = h.get("access-control-request-method", "").strip()
    asked = h.get("access-control-request-headers", "").strip()
    grant = {**_cors(flow), "access-control-max-age": "0", "vary": "Origin, Access-Control-Request-Method, "
             "Access-Control-Request-Headers"}
    if re.fullmatch(_TOKENS, method):
        grant["access-control-allow-methods"] = method
    if asked and re.fullmatch(_TOKENS, asked):
        grant["access-control-allow-headers"] = asked
    return grant


def explained(decision: Decision, reason: str) -> str:
    """The JSON 403's `reason`: what was stopped in words first, as the block page says it (guardian_proxy/
    dashboard/wording.py `of_decision`, values masked), then the explanation; the explanation alone when the
    words cannot be made."""
    from .dashboard.wording import of_decision
    from .logmask import mask

    try:
        words, _ = of_decision(decision)
    except Exception:  # the words must never cost the block itself
        log.exception("blocked answer: could not word the reason")
        return reason
    return f"{mask(words)} Why: {reason}" if words else reason


def blocked_response(decision: Decision, flow: http.HTTPFlow, dashboard=None) -> http.Response:
    """The answer to a blocked request, by `block_kind`. The page (kind "page") links to the decision on the
    running dashboard and offers "Allow once" / "for 1 hour" / "always" buttons (guardian_proxy/dashboard/
    block_actions.py); `dashboard` defaults to the running GuardianAddon's, none: the page without them.

    A browser's CORS preflight for a call that is blocked (a user's deny rule on the destination) is answered here
    with what it asked for (kind "preflight", 204): without the grant the browser fails the call with a network
    error, which SDKs retry; with it the call itself comes to the proxy and gets its own answer (the silent 204,
    or the readable JSON 403). Nothing reaches the destination either way."""
    reason = decision.explanation or "blocked by policy"
    kind = block_kind(flow, decision)
    if kind in ("silent", "explain") and is_preflight(flow):
        head = {"x-guardian-decision": decision.id, "x-guardian-blocked": "preflight", "cache-control": "no-store"}
        return http.Response.make(204, b"", {**head, **_preflight_grant(flow)})
    head = {"x-guardian-decision": decision.id, "x-guardian-blocked": kind, "cache-control": "no-store"}
    if kind == "pixel":
        return http.Response.make(200, PIXEL_GIF, {**head, **_cors(flow), "content-type": "image/gif"})
    if kind == "silent":
        return http.Response.make(204, b"", {**head, **_cors(flow)})
    if kind == "page":
        from .dashboard.block_actions import page

        if dashboard is None:
            try:
                dashboard = getattr(ctx.master.addons.get("guardianaddon"), "dashboard", None)
            except Exception:  # no master (a unit test), or no guardian addon: no dashboard to point at
                dashboard = None
        try:
            body, extra = page(decision, real_url(flow), flow.request.headers, dashboard)
        except Exception:  # the buttons must never cost the block itself
            log.exception("block page: could not add the dashboard's actions")
            body, extra = page(decision, real_url(flow), flow.request.headers, None)
        return http.Response.make(403, body, {**head, **extra, "content-type": "text/html; charset=utf-8"})
    body = json.dumps({"error": "blocked_by_guardian_proxy", "decision_id": decision.id,
                       "host": decision.six.host, "reason": explained(decision, reason)}).encode()
    return http.Response.make(403, body, {**head, **_cors(flow), "content-type": "application/json"})


def apply_decision(flow: http.HTTPFlow, decision: Decision) -> None:
    if decision.action == "deny":
        flow.response = blocked_response(decision, flow)
        return
    if decision.action != "transform" or decision.rewrite is None:
        return
    rw = decision.rewrite
    req = flow.request
    if rw.url:
        req.url = rw.url
    for name in rw.remove_headers:
        req.headers.pop(name, None)
    for name, value in rw.set_headers.items():
        req.headers[name] = value
    if rw.body is not None:
        req.raw_content = rw.body  # already encoded as sent (Content-Encoding, or a sniffed compression)
        if "transfer-encoding" not in req.headers:
            req.headers["content-length"] = str(len(rw.body))


BIG_BODY_BYTES = 16 * 1024  # bodies above this are evaluated on their own pool (see GuardianAddon.__init__)


class UpstreamRedirect:
    """--redirect-upstream: the request (not only its connection) goes to one address, so mitmproxy reuses
    the upstream keep-alive connection (rewriting just the address in `server_connect` opened a new
    connection per request, and the sixth on one client connection stalled). The Host header and HTTP/2
    authority keep the original name; `server_connect` puts it back into the TLS SNI. Also used by
    scripts/redirect_upstream.py for the bare-mitmdump baseline of the benchmark."""

    def __init__(self, address: tuple[str, int]):
        self.address = address
        self._sni: dict[str, str] = {}  # client connection id → the host it asked for

    def request(self, flow: http.HTTPFlow) -> None:
        r = flow.request
        host_header, authority = r.headers.get("host"), r.authority
        self._sni[flow.client_conn.id] = r.host
        r.host, r.port = self.address  # the setters rewrite Host and authority: put them back
        if host_header is not None:
            r.headers["host"] = host_header
        r.authority = authority

    def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        data.server.address = self.address
        if data.server.tls and data.client.id in self._sni:
            data.server.sni = self._sni[data.client.id]

    def client_disconnected(self, client) -> None:
        self._sni.pop(client.id, None)


READY_WAIT_S = 300.0  # how long a request may wait for the gateway of an addon loaded by mitmproxy (then 503)


class GuardianOptionsError(exceptions.OptionsError):
    """A guardian option (or a mitmproxy option the guardian needs: listen address, connection strategy) that
    cannot be used; the message names the option and the fix, in one line."""


class _OneLine(logging.Filter):
    """mitmproxy logs an addon's OptionsError at script load as "error in script …" with a traceback; a
    GuardianOptionsError is said in one line instead (the message is the whole story)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, GuardianOptionsError):
            record.msg, record.args, record.exc_info, record.exc_text = "guardian-proxy cannot start: %s", (str(exc),), \
                None, None
        return True


def _one_line_option_errors() -> None:
    script_log = logging.getLogger("mitmproxy.addons.script")
    if not any(isinstance(f, _OneLine) for f in script_log.filters):
        script_log.addFilter(_OneLine())


def _close_built(built) -> None:
    if built.processes is not None:
        built.processes.close()
    if built.dashboard is not None:
        built.dashboard.stop()


class GuardianAddon:
    """The addon. `guardian-proxy run` builds the gateway itself (early errors, the banner) and hands it in; loaded
    by mitmproxy (`mitmdump -s`/`mitmweb -s`, guardian_proxy/mitmproxy_addon.py) it has none and builds one from
    its `guardian_*` options when mitmproxy is running (`running`, in a thread: the event loop keeps serving), every
    `--set` applied by then. Until it has one, a request waits for it (at most `READY_WAIT_S`, then 503), never
    passes undecided. Whatever would let a request out unguarded stops mitmproxy at start-up with one line saying
    what to fix: a `guardian_*` value that is not valid, an address beyond loopback without `guardian_allow_remote`
    and `proxyauth`, a gateway that cannot be built. Upstream connections are lazy in every launcher (a blocked
    request never opens one)."""

    def __init__(self, gateway: Gateway | None = None, redirect_upstream: tuple[str, int] | None = None,
                 workers: int | None = None, eval_timeout_s: float = 60.0, dashboard=None, processes=None):
        self.gateway = gateway
        # evaluation in worker processes (guardian_proxy/workers.py WorkerPool), or None: in this process's threads
        self.processes = processes
        self.standalone = gateway is None  # loaded by mitmproxy itself: options build the gateway
        self.dashboard = dashboard  # guardian_proxy.dashboard.Dashboard or None
        # one thread of its own: decisions reach the dashboard in order and never wait behind evaluations
        self.dash_pool = ThreadPoolExecutor(1, thread_name_prefix="guardian-dash") if dashboard is not None else None
        self.redirect = UpstreamRedirect(redirect_upstream) if redirect_upstream is not None else None
        self.eval_timeout_s = eval_timeout_s
        n = workers or max(2, os.cpu_count() or 2)
        # two pools sized to the cores: large bodies (seconds of NER and rewriting for 100 KB of text) never
        # occupy the workers that small requests need, so a few slow requests cannot stall the rest
        self.pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="guardian")
        self.big_pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="guardian-big")
        self.learn_pool: ThreadPoolExecutor | None = None  # learning policies while browsing (response hook)
        self._learn_queued = 0
        # bounds on responses (what a stage may hold, how far a chat answer may decompress)
        self.limits = getattr(getattr(gateway, "settings", None), "limits", None) or LimitSettings()
        self._ws_demask: dict[str, object] = {}  # flow id → the de-masker of a chat WebSocket's server messages
        self._refused: set[str] = set()  # client connection ids of raw TCP/UDP connections that were blocked
        # loaded by mitmproxy (standalone): why it cannot start (then nothing passes), the gateway being built
        self.fatal: str | None = None
        self._bad_values: dict[str, str] = {}  # guardian_* options whose `--set` value is not valid → why
        self._running = False
        self._ready: asyncio.Event | None = None  # set once the gateway is built or cannot be
        self._build_lock = threading.Lock()
        self._closed = False
        self._orphan = None  # a gateway built after `done`: closed by whichever of the two comes last

    # ------------------------------------------------------------------ mitmproxy options (load, configure)

    def load(self, loader) -> None:
        """The guardian's mitmproxy options: `--set guardian_…=…` for mitmdump/mitmweb and for
        `guardian-proxy run` alike (which also has its own flags for them)."""
        loader.add_option("guardian_config", str | None, None, "guardian-proxy settings file (YAML).")
        loader.add_option("guardian_state_dir", str | None, None,
                          "State directory: decision log, vault, overrides, learned policies "
                          "(default $GUARDIAN_STATE_DIR or ~/.local/state/guardian-proxy).")
        loader.add_option("guardian_log", str | None, None, "Decision log file (default <state dir>/decisions.jsonl).")
        loader.add_option("guardian_dashboard_port", int, 8081, "Live dashboard on 127.0.0.1:N (0: off).")
        loader.add_option("guardian_redirect_upstream", str | None, None,
                          "Send every request to HOST:PORT, keeping its Host and SNI (tests, benchmarks).")
        loader.add_option("guardian_workers", int | None, None,
                          "Evaluation worker processes (default: the settings' `workers`, one per core; "
                          "0: in threads of this process).")
        loader.add_option("guardian_allow_remote", bool, False,
                          "Listen beyond loopback (needs proxyauth; WireGuard peers authenticate with their keys).")
        if self.standalone:
            _one_line_option_errors()
            self._take_bad_values(loader.master.options)

    def _take_bad_values(self, options) -> None:
        """mitmproxy converts a deferred `--set guardian_…=…` right after `load`, and a value it cannot convert
        (`guardian_workers=abc`) aborts loading the script there, silently: mitmproxy would run without the guardian
        and forward every request undecided. Such a value is taken out of the deferred ones here, kept, and said by
        `configure` (OptionsError), which stops mitmproxy at start-up."""
        from .standalone import option_problem

        deferred = getattr(options, "deferred", None)
        if not isinstance(deferred, dict):
            return
        for name in [k for k in deferred if str(k).startswith("guardian_")]:
            value = deferred[name]
            why = option_problem(name, getattr(value, "val", value))
            if why:
                self._bad_values[name] = why
                del deferred[name]

    def configure(self, updated: set[str]) -> None:
        """Options are read once: the redirect whenever it changes; the rest build the gateway in `running`
        (standalone) and cannot change afterwards (a new state dir mid-run would split the log and the vault).
        A bad value is an OptionsError naming the option: at start-up it stops mitmproxy (one line, see
        `_one_line_option_errors`) and nothing passes meanwhile; later mitmproxy keeps the old value."""
        try:
            self._configure(updated)
        except exceptions.OptionsError as e:
            if self.standalone and not self._running and self.gateway is None:
                self._fail(str(e), log_it=False)  # mitmproxy logs it (one line) and exits at its start-up check
            raise

    def _configure(self, updated: set[str]) -> None:
        o = ctx.options
        if "connection_strategy" in updated and o.connection_strategy != "lazy":
            # eager opens the upstream connection (the tracker sees the user's address and the host name) before the
            # request is decided; at start-up it is switched, later a change is refused
            if self._running:
                raise GuardianOptionsError("connection_strategy=eager: guardian-proxy decides a request before its "
                                           "upstream connection opens, it needs connection_strategy=lazy")
            o.update(connection_strategy="lazy")
            log.info("guardian-proxy: connection_strategy=lazy (a request is decided before its upstream connection "
                     "opens)")
        if self.standalone and {"listen_host", "listen_port", "mode", "proxyauth", "guardian_allow_remote"} & updated:
            from .standalone import listen_rule

            host, problem = listen_rule(o.mode, o.listen_host, o.listen_port, o.guardian_allow_remote,
                                        getattr(o, "proxyauth", None) or None)
            if problem:
                raise GuardianOptionsError(problem)
            if host is not None:
                if self._running:  # mitmproxy's default is every interface; it is not put back while running
                    raise GuardianOptionsError("refusing to listen on every interface: that needs "
                                               "--set guardian_allow_remote=true and --proxyauth USER:PASS")
                o.update(listen_host=host)
                log.info("guardian-proxy: listening on loopback only (%s); beyond it needs --set "
                         "guardian_allow_remote=true and --proxyauth USER:PASS", host)
        bad = [why for name, why in self._bad_values.items() if name in updated]
        if bad:
            raise GuardianOptionsError(bad[0])
        if self.standalone:
            from .standalone import option_problem

            for name in sorted({"guardian_dashboard_port", "guardian_workers", "guardian_allow_remote"} & updated):
                why = option_problem(name, getattr(o, name))
                if why:
                    raise GuardianOptionsError(why)
        if "guardian_redirect_upstream" in updated and self.standalone:
            value = ctx.options.guardian_redirect_upstream
            try:
                self.redirect = UpstreamRedirect(split_hostport(value)) if value else None
            except ValueError as e:
                raise GuardianOptionsError(f"guardian_redirect_upstream: {e}") from None
        fixed = {"guardian_config", "guardian_state_dir", "guardian_log", "guardian_dashboard_port",
                 "guardian_workers", "guardian_allow_remote"} & updated
        if fixed and self.standalone and self.gateway is not None:
            raise GuardianOptionsError(f"{', '.join(sorted(fixed))} cannot change while the proxy runs; restart it")

    def running(self):
        """Standalone: the gateway is built in a thread (models load for seconds) while mitmproxy serves; requests
        wait for it (`_until_ready`). mitmproxy awaits the returned task at start-up, so a failure is one error
        line and mitmproxy's start-up check exits with status 1."""
        self._running = True
        if not self.standalone or self.gateway is not None or self._ready is not None and self._ready.is_set():
            return None
        if self.fatal:
            self._fail(self.fatal)
            return None
        o = ctx.options
        from .standalone import bound_problem

        bound = [(str(a[0]), int(a[1])) for a in ctx.master.addons.get("proxyserver").listen_addrs()]
        problem = bound_problem(bound, o.guardian_allow_remote, getattr(o, "proxyauth", None) or None,
                                any(str(m).startswith("wireguard") for m in o.mode))
        if problem:
            self._fail(f"guardian-proxy cannot start: {problem}")
            return None
        return asyncio.get_running_loop().create_task(self._start(bound))

    async def _start(self, bound: list[tuple[str, int]]) -> None:
        o = ctx.options
        spec = o.mode[0] if o.mode else None
        port = bound[0][1] if bound else o.listen_port  # `-p 0`: the port really bound
        args = (o.guardian_config, o.guardian_state_dir, o.guardian_log, o.guardian_dashboard_port,
                (o.listen_host or "127.0.0.1", port), spec)
        building = asyncio.ensure_future(asyncio.to_thread(self._build, args, o.guardian_workers))
        stopping = getattr(ctx.master, "should_exit", None)  # Ctrl-C while the models load: stop waiting for them
        if stopping is not None:
            stop = asyncio.ensure_future(stopping.wait())
            await asyncio.wait({building, stop}, return_when=asyncio.FIRST_COMPLETED)
            stop.cancel()
            if not building.done():  # `done` follows; `_build` closes what it built; waiting requests get 503
                building.add_done_callback(lambda f: f.cancelled() or f.exception())
                self.fatal = self.fatal or "guardian-proxy is stopping"
                self._ready_event().set()
                return
        try:
            built = await building
        except GuardianError as e:
            self._fail(f"guardian-proxy cannot start: {e}")
            return
        except Exception as e:  # a bug, not the user's: still one line, and nothing passes
            self._fail(f"guardian-proxy cannot start: {type(e).__name__} while loading the models")
            return
        if built is None:  # mitmproxy stopped meanwhile
            return
        self.gateway, self.dashboard, self.processes = built.gateway, built.dashboard, built.processes
        self.eval_timeout_s = self.gateway.settings.limits.eval_timeout_s
        self.limits = self.gateway.settings.limits
        if self.dashboard is not None:
            self.dash_pool = ThreadPoolExecutor(1, thread_name_prefix="guardian-dash")
        from . import runtime

        runtime.note(self.redirect.address if self.redirect is not None else None)
        runtime.write(self.gateway.settings.state_dir, runtime.info(
            bound, spec or "regular", self.dashboard.url if self.dashboard is not None else None, o.confdir,
            ca_cert_path(o.confdir)))
        self._ready_event().set()
        log.warning("guardian-proxy: deciding every request; decision log %s%s", self.gateway.settings.decision_log,
                    f"; dashboard {self.dashboard.url}" if self.dashboard is not None else "")

    def _build(self, args: tuple, workers: int | None):
        """In a thread: settings, checks, models, the dashboard (standalone.build); None when mitmproxy stopped
        meanwhile (what was built is closed)."""
        from .standalone import build

        built = build(*args, workers=workers)
        with self._build_lock:
            if not self._closed:
                return built
        _close_built(built)
        return None

    def _ready_event(self) -> asyncio.Event:
        if self._ready is None:
            self._ready = asyncio.Event()
        return self._ready

    def _fail(self, why: str, log_it: bool = True) -> None:
        """Standalone: the guardian cannot start. Nothing passes (waiting requests get 503) and mitmproxy stops."""
        self.fatal = self.fatal or why
        if self._ready is not None:
            self._ready.set()
        if log_it:
            log.error("%s", why)
        if self._running:
            try:
                ctx.master.shutdown()
            except Exception:  # no master (a unit test)
                pass

    async def _until_ready(self) -> bool:
        """Standalone, before the gateway is built: wait for it (at most READY_WAIT_S); False when it cannot be."""
        if self.gateway is not None:
            return True
        if self.fatal or not self.standalone:
            return False
        try:
            await asyncio.wait_for(self._ready_event().wait(), READY_WAIT_S)
        except TimeoutError:
            return False
        return self.gateway is not None

    async def request(self, flow: http.HTTPFlow) -> None:
        if flow.response or flow.error:
            return
        if self.gateway is None and not await self._until_ready():  # nothing passes undecided
            flow.response = http.Response.make(503, b"guardian-proxy is not ready: no request passes undecided\n",
                                               {"content-type": "text/plain; charset=utf-8", "retry-after": "5"})
            return
        raw = to_raw(flow)
        decision = await self._evaluate(raw, inline=True)
        flow.metadata["guardian"] = {"id": decision.id, "action": decision.action,
                                     "R": decision.risk.R if decision.risk else None,
                                     "explanation": decision.explanation,
                                     "session": decision.extra.get("session"), "chat_api": decision.extra.get("chat_api")}
        apply_decision(flow, decision)
        console.mark(flow, raw, decision)  # mitmweb's flow list: comment, marker, a block's reason phrase
        console.say(raw, decision, flow.client_conn.peername if flow.client_conn else None, self.standalone)
        if self.redirect is not None and flow.response is None:
            flow.metadata["guardian_url"] = raw.url
            self.redirect.request(flow)
        self._publish(raw, decision)

    async def _evaluate(self, raw: RawRequest, inline: bool = False, log: bool = True) -> Decision:
        """The decision for a request (or one WebSocket message). With `inline`, a request with no body, query,
        cookie or personal path is decided on the event loop (no thread hop); otherwise the CPU-bound stages run
        in the pool (large bodies on their own); past the deadline, or on a bug outside the stages, the fail
        rules apply (failure.py)."""
        ticket = Ticket()
        try:
            decision = self.gateway.evaluate_inline(raw, ticket) if inline else None
            if decision is None and self.processes is not None:
                fut = asyncio.wrap_future(self.processes.submit(raw))
                decision, kept = await asyncio.wait_for(fut, self.eval_timeout_s)
                if kept is not None and self.gateway.agents is not None:  # the reply's guard needs it here
                    self.gateway.agents.keep(decision.id, kept)
                if log:  # this process writes every line: a worker that dies can neither lose nor repeat one
                    decision = self.gateway.write_log(raw, decision, ticket)
            elif decision is None:
                pool = self.big_pool if len(raw.body) > BIG_BODY_BYTES else self.pool
                fut = asyncio.get_running_loop().run_in_executor(
                    pool, functools.partial(self.gateway.evaluate, raw, ticket=ticket, log=log))
                decision = await asyncio.wait_for(fut, self.eval_timeout_s)
        except Exception as e:
            decision = self.gateway.failure_decision(raw, e, ticket)
        return decision

    def _publish(self, raw: RawRequest, decision: Decision) -> None:
        """The decision to the dashboard, on its own thread (in order, never waiting behind evaluations)."""
        if self.dash_pool is not None:
            try:
                self.dash_pool.submit(self.dashboard.publish, raw, decision)
            except RuntimeError:  # shutting down
                pass

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        """Every response passes chunk by chunk as it arrives (never buffered whole), except the ones a stage
        reads, which are held within `limits.max_inspected_response_bytes` (README "Under load, faults and
        attack"):

        - a chat stream of a session passes through stage 7's de-masking callable; it decodes a compressed
          stream (bounded, session/stream.py), so the client gets it uncompressed;
        - a session's whole chat answer is de-masked once complete: with a Content-Length within the bound
          mitmproxy holds it and `response` de-masks it in the pool; without one `Held` holds it up to the bound
          and de-masks it at its end (on the event loop: the bound keeps that short); over the bound it passes as
          it comes, not de-masked (one log line);
        - a privacy-policy page streams too, and `Tee` keeps a copy up to the bound for learning;
        - everything else (SSE, downloads, pages, media, however large) streams untouched."""
        g = flow.metadata.get("guardian") or {}
        if flow.response is None or flow.response.stream:
            return
        if not g.get("session"):
            flow.response.stream = self._policy_tee(flow) or True
            return
        h = flow.response.headers
        try:
            stream = self.gateway.chat_stream(g, h.get("content-type"), h.get("content-encoding"))
        except Exception as e:
            log.warning("guardian: chat stream of %s left as is (%s)", flow.request.host, type(e).__name__)
            stream = None
        if stream is None:
            if is_stream(h.get("content-type")):
                flow.response.stream = True  # a stream the session cannot read passes as it comes
            else:
                self._hold_chat_answer(flow, g)
            return
        if stream.decodes:
            h.pop("content-encoding", None)
        self._unsized(flow)
        flow.response.stream = never_empty(stream)

    @staticmethod
    def _unsized(flow: http.HTTPFlow) -> None:
        """A body whose length changes on its way: no Content-Length, chunked to an HTTP/1 client."""
        h = flow.response.headers
        h.pop("content-length", None)
        if flow.request.http_version.startswith("HTTP/1") and "chunked" not in h.get("transfer-encoding", "").lower():
            h["transfer-encoding"] = "chunked"

    @staticmethod
    def _length(flow: http.HTTPFlow) -> int | None:
        try:
            n = int(flow.response.headers.get("content-length", ""))
        except ValueError:
            return None
        return n if n >= 0 else None

    def _hold_chat_answer(self, flow: http.HTTPFlow, g: dict) -> None:
        """A session's whole (non-streamed) chat answer, held within the bound for de-masking (see
        `responseheaders`)."""
        limit = self.limits.max_inspected_response_bytes
        n = self._length(flow)
        if flow.request.method == "HEAD" or flow.response.status_code in (204, 304) or (n is not None and n <= limit):
            return  # mitmproxy holds it (at most `limit` bytes); `response` de-masks it in the pool
        host = flow.request.host

        def over() -> None:
            log.warning("guardian: chat response of %s passed without de-masking: over the %d-byte bound", host, limit)

        if n is not None:
            over()
            flow.response.stream = True
            return
        headers = flow.response.headers.copy()
        self._unsized(flow)
        flow.response.stream = Held(limit, lambda body: self._demasked_wire(g, headers, body, host), over)

    def _policy_tee(self, flow: http.HTTPFlow) -> Tee | None:
        """A privacy-policy page (stage 2 learns from it): streamed, with a copy of at most the bound kept for
        learning once it has ended; None for any other response."""
        r, resp = flow.request, flow.response
        if r.method != "GET" or resp.status_code != 200:
            return None
        wants = getattr(self.gateway, "wants_policy", None)
        url, ctype = flow.metadata.get("guardian_url") or real_url(flow), resp.headers.get("content-type", "")
        try:
            if wants is None or not wants(url, ctype):
                return None
        except Exception:
            return None
        limit, host, encoding = self.limits.max_inspected_response_bytes, r.host, resp.headers.get("content-encoding")

        def over() -> None:
            log.info("guardian: policy page on %s not learned: over the %d-byte cap", host, limit)

        n = self._length(flow)
        if n is not None and n > limit:
            over()
            return None
        return Tee(limit, lambda raw: self._queue_learn(url, ctype, encoding, raw), over)

    # ------------------------------------------------------------------ WebSockets

    def _ws_raw(self, flow: http.HTTPFlow, content: bytes, is_text: bool) -> RawRequest:
        """One client→server message as the pipeline sees it: the handshake's URL, the headers that say who
        sent it (never its cookies or credentials: the handshake was decided with those), the message as body."""
        r = flow.request
        keep = [(k, v) for k, v in r.headers.items(multi=True) if k.lower() in _WS_HEADERS]
        ctype = ("application/json" if content.lstrip()[:1] in (b"{", b"[") else "text/plain; charset=utf-8") \
            if is_text else "application/octet-stream"
        client = str(flow.client_conn.peername[0]) if flow.client_conn and flow.client_conn.peername else None
        return RawRequest(method="POST", url=real_url(flow), headers=keep + [("content-type", ctype)], body=content,
                          client=client, websocket=flow.id, app=flow.metadata.get(APP_META))

    async def websocket_message(self, flow: http.HTTPFlow) -> None:
        """Client→server messages are decided like request bodies (the conversation stage for chat dialects);
        a blocked one is dropped. Server→client messages of a chat are de-masked, text held back across two
        messages included (flushed as extra messages injected right after). mitmproxy keeps every message
        until the connection closes: only the last `WS_KEEP` stay."""
        ws = flow.websocket
        if ws is None or not ws.messages:
            return
        msg = ws.messages[-1]
        try:
            if msg.injected:
                return
            if msg.from_client:
                await self._ws_client(flow, msg)
            else:
                self._ws_server(flow, msg)
        except Exception as e:  # never break the connection; a client message that was not decided is dropped
            log.warning("guardian: WebSocket message on %s (%s)", flow.request.host, type(e).__name__)
            if msg.from_client:
                msg.drop()
        finally:
            if len(ws.messages) > WS_KEEP:
                del ws.messages[:-WS_KEEP]

    async def _ws_client(self, flow: http.HTTPFlow, msg) -> None:
        raw = self._ws_raw(flow, msg.content, msg.is_text)
        decision = await self._evaluate(raw)
        if decision.action == "deny":
            msg.drop()
        elif decision.action == "transform" and decision.rewrite is not None and decision.rewrite.body is not None:
            msg.content = decision.rewrite.body
        sid = decision.extra.get("session")
        if sid:
            meta = {"session": sid, "chat_api": decision.extra.get("chat_api")}
            fresh = self.gateway.chat_ws(meta)
            old = self._ws_demask.get(flow.id)
            if old is not None and fresh is not None and old.kind == fresh.kind:
                old.dm = fresh.dm  # the session's new mappings; channels still open keep their held text
            elif fresh is not None:
                self._ws_demask[flow.id] = fresh
        self._publish(raw, decision)

    def _ws_server(self, flow: http.HTTPFlow, msg) -> None:
        sd = self._ws_demask.get(flow.id)
        if sd is None or not msg.is_text:
            return
        out = sd.message(msg.content)
        if not out:
            msg.drop()
            return
        msg.content = out[0]
        for extra in out[1:]:  # injected after the current one, in order
            ctx.master.commands.call("inject.websocket", flow, True, extra, True)

    def websocket_end(self, flow: http.HTTPFlow) -> None:
        self._ws_demask.pop(flow.id, None)

    def _demasked(self, g: dict, raw: bytes | None, headers) -> bytes | None:
        """Stage 7 on a whole chat answer as received: decoded within `limits.max_decoded_bytes` (raises
        BodyTooLarge past it), de-masked and guarded; the new decoded body, or None to leave it."""
        body = codec.decode(raw or b"", headers.get("content-encoding"), self.limits.max_decoded_bytes)
        return self.gateway.chat_response(g, body, headers.get("content-type"))

    def _left_as_is(self, host: str, e: Exception) -> None:
        if isinstance(e, BodyTooLarge):  # a compression bomb, or an answer no chat sends: the client gets it as sent
            log.warning("guardian: chat response of %s passed without de-masking: it decodes past the %d-byte bound",
                        host, self.limits.max_decoded_bytes)
        else:  # undecodable body or a de-masking error: the response passes as received
            log.warning("guardian: chat response of %s left as is (%s)", host, type(e).__name__)

    def _demasked_wire(self, g: dict, headers, raw: bytes, host: str) -> bytes:
        """`Held`'s end: the answer de-masked and encoded again as its Content-Encoding says, or as received."""
        try:
            new = self._demasked(g, raw, headers)
            return codec.encode(new, headers.get("content-encoding")) if new is not None else raw
        except Exception as e:
            self._left_as_is(host, e)
            return raw

    def _chat_response(self, flow: http.HTTPFlow, g: dict) -> None:
        """A whole (non-streamed) chat response: surrogates back to real values and the agent guard on its
        tool calls (stage 7). Runs in the pool: decompressing, de-masking and recompressing are CPU work.
        Decompression is bounded like a request's (`limits.max_decoded_bytes`): past it, and on any error, the
        response passes exactly as received (compressed, untouched)."""
        try:
            new = self._demasked(g, flow.response.raw_content, flow.response.headers)
        except Exception as e:
            self._left_as_is(flow.request.host, e)
            return
        if new is not None:
            flow.response.content = new  # re-encoded as Content-Encoding says; Content-Length updated

    async def response(self, flow: http.HTTPFlow) -> None:
        """A session's whole chat response that mitmproxy held (within the bound, see `responseheaders`) is
        de-masked in the pool (the flow waits for it, the event loop does not). Then, learn while browsing: a
        held privacy-policy page goes to stage 2's ingestion (a streamed one was handed over by its `Tee`)."""
        g = flow.metadata.get("guardian") or {}
        if g.get("session") and flow.response and not flow.response.stream:
            try:
                await asyncio.get_running_loop().run_in_executor(self.pool, self._chat_response, flow, g)
            except RuntimeError:  # the pool is shut down: the response passes as received
                pass
        self._learn_from(flow)

    def _learn_from(self, flow: http.HTTPFlow) -> None:
        if not flow.response or flow.error or flow.request.method != "GET" or flow.response.status_code != 200:
            return
        wants = getattr(self.gateway, "wants_policy", None)
        url, ctype = flow.metadata.get("guardian_url") or real_url(flow), flow.response.headers.get("content-type", "")
        raw = flow.response.raw_content
        try:
            if not raw or wants is None or not wants(url, ctype):
                return
        except Exception:
            return
        limit = self.limits.max_inspected_response_bytes
        if len(raw) > limit:
            log.info("guardian: policy page on %s not learned: %d bytes, over the %d-byte cap", flow.request.host,
                     len(raw), limit)
            return
        self._queue_learn(url, ctype, flow.response.headers.get("content-encoding"), raw)

    def _queue_learn(self, url: str, ctype: str, encoding: str | None, raw: bytes) -> None:
        """A policy page's body to stage 2's ingestion, on a one-thread pool of its own (never the event loop)."""
        if self.learn_pool is None:
            self.learn_pool = ThreadPoolExecutor(1, thread_name_prefix="guardian-learn")
        if self._learn_queued >= 8:  # a burst of policy pages: drop rather than queue without bound
            return
        self._learn_queued += 1
        try:
            self.learn_pool.submit(self._learn, url, ctype, encoding, raw)
        except RuntimeError:  # shutting down
            self._learn_queued -= 1

    def _learn(self, url: str, ctype: str, encoding: str | None, raw: bytes) -> None:
        try:
            body = codec.decode(raw, encoding, MAX_POLICY_PAGE_BYTES * 4)
            charset = "utf-8"
            for part in ctype.split(";")[1:]:
                k, _, v = part.strip().partition("=")
                if k.lower() == "charset" and v:
                    charset = v.strip('"\' ')
            try:
                text = body.decode(charset, "replace")
            except LookupError:
                text = body.decode("utf-8", "replace")
            self.gateway.learn_policy(url, ctype, text)
        except Exception as e:  # an undecodable page is not learned; nothing else happens
            log.info("guardian: policy page not learned (%s)", type(e).__name__)
        finally:
            self._learn_queued -= 1

    def error(self, flow: http.HTTPFlow) -> None:
        """Upstream refused/reset/timeout/TLS errors reach the client as mitmproxy answers them (502);
        this adds one line naming the decision, never the request's values: the host and mitmproxy's message
        (which may quote the host) pass the log's masking function (guardian_proxy/logmask.py)."""
        from .logmask import mask, mask_host

        g = flow.metadata.get("guardian") or {}
        log.warning("guardian: flow error for %s %s (decision %s, %s): %s", flow.request.method,
                    mask_host(flow.request.pretty_host), g.get("id", "-"), g.get("action", "not evaluated"),
                    mask(flow.error.msg) if flow.error else "?")

    # ------------------------------------------------------------------ raw TCP and UDP (not HTTP)

    def _stream_raw(self, flow, content: bytes = b"") -> RawRequest:
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
        client = str(flow.client_conn.peername[0]) if flow.client_conn and flow.client_conn.peername else None
        return RawRequest(method="SEND" if content else "OPEN", url=url,
                          headers=[("content-type", "application/octet-stream")] if content else [], body=content,
                          client=client, app=flow.metadata.get(APP_META))

    async def tcp_start(self, flow) -> None:
        """A raw connection is decided on its destination before it opens (one decision line): a tracker's host
        is refused (`raw-stream-tracker`); mitmproxy then never connects (`server_connect`)."""
        if self.gateway is None and not await self._until_ready():  # nothing passes undecided
            self._refused.add(flow.client_conn.id)
            return
        raw = self._stream_raw(flow)
        decision = await self._evaluate(raw)
        if decision.action == "deny":
            self._refused.add(flow.client_conn.id)
        self._publish(raw, decision)

    udp_start = tcp_start

    async def tcp_message(self, flow) -> None:
        """Each client message of a raw connection is read like an opaque body (its readable strings go through
        detection). Raw bytes have no framing to rewrite in: a message that would be rewritten or blocked is not
        sent and the connection is closed (`raw-stream-data`). Logged: messages that carry personal data or are
        blocked; binary messages that pass are not one line each."""
        msg = flow.messages[-1]
        try:
            if not msg.from_client or not msg.content:
                return
            if flow.client_conn.id in self._refused:
                msg.content = b""
                return
            raw = self._stream_raw(flow, msg.content)
            decision = await self._evaluate(raw, log=False)
            if decision.action != "allow" or decision.six.personal():
                if "fail_stage" not in decision.extra:  # a fail-rule decision is logged already
                    self.gateway.write_log(raw, decision)
                self._publish(raw, decision)
            if decision.action != "allow":
                msg.content = b""
                self._refused.add(flow.client_conn.id)
                self._close(flow)
        except Exception as e:  # an undecided message never leaves
            log.warning("guardian: raw %s message to %s not sent (%s)", raw_scheme(flow), flow.server_conn.address,
                        type(e).__name__)
            msg.content = b""
        finally:
            if len(flow.messages) > WS_KEEP:
                del flow.messages[:-WS_KEEP]

    udp_message = tcp_message

    @staticmethod
    def _close(flow) -> None:
        """Close a raw connection (mitmproxy 11 has no kill for TCP flows in transit): cancel its handler."""
        try:
            handler = ctx.master.addons.get("proxyserver").connections.get(flow.client_conn.id)
            if handler is not None:
                task = handler.transports[handler.client].handler
                if task is not None:
                    task.cancel("blocked by guardian-proxy")
        except Exception:  # best effort: every later message of the flow is dropped anyway
            pass

    def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        if data.client.id in self._refused:
            data.server.error = "blocked by guardian-proxy"
            return
        if self.redirect is not None:
            self.redirect.server_connect(data)

    def client_disconnected(self, client) -> None:
        self._refused.discard(client.id)
        if self.redirect is not None:
            self.redirect.client_disconnected(client)

    def done(self) -> None:
        with self._build_lock:
            self._closed = True  # a gateway still being built is closed when it is (`_build`)
        if self.standalone and self.gateway is not None:
            from . import runtime

            runtime.remove(self.gateway.settings.state_dir)
            if self.dashboard is not None:
                self.dashboard.stop()
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.big_pool.shutdown(wait=False, cancel_futures=True)
        if self.processes is not None:
            self.processes.close()
        if self.learn_pool is not None:
            self.learn_pool.shutdown(wait=False, cancel_futures=True)
        if self.dash_pool is not None:
            self.dash_pool.shutdown(wait=False, cancel_futures=True)


def close_client(client_id: str, why: str) -> None:
    """Close one client connection now (for ConnectionGuard): its handler task is cancelled, as mitmproxy's own
    inactivity timeout does; the client_disconnected hook follows."""
    ps = ctx.master.addons.get("proxyserver")
    handler = getattr(ps, "connections", {}).get(client_id) if ps is not None else None
    if handler is None:
        return
    io = handler.transports.get(handler.client)
    if io is not None and io.handler is not None:
        io.handler.cancel(why)


def listening_servers() -> list:
    """The asyncio servers mitmproxy's proxy modes listen on (for ConnectionGuard.running: their backlog)."""
    ps = ctx.master.addons.get("proxyserver")
    return [s for instance in (getattr(ps, "servers", None) or ()) for s in getattr(instance, "_servers", None) or ()]


def ca_cert_path(confdir: str) -> Path:
    return Path(os.path.expanduser(confdir)) / "mitmproxy-ca-cert.pem"


def check_mode(spec: str) -> str:
    """Validate a mitmproxy 11 mode spec (`regular`, `transparent`, `wireguard[:CONF][@[HOST:]PORT]`,
    `socks5`, `upstream:URL` …); returns the mode's name, raises ValueError with mitmproxy's reason."""
    from mitmproxy.proxy.mode_specs import ProxyMode

    return ProxyMode.parse(spec).type_name


def write_wireguard_client_conf(master, confdir: str) -> Path | None:
    """WireGuard mode: save the client configuration mitmproxy generated (0600) and return its path."""
    ps = master.addons.get("proxyserver")
    for server in getattr(ps, "servers", []) or []:
        conf = server.client_conf() if hasattr(server, "client_conf") else None
        if conf:
            path = Path(os.path.expanduser(confdir)) / "wireguard-client.conf"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(conf + "\n")
            return path
    return None


async def _servers_up(master, task: asyncio.Task) -> None:
    """Until mitmproxy's servers listen (or it stopped): the banner and the runtime file then name the port really
    bound (`--port 0` included). A fixed pause was too short on a loaded machine."""
    ps = master.addons.get("proxyserver")
    while ps is not None and not task.done():
        servers = list(ps.servers)
        if servers and not ps.servers.is_updating and all(s.is_running for s in servers):
            return
        await asyncio.sleep(0.02)


async def _serve(gateway: Gateway, host: str, port: int, confdir: str, redirect: tuple[str, int] | None,
                 ssl_insecure: bool, proxyauth: str | None, mode: str | None, on_ready, dashboard=None,
                 sets: list[str] | None = None, verbosity: str = "warn", processes=None) -> None:
    from mitmproxy import options
    from mitmproxy.tools.dump import DumpMaster

    opts = options.Options(listen_host=host, listen_port=port, confdir=confdir)
    master = DumpMaster(opts, with_termlog=True, with_dumper=False)
    from .logmask import mask_handlers

    mask_handlers()  # mitmproxy's own lines (a TLS handshake warning names the host) pass the log's masking too
    if dashboard is not None and not dashboard.start():  # a busy port is a warning (dashboard.error), never fatal
        dashboard = None
    master.addons.add(AppLookup())  # which program sent it (procinfo.py): before GuardianAddon, which reads it
    master.addons.add(GuardianAddon(gateway, redirect, eval_timeout_s=gateway.settings.limits.eval_timeout_s,
                                    dashboard=dashboard, processes=processes))
    if gateway.settings.detector.cname_lookup and not (mode or "").startswith(("upstream", "reverse")):
        # the CNAME chain of the proxy's own DNS answer; the connection to its address only with dns_connect
        from .dns_answer import DnsAnswer
        from .extract.cname import CnameResolver, parse_nameserver

        master.addons.add(DnsAnswer(CnameResolver(parse_nameserver(gateway.settings.detector.dns_server)),
                                    connect=redirect is None and gateway.settings.detector.dns_connect))
    # header and idle timeouts, per-client and total connection caps (guardian_proxy/connections.py)
    master.addons.add(ConnectionGuard.from_limits(close_client, gateway.settings.limits))
    updates = {"ssl_insecure": ssl_insecure, "termlog_verbosity": verbosity, "connection_strategy": "lazy"}
    if proxyauth:
        updates["proxyauth"] = proxyauth
    if mode:
        updates["mode"] = [mode]
    opts.update(**updates)
    if sets:  # every other mitmproxy option, as `mitmdump --set` takes it (the addons' options are known by now)
        problem = _set_problem(opts, sets)
        if problem:
            raise GuardianError(problem)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, master.shutdown)
        except (NotImplementedError, RuntimeError):
            pass
    task = asyncio.create_task(master.run())
    await _servers_up(master, task)
    if mode and mode.startswith("wireguard"):
        await asyncio.sleep(0.5)  # the WireGuard server starts asynchronously
        wg = write_wireguard_client_conf(master, confdir)
        if wg is not None:
            log.warning("WireGuard client configuration written to %s", wg)
    if on_ready:
        from . import runtime

        runtime.note(redirect)  # the runtime file on_ready writes says where every request goes (doctor reads it)
        on_ready()
    try:
        await task
    finally:
        if dashboard is not None:
            dashboard.stop()


def _set_problem(opts, sets: list[str]) -> str | None:
    """`--set KEY=VALUE` specs applied one by one to `opts`; the first that mitmproxy refuses, in one line naming its
    key (mitmproxy's own message says `Not an integer: abc` without the key), else None."""
    import difflib

    for spec in sets:
        key = spec.partition("=")[0].strip()
        try:
            opts.set(spec)
        except exceptions.OptionsError as e:
            msg = str(e)
            if "Unknown option" in msg:
                near = difflib.get_close_matches(key, list(opts.keys()), 2)
                return f"--set {spec}: no option {key!r}" + (f" (did you mean {', '.join(near)}?)" if near else "")
            return f"--set {spec}: {msg}"
    return None


def check_sets(sets: list[str]) -> None:
    """The mitmproxy options given as `--set` checked against mitmproxy's own options and their types before any
    model loads (`guardian-proxy run` fails in one line naming the key, not half a minute later); GuardianError."""
    if not sets:
        return

    async def check() -> str | None:
        from mitmproxy import options
        from mitmproxy.tools.dump import DumpMaster

        root = logging.getLogger()
        before = list(root.handlers)
        opts = options.Options()
        DumpMaster(opts, with_termlog=True, with_dumper=False)  # every addon's options, nothing started
        try:
            return _set_problem(opts, sets)
        finally:
            for h in [h for h in root.handlers if h not in before]:  # its log handlers: `run` installs its own
                root.removeHandler(h)

    problem = asyncio.run(check())
    if problem:
        raise GuardianError(problem)


def run_proxy(gateway: Gateway, host: str, port: int, confdir: str = "~/.mitmproxy",
              redirect: tuple[str, int] | None = None, ssl_insecure: bool = False, proxyauth: str | None = None,
              mode: str | None = None, on_ready=None, dashboard=None, sets: list[str] | None = None,
              verbosity: str = "warn", processes=None) -> None:
    """Run mitmproxy with the guardian addon until SIGINT/SIGTERM; `dashboard` (a not yet started
    guardian_proxy.dashboard.Dashboard) runs beside it on its own thread; `processes` (a started
    guardian_proxy.workers.WorkerPool) evaluates requests, else this process's threads do."""
    asyncio.run(_serve(gateway, host, port, confdir, redirect, ssl_insecure, proxyauth, mode, on_ready, dashboard,
                       sets, verbosity, processes))

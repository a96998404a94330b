"""The guardian addon: each request (and each WebSocket message from the client) is turned into a RawRequest,
decided by the evaluator (guardian_proxy/evaluator.py: on the event loop, in a thread or in a worker process,
within its deadline, else by its fail rule; it writes the one decision line) and the decision applied
(mitm/blocking.py `apply_decision`): allow → untouched; transform → body/URL/cookies rewritten in their own
encoding; deny → the request never leaves and the client gets an answer by what sent it. The decision is kept in
`flow.metadata["guardian"]` for the reply hooks. Its other concerns are mixins, one module each: options
(mitm/options.py), start-up under mitmproxy (mitm/startup.py), replies (mitm/replies.py), policy learning
(mitm/learning.py), raw TCP/UDP (mitm/rawstreams.py)."""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor

from mitmproxy import http

from .. import console, runtime
from ..config import LimitSettings
from ..evaluator import Evaluator
from ..pipeline import Gateway
from ..types import Decision, RawRequest
from .blocking import apply_decision
from .flows import WS_KEEP, to_raw, ws_raw
from .learning import Learning
from .options import Options
from .rawstreams import RawStreams
from .redirect import UpstreamRedirect
from .replies import Replies
from .startup import Startup

log = logging.getLogger("guardian_proxy")


class GuardianAddon(Options, Startup, Replies, Learning, RawStreams):
    """The addon. `guardian-proxy run` builds the gateway itself (early errors, the banner) and hands it in; loaded
    by mitmproxy (`mitmdump -s`/`mitmweb -s`, mitm/script.py) it has none and builds one from
    its `guardian_*` options when mitmproxy is running (`running`, in a thread: the event loop keeps serving), every
    `--set` applied by then. Until it has one, a request waits for it (at most `READY_WAIT_S`, then 503), never
    passes undecided. Whatever would let a request out unguarded stops mitmproxy at start-up with one line saying
    what to fix: a `guardian_*` value that is not valid, an address beyond loopback without `guardian_allow_remote`
    and `proxyauth`, a gateway that cannot be built. Upstream connections are lazy in every launcher (a blocked
    request never opens one)."""

    def __init__(self, gateway: Gateway | None = None, upstream: UpstreamRedirect | None = None,
                 workers: int | None = None, eval_timeout_s: float = 60.0, dashboard=None, processes=None):
        self.gateway = gateway
        # where each request is evaluated (in worker processes: guardian_proxy/workers.py WorkerPool, or None: in
        # this process's threads, `workers` of them), its deadline, its fail rule and its line; loaded by mitmproxy
        # (standalone) it gets the gateway once built (mitm/startup.py)
        self.evaluator = Evaluator(gateway, processes, threads=workers, timeout_s=eval_timeout_s)
        self.standalone = gateway is None  # loaded by mitmproxy itself: options build the gateway
        self.dashboard = dashboard  # guardian_proxy.dashboard.Dashboard or None
        # one thread of its own: decisions reach the dashboard in order and never wait behind evaluations
        self.dash_pool = ThreadPoolExecutor(1, thread_name_prefix="guardian-dash") if dashboard is not None else None
        # the upstream redirect addon that follows this one in the chain (mitm/app.py `build`): its address is set
        # from `guardian_redirect_upstream` (`configure`); a lone addon (a unit test) has one of its own
        self.upstream = upstream if upstream is not None else UpstreamRedirect()
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

    @property
    def pool(self) -> ThreadPoolExecutor:
        """The evaluator's thread pool, where the reply hooks' CPU work (de-masking a whole chat answer) runs too."""
        return self.evaluator.pool

    @property
    def redirect(self) -> UpstreamRedirect | None:
        """The upstream redirect (mitm/redirect.py, an addon of its own in the chain) when it is on, else None."""
        return self.upstream if self.upstream.address is not None else None

    async def request(self, flow: http.HTTPFlow) -> None:
        if flow.response or flow.error:
            return
        if self.gateway is None and not await self._until_ready():  # nothing passes undecided
            flow.response = http.Response.make(503, b"guardian-proxy is not ready: no request passes undecided\n",
                                               {"content-type": "text/plain; charset=utf-8", "retry-after": "5"})
            return
        raw = to_raw(flow)
        decision = await self.evaluator.evaluate(raw, inline=True)
        flow.metadata["guardian"] = {"id": decision.id, "action": decision.action,
                                     "R": decision.risk.R if decision.risk else None,
                                     "explanation": decision.explanation,
                                     "session": decision.extra.get("session"), "chat_api": decision.extra.get("chat_api")}
        apply_decision(flow, decision)
        # mitmweb's flow list (comment, marker, a block's reason phrase) and the console's line, worded once
        console.tell(flow, raw, decision, flow.client_conn.peername if flow.client_conn else None, self.standalone)
        if self.redirect is not None and flow.response is None:
            flow.metadata["guardian_url"] = raw.url  # the URL decided on; mitm/redirect.py's hook then rewrites it
        self._publish(raw, decision)

    def _publish(self, raw: RawRequest, decision: Decision) -> None:
        """The decision to the dashboard, on its own thread (in order, never waiting behind evaluations)."""
        if self.dash_pool is not None:
            try:
                self.dash_pool.submit(self.dashboard.publish, raw, decision)
            except RuntimeError:  # shutting down
                pass

    # ------------------------------------------------------------------ WebSockets

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
        raw = ws_raw(flow, msg.content, msg.is_text)
        decision = await self.evaluator.evaluate(raw)
        if decision.action == "deny":
            msg.drop()
        elif decision.action == "transform" and decision.rewrite is not None and decision.rewrite.body is not None:
            msg.content = decision.rewrite.body
        self._ws_session(flow, decision)  # mitm/replies.py: the session's server messages are de-masked
        self._publish(raw, decision)

    def error(self, flow: http.HTTPFlow) -> None:
        """Upstream refused/reset/timeout/TLS errors reach the client as mitmproxy answers them (502);
        this adds one line naming the decision, never the request's values: the host and mitmproxy's message
        (which may quote the host) pass the log's masking function (guardian_proxy/logmask.py)."""
        from ..logmask import mask, mask_host

        g = flow.metadata.get("guardian") or {}
        log.warning("guardian: flow error for %s %s (decision %s, %s): %s", flow.request.method,
                    mask_host(flow.request.pretty_host), g.get("id", "-"), g.get("action", "not evaluated"),
                    mask(flow.error.msg) if flow.error else "?")

    def done(self) -> None:
        with self._build_lock:
            self._closed = True  # a gateway still being built is closed when it is (`_build`)
        if self.standalone and self.gateway is not None:
            runtime.remove(self.gateway.settings.state_dir)
            if self.dashboard is not None:
                self.dashboard.stop()
        self.evaluator.close()
        if self.learn_pool is not None:
            self.learn_pool.shutdown(wait=False, cancel_futures=True)
        if self.dash_pool is not None:
            self.dash_pool.shutdown(wait=False, cancel_futures=True)


"""Loaded by mitmproxy itself (`mitmdump -s`, `mitmweb -s`): the gateway is built from the `guardian_*` options in a
thread once mitmproxy runs (`running`), and until it is a request waits for it (`until_ready`, at most
`READY_WAIT_S`, then 503), never passes undecided. A gateway that cannot be built stops mitmproxy in one line."""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor

from mitmproxy import ctx

from .. import runtime
from ..errors import GuardianError
from .options import bound_problem, ca_cert_path

log = logging.getLogger("guardian_proxy")

READY_WAIT_S = 300.0  # how long a request may wait for the gateway of an addon loaded by mitmproxy (then 503)


def _close_built(built) -> None:
    if built.processes is not None:
        built.processes.close()
    if built.dashboard is not None:
        built.dashboard.stop()


class Startup:
    """`GuardianAddon`'s start-up when mitmproxy loaded it (a mixin of mitm/hooks.py `GuardianAddon`)."""

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
        self.gateway, self.dashboard = built.gateway, built.dashboard
        self.evaluator.attach(built.gateway, built.processes)  # the deadline: the settings' limits.eval_timeout_s
        self.limits = self.gateway.settings.limits
        if self.dashboard is not None:
            self.dash_pool = ThreadPoolExecutor(1, thread_name_prefix="guardian-dash")
        runtime.note(self.upstream.address)
        runtime.write(self.gateway.settings.state_dir, runtime.info(
            bound, spec or "regular", self.dashboard.url if self.dashboard is not None else None, o.confdir,
            ca_cert_path(o.confdir)))
        self._ready_event().set()
        log.warning("guardian-proxy: deciding every request; decision log %s%s", self.gateway.settings.decision_log,
                    f"; dashboard {self.dashboard.url}" if self.dashboard is not None else "")

    def _build(self, args: tuple, workers: int | None):
        """In a thread: settings, checks, models, the dashboard (mitm/app.py `from_options`); None when mitmproxy
        stopped meanwhile (what was built is closed)."""
        from .app import from_options

        built = from_options(*args, workers=workers)
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


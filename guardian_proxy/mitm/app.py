"""The addon chain for every launcher (`build`) and the one start-up path that opens a gateway (`open_gateway`).

    `guardian-proxy run`            cli/run.py: settings and checks, `open_gateway`, then mitm/serve.py `run_proxy`,
                                    which adds `build(gateway, …)` to its master
    `mitmdump -s` / `mitmweb -s`    mitm/script.py: `addons = build()`; the guardian opens its
                                    gateway from its `guardian_*` options once mitmproxy runs (`from_options`)

    mitmdump -s "$(guardian-proxy addon-path)" --set guardian_state_dir=/var/lib/guardian
    mitmweb  -s "$(guardian-proxy addon-path)" --set guardian_dashboard_port=0
"""

from __future__ import annotations

import errno
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mitmproxy import exceptions
from mitmproxy.addonmanager import safecall, traverse

from ..config import LimitSettings, load_settings
from ..connections import ConnectionGuard
from ..dns_answer import DnsAnswer, ScriptDnsAnswer
from ..pipeline import Gateway
from ..procinfo import AppLookup
from .hooks import GuardianAddon
from .redirect import UpstreamRedirect
from .serve import close_client

log = logging.getLogger("guardian_proxy")


def build(gateway: Gateway | None = None, *, redirect: tuple[str, int] | None = None, dashboard=None,
          processes=None, mode: str | None = None) -> list:
    """The addons, in order: which program sent a request (procinfo.AppLookup, read by the guardian), the guardian
    (mitm/hooks.py), the upstream redirect (mitm/redirect.py: after the guardian, so it sees only what was let
    through), the proxy's own DNS answer (dns_answer.py: the CNAME chain for the evaluation) and the connection
    guard (connections.py: header and idle timeouts, connection caps).

    `gateway` None (the mitmproxy script): the guardian builds its gateway from its options, the DNS answer waits
    for it, and the connection guard has the default limits. Otherwise `redirect`, `dashboard` (started or None),
    `processes` (a started workers.WorkerPool or None) and `mode` (the mode spec) are `guardian-proxy run`'s."""
    upstream = UpstreamRedirect(redirect)
    limits = gateway.settings.limits if gateway is not None else LimitSettings()
    guardian = GuardianAddon(gateway, upstream, eval_timeout_s=limits.eval_timeout_s, dashboard=dashboard,
                             processes=processes)
    chain: list = [AppLookup(), guardian, upstream]
    if gateway is None:
        chain.append(ScriptDnsAnswer(guardian))
    elif gateway.settings.detector.cname_lookup and not (mode or "").startswith(("upstream", "reverse")):
        # the CNAME chain of the proxy's own DNS answer; the connection to its address only with dns_connect
        from ..extract.cname import CnameResolver, parse_nameserver

        det = gateway.settings.detector
        chain.append(DnsAnswer(CnameResolver(parse_nameserver(det.dns_server)),
                               connect=redirect is None and det.dns_connect))
    chain.append(ConnectionGuard.from_limits(close_client, limits))
    return chain


class GuardianChain:
    """`build`'s addons as the children of one addon of mitmproxy's chain (`guardian-proxy run`; a script's `addons`
    are its children already): mitmproxy calls every addon of its chain for every event, hook or not (a coroutine
    and an error guard each, ~2.2 µs), and a request is ~13 events; children cost a lookup each (~0.6 µs). The same
    order, the same hooks, each child still known by its own name (`addons.get("guardianaddon")`)."""

    def __init__(self, addons: list):
        self.addons = addons


#: mitmproxy's hooks that no request, connection or message calls
_LIFECYCLE = frozenset({"load", "configure", "running", "done"})


class QuietAddons:
    """mitmproxy's own addons that have no hook but the lifecycle ones (`load`, `configure`, `running`, `done`):
    commands and options (Core, Cut, Export, Comment …), as the children of one addon of the chain (`quiet_runs`)."""

    def __init__(self, addons: list):
        self.addons = addons


def quiet_runs(chain: list) -> list:
    """`chain` (mitmproxy's `master.addons.chain`, every addon registered already) with each run of two or more
    consecutive addons that have no traffic hook made one `QuietAddons`: mitmproxy calls every addon of its chain on
    every event, hook or not (a coroutine and an error guard each, ~2.2 µs; a request is ~13 events), children cost
    a lookup each. Nothing moves: the order of every hook is the same, each addon is still known by its name
    (`addons.get`, registered before), an addon with children (the script loader) stays as it is. What changes is
    only an error in a lifecycle hook of one of them: the rest of its run misses that event (mitmproxy logs it)."""
    from mitmproxy import hooks

    traffic = [n for n in hooks.all_hooks if n not in _LIFECYCLE]

    def quiet(addon) -> bool:
        return not hasattr(addon, "addons") and not any(callable(getattr(addon, n, None)) for n in traffic)

    out: list = []
    run: list = []
    for addon in [*chain, None]:
        if addon is not None and quiet(addon):
            run.append(addon)
            continue
        out += [QuietAddons(run)] if len(run) > 1 else run
        run = []
        if addon is not None:
            out.append(addon)
    return out


class HookIndex:
    """mitmproxy's `AddonManager.trigger_event` asking only the addons of its chain that have the event's hook (the
    addon or one of its children): mitmproxy asks every addon of its chain for every event (a generator, a walk of
    its children, a `getattr` and an error guard each, ~2 µs; ~9 events a request, of 29 addons `update` has 1,
    `requestheaders` 5, `request` 14). Those that have it are called as mitmproxy calls them (its `invoke_addon` in its `safecall`, in the
    chain's order; `AddonHalt` stops the event), so nothing changes but the calls that did nothing.

    Per hook name, which addons have it is read once and again whenever the chain changes (mitmproxy's `add`
    appends to it, `remove` makes a new list). An addon whose children may change (the script loader's scripts, any
    addon with `addons` but `GuardianChain` and `QuietAddons`, whose children are fixed) is always asked."""

    def __init__(self, manager):
        self.manager = manager
        self._chain: list | None = None
        self._len = -1
        self._by_name: dict[str, list] = {}

    def asked(self, name: str) -> list:
        """The addons of the chain that `name` is triggered on, in the chain's order."""
        chain = self.manager.chain
        if chain is not self._chain or len(chain) != self._len:
            self._chain, self._len, self._by_name = chain, len(chain), {}
        got = self._by_name.get(name)
        if got is None:
            got = self._by_name[name] = [a for a in chain if _has_hook(a, name)]
        return got

    async def trigger_event(self, event) -> None:
        invoke = self.manager.invoke_addon
        for addon in self.asked(event.name):
            try:
                with safecall():
                    await invoke(addon, event)
            except exceptions.AddonHalt:
                return

    def trigger(self, event) -> None:
        """mitmproxy's synchronous `trigger` the same way (its log records reach the addons so: `add_log`)."""
        invoke = self.manager.invoke_addon_sync
        for addon in self.asked(event.name):
            try:
                with safecall():
                    invoke(addon, event)
            except exceptions.AddonHalt:
                return


def _has_hook(addon, name: str) -> bool:
    """Whether mitmproxy's `invoke_addon(addon, event)` would find anything to call (or to complain about) for hook
    `name`: an attribute of that name that is truthy on the addon or one of its children; an addon whose children
    may change, always."""
    if hasattr(addon, "addons") and not isinstance(addon, (GuardianChain, QuietAddons)):
        return True
    return any(getattr(a, name, None) for a in traverse([addon]))


def index_hooks(manager) -> HookIndex:
    """`manager` (mitmproxy's `master.addons`) triggers each event through a HookIndex from now on."""
    index = HookIndex(manager)
    manager.trigger_event, manager.trigger = index.trigger_event, index.trigger
    return index


def open_gateway(settings, loading: Callable[[object | None], None] | None = None):
    """(gateway, worker pool or None) for `settings`, models loaded and warmed up: the worker processes
    (workers.pool_for) load their models while this process builds its gateway. `loading(pool)` is called once the
    pool is launched (the banner's "loading models" line). What was started is closed when it fails."""
    from ..workers import pool_for

    processes = pool_for(settings)
    if loading is not None:
        loading(processes)
    try:
        gateway = Gateway.from_settings(settings, models=processes is None)
        gateway.warm_up(models=processes is None)
        if processes is not None:
            processes.start()
    except BaseException:
        if processes is not None:
            processes.close()
        raise
    return gateway, processes


def dashboard_for(gateway: Gateway, port: int, proxy: tuple[str, int], mode: str | None, run_options=None):
    """The dashboard (not started) of `gateway`'s settings and overrides, for the proxy at `proxy`."""
    from ..dashboard import Dashboard

    return Dashboard(gateway.settings, port=port, proxy=proxy, mode=mode,
                     overrides=getattr(gateway, "overrides", None), run_options=run_options)


@dataclass
class Built:
    gateway: Gateway
    dashboard: object | None  # guardian_proxy.dashboard.Dashboard, started, or None
    processes: object | None = None  # guardian_proxy.workers.WorkerPool, started, or None (threads)


def from_options(config: str | None, state_dir: str | None, log_file: str | None, dashboard_port: int,
                 proxy: tuple[str, int], mode: str | None = None, workers: int | None = None) -> Built:
    """The script's gateway, from the guardian's option values (mitm/startup.py `_build`, in a thread): settings,
    the same checks as `guardian-proxy run` (cli/startup.py), models and the dashboard; raises GuardianError (one
    line naming the file and the fix)."""
    from ..cli.startup import check_state

    logging.getLogger("presidio-analyzer").setLevel(logging.WARNING)  # one line per recognizer at INFO
    s = load_settings(Path(config).expanduser() if config else None,
                      state_dir=Path(state_dir).expanduser() if state_dir else None,
                      log_file=Path(log_file).expanduser() if log_file else None, dashboard_port=dashboard_port,
                      workers=workers)
    check_state(s)
    gateway, processes = open_gateway(s)
    dash = None
    if s.dashboard_port:
        dash = dashboard_for(gateway, dashboard_port_free(s.dashboard_port), proxy, mode)
        if not dash.start():
            dash = None
    return Built(gateway, dash, processes)


DASHBOARD_TRIES = 10  # ports after a taken one tried before the system's choice


def dashboard_port_free(port: int, host: str = "127.0.0.1") -> int:
    """`port` when it is free, else the next free one of the following DASHBOARD_TRIES, else 0 (the system's choice),
    said in one log line: mitmweb's own web interface holds 8081, the dashboard's default, and the dashboard moves
    off it by itself (the port it got is in the `deciding every request` line and in `<state dir>/runtime.json`)."""
    for p in range(port, min(port + DASHBOARD_TRIES, 65535) + 1):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the dashboard's server: not TIME_WAIT
            try:
                sock.bind((host, p))
            except OSError as e:
                if e.errno == errno.EADDRINUSE:
                    continue
                return port  # another problem: Dashboard.start says it
        if p != port:
            log.warning("guardian-proxy: dashboard port %d is taken (mitmweb's own interface?): the dashboard uses %d "
                        "(--set guardian_dashboard_port=N to choose, 0: off)", port, p)
        return p
    log.warning("guardian-proxy: dashboard ports %d-%d are taken: the dashboard uses a port the system chose "
                "(--set guardian_dashboard_port=N to choose, 0: off)", port, port + DASHBOARD_TRIES)
    return 0

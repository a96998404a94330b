"""Running mitmproxy for `guardian-proxy run` (`run_proxy`: the addon chain of mitm/app.py `build`, the banner once
the servers listen, the WireGuard client configuration), and mitmproxy's own checks of a mode spec and of `--set`
options before any model loads."""

from __future__ import annotations

import asyncio
import difflib
import logging
import os
import signal
from pathlib import Path

from mitmproxy import ctx, exceptions

from .. import runtime
from ..errors import GuardianError
from ..logmask import mask_handlers
from ..pipeline import Gateway
from ..workers import settle_heap
from .options import ca_cert_path

__all__ = ["ca_cert_path", "check_mode", "check_sets", "close_client", "listening_servers", "run_proxy"]

log = logging.getLogger("guardian_proxy")


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

    from .app import GuardianChain, build, index_hooks, quiet_runs

    opts = options.Options(listen_host=host, listen_port=port, confdir=confdir)
    master = DumpMaster(opts, with_termlog=True, with_dumper=False)
    mask_handlers()  # mitmproxy's own lines (a TLS handshake warning names the host) pass the log's masking too
    if dashboard is not None and not dashboard.start():  # a busy port is a warning (dashboard.error), never fatal
        dashboard = None
    master.addons.add(GuardianChain(build(gateway, redirect=redirect, dashboard=dashboard, processes=processes,
                                          mode=mode)))
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
    master.addons.chain = quiet_runs(master.addons.chain)  # mitmproxy's hookless addons: one call per event, not 11
    index_hooks(master.addons)  # an event asks only the addons that have its hook (1-14 of 29)
    settle_heap()  # the gateway and mitmproxy are loaded: the collector leaves them be from now on (workers.py)
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

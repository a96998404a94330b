"""The gateway of an addon that mitmproxy loaded itself (`mitmdump -s`, `mitmweb -s`): built from the addon's
`guardian_*` options once mitmproxy is running (every `--set` applied by then), with the same start-up checks
as `guardian-proxy run` (cli/startup.py). No mitmproxy import here: the addon passes option values in.

    mitmdump -s "$(guardian-proxy addon-path)" --set guardian_state_dir=/var/lib/guardian
    mitmweb  -s "$(guardian-proxy addon-path)" --set guardian_dashboard_port=0
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .config import load_settings
from .pipeline import Gateway


@dataclass
class Built:
    gateway: Gateway
    dashboard: object | None  # guardian_proxy.dashboard.Dashboard, started, or None
    processes: object | None = None  # guardian_proxy.workers.WorkerPool, started, or None (threads)


def build(config: str | None, state_dir: str | None, log_file: str | None, dashboard_port: int,
          proxy: tuple[str, int], mode: str | None = None, workers: int | None = None) -> Built:
    """Settings, checks, models and the dashboard; raises GuardianError (one line naming the file and the fix)."""
    import logging

    from .cli.startup import check_state

    logging.getLogger("presidio-analyzer").setLevel(logging.WARNING)  # one line per recognizer at INFO
    s = load_settings(Path(config).expanduser() if config else None,
                      state_dir=Path(state_dir).expanduser() if state_dir else None,
                      log_file=Path(log_file).expanduser() if log_file else None, dashboard_port=dashboard_port,
                      workers=workers)
    check_state(s)
    from .workers import pool_for

    processes = pool_for(s)  # the workers load their models while this process builds its gateway
    try:
        gateway = Gateway.from_settings(s, models=processes is None)
        gateway.warm_up(models=processes is None)
        if processes is not None:
            processes.start()
    except BaseException:
        if processes is not None:
            processes.close()
        raise
    dash = None
    if s.dashboard_port:
        from .dashboard import Dashboard

        dash = Dashboard(gateway.settings, port=dashboard_port_free(s.dashboard_port), proxy=proxy, mode=mode,
                         overrides=getattr(gateway, "overrides", None))
        if not dash.start():
            dash = None
    return Built(gateway, dash, processes)


DASHBOARD_TRIES = 10  # ports after a taken one tried before the system's choice


def dashboard_port_free(port: int, host: str = "127.0.0.1") -> int:
    """`port` when it is free, else the next free one of the following DASHBOARD_TRIES, else 0 (the system's choice),
    said in one log line: mitmweb's own web interface holds 8081, the dashboard's default, and the dashboard moves
    off it by itself (the port it got is in the `deciding every request` line and in `<state dir>/runtime.json`)."""
    import errno
    import logging
    import socket

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
            logging.getLogger("guardian_proxy").warning(
                "guardian-proxy: dashboard port %d is taken (mitmweb's own interface?): the dashboard uses %d "
                "(--set guardian_dashboard_port=N to choose, 0: off)", port, p)
        return p
    logging.getLogger("guardian_proxy").warning(
        "guardian-proxy: dashboard ports %d-%d are taken: the dashboard uses a port the system chose "
        "(--set guardian_dashboard_port=N to choose, 0: off)", port, port + DASHBOARD_TRIES)
    return 0


# ---------------------------------------------------------------------------------- options and the loopback rule

#: the guardian's options that are numbers: (lowest, highest, what is expected)
NUMBER_OPTIONS = {"guardian_dashboard_port": (0, 65535, "a port number, 0 to 65535 (0: no dashboard)"),
                  "guardian_workers": (0, 256, "a number of worker processes, 0 to 256 (0: threads of this process)")}
#: the guardian's options that are switches
SWITCH_OPTIONS = ("guardian_allow_remote",)
_TRUE, _FALSE = ("true", "1", "yes", "on", ""), ("false", "0", "no", "off")


def option_problem(name: str, value) -> str | None:
    """None when `value` is a good value of the guardian option `name`, else one line naming the option, the value
    and what it takes. `value` as mitmproxy holds it: a list of `--set` strings not converted yet, a string, or
    a value already typed (a number from mitmproxy's config.yaml)."""
    if isinstance(value, (list, tuple)):
        if len(value) > 1:
            return f"{name} given {len(value)} times ({', '.join(map(str, value))}): give it once"
        value = value[0] if value else ""
    if name in NUMBER_OPTIONS:
        low, high, what = NUMBER_OPTIONS[name]
        if value is None or value == "":
            return None if name == "guardian_workers" else f"{name}: expected {what}"
        if isinstance(value, bool):
            return f"{name}={value}: expected {what}"
        try:
            n = int(str(value).strip())
        except ValueError:
            return f"{name}={value}: expected {what}"
        return None if low <= n <= high else f"{name}={value}: expected {what}"
    if name in SWITCH_OPTIONS and not isinstance(value, bool):
        if value is None or str(value).strip().lower() in _TRUE + _FALSE:
            return None
        return f"{name}={value}: expected true or false"
    return None


def listen_rule(specs: list[str], host: str, port: int, allow_remote: bool,
                proxyauth: str | None) -> tuple[str | None, str | None]:
    """The loopback rule (guardian_proxy/listen.py) for mitmproxy's own options: (a listen host to put in place of
    mitmproxy's default, or None; one line refusing to start, or None). mitmproxy listens on every interface by
    default (`listen_host` empty): with no permission to go beyond loopback that becomes 127.0.0.1, as
    `guardian-proxy run`'s default; an address the user gave beyond loopback without the permissions is refused."""
    from .listen import MITM_FLAGS, bind_problem, listen_addresses

    try:
        addrs = listen_addresses(list(specs), host, port)
    except ValueError:  # a spec mitmproxy itself refuses
        return None, None
    problem = bind_problem(addrs, allow_remote, proxyauth, MITM_FLAGS)
    if problem is None:
        return None, None
    if host == "" and not allow_remote and bind_problem(listen_addresses(list(specs), "127.0.0.1", port), False,
                                                        None, MITM_FLAGS) is None:
        return "127.0.0.1", None
    return None, problem


def bound_problem(bound: list[tuple[str, int]], allow_remote: bool, proxyauth: str | None, wireguard: bool) -> str | None:
    """The loopback rule once more on the addresses mitmproxy really bound (None: it holds)."""
    from .listen import MITM_FLAGS, Listen, bind_problem

    addrs = [Listen(str(h), int(p), "wireguard" if wireguard else "regular", None) for h, p in bound]
    return bind_problem(addrs, allow_remote, proxyauth, MITM_FLAGS)

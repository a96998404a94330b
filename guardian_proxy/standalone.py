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
        gateway = Gateway.from_settings(s)
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

        dash = Dashboard(gateway.settings, port=s.dashboard_port, proxy=proxy, mode=mode,
                         overrides=getattr(gateway, "overrides", None))
        if not dash.start():
            dash = None
    return Built(gateway, dash, processes)

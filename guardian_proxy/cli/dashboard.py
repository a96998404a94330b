"""`guardian-proxy dashboard`: print the running proxy's dashboard address, with its token.

Where it is: `<state_dir>/runtime.json`, which the running proxy writes (its pid and `dashboard_url`); without
that file, the configured dashboard port (`dashboard_port`, default 8081) when a guardian-proxy dashboard answers
there. The token is the state dir's `dashboard.token` (the same across restarts). Nothing running: one line,
exit 1. The address alone goes to stdout (for pipes: `xdg-open "$(guardian-proxy dashboard)"`); `--json`
prints {url, dashboard, pac_url, token_file, pid, listen, source}; `--open` opens it in the web browser.
`--new-token` writes a new token first: addresses printed before stop working, at once, in a running proxy too;
its open live streams end (the open page says "token changed"), and its runtime.json names the new address.
"""

from __future__ import annotations

import http.client
import json
import webbrowser
from pathlib import Path
from urllib.parse import urlsplit

import typer

from .. import runtime
from ..dashboard.security import TokenFile
from ..dashboard.service import HOST
from .app import app
from .common import CONFIG, STATE_DIR, console, fail, settings_from, warn

PROBE_TIMEOUT_S = 2.0


def answers(host: str, port: int) -> bool:
    """A guardian-proxy dashboard answers on host:port (its PAC file needs no token)."""
    try:
        c = http.client.HTTPConnection(host, port, timeout=PROBE_TIMEOUT_S)
        try:
            c.request("GET", "/proxy.pac")
            r = c.getresponse()
            r.read(4096)
            return (r.getheader("Server") or "").startswith("guardian-dashboard")
        finally:
            c.close()
    except (OSError, http.client.HTTPException):
        return False


def locate(state_dir: Path, configured_port: int) -> dict:
    """{dashboard (base URL), pid, listen, source} of the running proxy's dashboard; fails (exit 1) when none runs."""
    rt = runtime.load(state_dir)
    if rt:
        pid = rt["pid"]
        if not runtime.alive(pid):
            fail(f"no guardian-proxy is running ({runtime.path(state_dir)} names pid {pid}, which has exited): "
                 "start it with `guardian-proxy run`", 1)
        url = rt.get("dashboard_url")
        if not url:
            fail(f"guardian-proxy (pid {pid}) runs without a dashboard (started with --dashboard-port 0, or its "
                 "port was busy: see its output)", 1)
        parts = urlsplit(str(url))
        return {"dashboard": f"{parts.scheme or 'http'}://{parts.netloc}", "pid": pid, "listen": rt.get("listen"),
                "source": str(runtime.path(state_dir))}
    if not configured_port:
        fail(f"no guardian-proxy is running (no {runtime.path(state_dir)}) and the dashboard is off in the "
             "settings (dashboard_port: 0)", 1)
    if not answers(HOST, configured_port):
        fail(f"no guardian-proxy is running: no {runtime.path(state_dir)}, and no dashboard answers on "
             f"{HOST}:{configured_port}; start it with `guardian-proxy run`", 1)
    return {"dashboard": f"http://{HOST}:{configured_port}", "pid": None, "listen": None,
            "source": f"configured port {configured_port}"}


@app.command("dashboard")
def dashboard_cmd(
    open_it: bool = typer.Option(False, "--open", help="Open the address in the web browser."),
    as_json: bool = typer.Option(False, "--json", help="Print {url, dashboard, pac_url, token_file, pid, listen, source}."),
    new_token: bool = typer.Option(False, "--new-token", help="Replace the dashboard token first: addresses printed "
                                   "before stop working (a running proxy too)."),
    state_dir: Path = STATE_DIR,
    config: Path = CONFIG,
) -> None:
    """Print the running proxy's dashboard address, with its token."""
    s = settings_from(config, state_dir)
    tf = TokenFile.for_state_dir(s.state_dir)
    token = None
    if new_token:
        try:
            token = tf.rotate()
        except OSError as e:
            fail(f"cannot write {tf.path}: {e.strerror or e}", 1)
        console.print(f"new dashboard token written to {tf.path}: addresses printed before no longer work",
                      soft_wrap=True, highlight=False)
    where = locate(s.state_dir, s.dashboard_port)
    token = token or tf.read()
    if token is None:
        fail(f"no dashboard token in {tf.path} (the proxy could not write its state dir: see its output for this "
             "run's address)", 1)
    url = f"{where['dashboard']}/?token={token}"
    if new_token and where["pid"] is not None:  # the runtime file names the new address, not the dead one
        try:
            runtime.update(s.state_dir, dashboard_url=url)
        except OSError as e:
            warn(f"cannot write {runtime.path(s.state_dir)}: {e.strerror or e} (it still names the old address)")
    if as_json:
        print(json.dumps({"url": url, "dashboard": where["dashboard"], "pac_url": f"{where['dashboard']}/proxy.pac",
                          "token_file": str(tf.path), "pid": where["pid"], "listen": where["listen"],
                          "source": where["source"]}))
    else:
        print(url)
    if open_it and not webbrowser.open(url):
        warn("could not start a web browser: open the address above")

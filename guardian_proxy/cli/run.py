"""`guardian-proxy run`: start the proxy.

The loopback rule holds for every address the proxy listens on, however it is given (`--host`, a mode's
own `@HOST:PORT`, an empty host meaning every interface): an address that is not loopback needs
`--allow-remote` and `--proxyauth USER:PASS` (WireGuard peers authenticate with their keys), else the
proxy refuses to start in one line naming the address. The banner prints the addresses really bound.
Then the state directory and its files are checked (cli/startup.py), all before any model loads.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import typer

from .. import runtime
from ..domains import split_hostport
from ..errors import GuardianError
from ..listen import Listen, bind_problem, hostport, listen_addresses, split_listen
from .app import app
from .common import CONFIG, console, fail, settings_from
from .startup import check_state


def check_bind(addrs: list[Listen], allow_remote: bool, proxyauth: str | None) -> None:
    """The loopback rule for every listen address (the one rule, guardian_proxy/listen.py; --host is one way to give
    an address)."""
    problem = bind_problem(addrs, allow_remote, proxyauth)
    if problem:
        fail(problem)


def check_free(addrs: list[Listen]) -> None:
    """A port already taken is said in one line with the fix, before any model loads (mitmproxy would say it
    seconds later, with its advice and tracebacks). The dashboard's port is only a warning later (it is optional)."""
    import errno
    import socket

    for a in addrs:
        if a.port == 0:
            continue
        kind = socket.SOCK_DGRAM if a.mode in ("wireguard", "dns") else socket.SOCK_STREAM
        host = a.host or "::"
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, kind) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((host, a.port))
            except OSError as e:
                if e.errno == errno.EADDRINUSE:
                    fail(f"port {a.port} on {a.where} is already in use (another proxy running? "
                         f"`guardian-proxy doctor` says): stop it, or pass --port N")
                if e.errno == errno.EADDRNOTAVAIL:
                    fail(f"cannot listen on {a.where}: no such address on this machine; pass --host 127.0.0.1")
                if e.errno == errno.EACCES:
                    fail(f"cannot listen on {a.where}: ports below 1024 need privileges; pass --port 8080")
                fail(f"cannot listen on {a.where}: {e.strerror}")


def parse_hostport(value: str) -> tuple[str, int]:
    try:
        return split_hostport(value)
    except ValueError as e:
        fail(str(e))


def bound_addresses(addrs: list[Listen], skip_port: int | None) -> list[tuple[str, int]]:
    """(host, port) of the sockets this process really listens on for `addrs` (the kernel's view, see
    cli/sockets.py; the dashboard's port left out), else the addresses asked for."""
    from .sockets import listening

    proto = "udp" if any(a.mode in ("wireguard", "dns") for a in addrs) else "tcp"
    wanted = {a.port for a in addrs}
    real = [(h, p) for h, p in listening(proto) if p != skip_port and (p in wanted or 0 in wanted)]
    return real or [(a.host, a.port) for a in addrs]


def client_address(host: str, port: int) -> str:
    """How a client on this machine reaches a listen address (a wildcard bind through loopback)."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return hostport(host, port)


#: `--set KEY=VALUE` keys that are this command's own flags: they go through the same rules (the loopback rule for
#: listen_host and mode) — mitmproxy's spelling and the guardian option name both work
_SET_FLAGS = {"listen_host": "host", "listen_port": "port", "ssl_insecure": "ssl_insecure", "confdir": "confdir",
              "mode": "mode", "proxyauth": "proxyauth", "guardian_config": "config", "guardian_state_dir": "state_dir",
              "guardian_log": "log", "guardian_dashboard_port": "dashboard_port",
              "guardian_redirect_upstream": "redirect_upstream", "guardian_workers": "workers",
              "guardian_allow_remote": "allow_remote"}
_TRUE = ("true", "1", "yes", "on", "")


def split_sets(sets: list[str]) -> tuple[dict[str, str], list[str]]:
    """`--set` specs → (this command's own flags by name, the rest for mitmproxy as given)."""
    own: dict[str, str] = {}
    rest: list[str] = []
    for spec in sets:
        key, _, value = spec.partition("=")
        if key.strip() in _SET_FLAGS:
            own[_SET_FLAGS[key.strip()]] = value
        else:
            rest.append(spec)
    return own, rest


def _set_number(own: dict[str, str], flag: str) -> int | None:
    """A number given as `--set KEY=N` (None: not given); a value that is not one is one line naming the key."""
    if flag not in own:
        return None
    try:
        return int(own[flag])
    except ValueError:
        key = next(k for k, v in _SET_FLAGS.items() if v == flag and k.startswith("guardian_")) \
            if flag in ("dashboard_port", "workers") else f"listen_{flag}"
        fail(f"--set {key}={own[flag]}: expected a whole number")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"guardian-proxy {version('guardian-proxy')} (mitmproxy {version('mitmproxy')})")
        raise typer.Exit()


@app.command()
def run(
    host: str = typer.Option(None, "--host", "--listen-host", help="Address to listen on (default 127.0.0.1)."),
    port: int = typer.Option(None, "--port", "-p", "--listen-port", help="Port to listen on (default 8080)."),
    config: Path = CONFIG,
    state_dir: Path = typer.Option(None, "--state-dir", help="Decision log, vault, overrides, user policies."),
    log: Path = typer.Option(None, "--log", help="Decision log file (default <state-dir>/decisions.jsonl)."),
    confdir: str = typer.Option("~/.mitmproxy", "--confdir", help="mitmproxy configuration and CA directory."),
    redirect_upstream: str = typer.Option(
        None, "--redirect-upstream", help="Send every upstream connection to HOST:PORT, keeping Host and SNI."),
    allow_remote: bool = typer.Option(False, "--allow-remote", help="Permit a non-loopback bind (needs --proxyauth)."),
    proxyauth: str = typer.Option(None, "--proxyauth", help="USER:PASS required from clients."),
    ssl_insecure: bool = typer.Option(False, "--ssl-insecure", "-k", help="Do not verify upstream TLS certificates."),
    mode: list[str] = typer.Option(None, "--mode", help="mitmproxy mode: regular (default), transparent, "
                                   "wireguard[:CONF][@PORT], socks5, upstream:URL, each [@[HOST:]PORT] "
                                   "(mitmproxy 11 syntax); the loopback rule applies to HOST too."),
    dashboard_port: int = typer.Option(None, "--dashboard-port", min=0, max=65535,
                                       help="Live dashboard on 127.0.0.1:N (default 8081; 0 = off)."),
    workers: int = typer.Option(None, "--workers", min=0, max=256,
                                help="Evaluation worker processes (default one per core; 0 = threads of the "
                                     "proxy process)."),
    sets: list[str] = typer.Option(None, "--set", metavar="KEY=VALUE",
                                   help="Any mitmproxy option (ignore_hosts, upstream_cert, …) or guardian option "
                                        "(guardian_state_dir, guardian_config, …), as `mitmdump --set`."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Errors only on the console (no decision lines)."),
    verbose: bool = typer.Option(False, "--verbose", "-v",
                                 help="A line for allowed requests too, and mitmproxy's informational lines."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the versions and exit."),
) -> None:
    """Start the proxy (127.0.0.1:8080 by default) with the embedded defaults. mitmproxy's own spellings work too
    (`-p/--listen-port`, `--listen-host`, `-k/--ssl-insecure`, `--mode`, `--set KEY=VALUE`, `-q`, `-v`).

    The console prints one line per rewritten or blocked request (time, client, program, method, host, what was
    done and why; never a value); `-q` silences them, `-v` adds the allowed ones."""
    own, mitm_sets = split_sets(sets or [])
    host = host if host is not None else own.get("host")
    port = port if port is not None else _set_number(own, "port")
    dashboard_port = dashboard_port if dashboard_port is not None else _set_number(own, "dashboard_port")
    workers = workers if workers is not None else _set_number(own, "workers")
    config = config or (Path(own["config"]) if own.get("config") else None)
    state_dir = state_dir or (Path(own["state_dir"]) if own.get("state_dir") else None)
    log = log or (Path(own["log"]) if own.get("log") else None)
    confdir = own.get("confdir") or confdir
    redirect_upstream = redirect_upstream or own.get("redirect_upstream") or None
    proxyauth = proxyauth or own.get("proxyauth") or None
    ssl_insecure = ssl_insecure or own.get("ssl_insecure", "false").strip().lower() in _TRUE
    allow_remote = allow_remote or own.get("allow_remote", "false").strip().lower() in _TRUE
    if own.get("mode"):
        mode = [*(mode or []), own["mode"]]
    s = settings_from(config, state_dir, log, host=host, port=port, allow_remote=allow_remote or None,
                      proxyauth=proxyauth, dashboard_port=dashboard_port, workers=workers)
    specs = []
    for spec in mode or []:
        from ..mitm.serve import check_mode

        try:
            name = check_mode(spec)
        except ValueError as e:
            fail(f"invalid --mode {spec!r}: {e}")
        if name == "wireguard" and "@" not in spec and port is None:
            spec += "@51820"  # WireGuard's usual UDP port, not the HTTP proxy's 8080
        specs.append(spec)
    addrs = listen_addresses(specs, s.host, s.port)
    check_bind(addrs, s.allow_remote, s.proxyauth)
    if len(specs) > 1:
        fail(f"one --mode at a time (got {len(specs)}: {', '.join(specs)}); start one proxy per mode")
    spec = addrs[0].spec if addrs else (specs[0] if specs else None)
    mode_name = addrs[0].mode if addrs else (split_listen(spec)[0] if spec else "regular")
    redirect = parse_hostport(redirect_upstream) if redirect_upstream else None
    check_free(addrs)
    try:
        check_state(s)  # before any model loads: one line naming the file and the fix
        if mitm_sets:
            from ..mitm.serve import check_sets

            check_sets(mitm_sets)  # an unknown key or a bad value, named, before the models load
    except GuardianError as e:
        fail(str(e))
    given_state = state_dir

    from ..mitm.app import dashboard_for, open_gateway
    from ..mitm.serve import ca_cert_path, run_proxy

    def loading(processes) -> None:
        console.print(f"[dim]loading models{f' ({processes.n} evaluation workers)' if processes else ''} …[/]")

    try:  # the one start-up path (mitm/app.py), shared with the mitmproxy script
        gateway, processes = open_gateway(s, loading)
    except GuardianError as e:
        fail(f"cannot start: {e}")

    dash = None
    if s.dashboard_port:
        first = addrs[0] if addrs else Listen(s.host, s.port, mode_name, spec)
        chost = client_address(first.host, first.port).rsplit(":", 1)[0].strip("[]")
        dash = dashboard_for(gateway, s.dashboard_port, (chost, first.port), spec,
                             run_options={"ssl_insecure": ssl_insecure, "redirect_upstream": redirect_upstream,
                                          "confdir": str(Path(confdir).expanduser()),
                                          "ca": str(ca_cert_path(confdir))})

    def say(text: str) -> None:  # one line each, never wrapped (the banner is read by scripts and tests)
        console.print(text, soft_wrap=True, highlight=False)

    def ready() -> None:
        ca = ca_cert_path(confdir)
        bound = bound_addresses(addrs, dash.port if dash is not None and dash.running else None)
        if mode_name == "regular":
            where = ", ".join(f"http://{hostport(h, p)}" for h, p in bound)
            say(f"[bold green]guardian-proxy[/] listening on {where}")
        else:
            where = ", ".join(hostport(h, p) for h, p in bound)
            say(f"[bold green]guardian-proxy[/] listening on {where + ' ' if where else ''}in {mode_name} "
                f"mode ({spec})")
        if mode_name == "wireguard":
            say(f"WireGuard client configuration: {Path(confdir).expanduser() / 'wireguard-client.conf'}")
        if dash is not None and dash.running:
            say(f"dashboard: {dash.url}")
            say(f"PAC file for browsers: {dash.pac_url}")
        elif dash is not None:
            say(f"[yellow]warning:[/] {dash.error}")
        # the record first: whoever reads the banner to its "CA certificate:" line finds runtime.json written
        runtime.write(s.state_dir, runtime.info(bound, spec or mode_name, dash.url if dash is not None and dash.running
                                                else None, confdir, ca))
        say(f"decision log: {s.decision_log}")
        say(f"CA certificate: {ca}")
        say("  trust it to inspect HTTPS: Firefox → Settings → Certificates → Import; "
            f"Debian/Ubuntu: sudo cp {ca} /usr/local/share/ca-certificates/mitmproxy.crt && "
            "sudo update-ca-certificates; macOS: open it in Keychain Access and set 'Always Trust'")
        if mode_name in ("regular", "socks5") and bound:
            env = "guardian-proxy env" + (f" --state-dir {shlex.quote(str(given_state))}" if given_state else "")
            say(f'  command-line tools and agents: eval "$({env})" (the proxy variables, and CURL_CA_BUNDLE, '
                "SSL_CERT_FILE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS with this CA)")
            flag = "-x" if mode_name == "regular" else "--socks5-hostname"
            auth = " --proxy-user USER:PASS" if s.proxyauth else ""  # never the password itself
            say(f"  one request: curl {flag} {client_address(*bound[0])}{auth} --cacert {shlex.quote(str(ca))} "
                "https://example.com/")

    if verbose and not quiet:  # the root logger's WARNING would drop them before mitmproxy's handler sees them
        import logging

        logging.getLogger().setLevel(logging.INFO)  # allowed decisions and mitmproxy's informational lines
        for noisy in ("presidio-analyzer", "asyncio", "hpack", "tornado"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        run_proxy(gateway, s.host.strip("[]"), s.port, confdir=confdir, redirect=redirect, ssl_insecure=ssl_insecure,
                  proxyauth=s.proxyauth, mode=spec, on_ready=ready, dashboard=dash, sets=mitm_sets,
                  verbosity="error" if quiet else "info" if verbose else "warn", processes=processes)
    except GuardianError as e:
        fail(str(e))
    finally:
        if processes is not None:
            processes.close()
        runtime.remove(s.state_dir)


@app.command("addon-path")
def addon_path() -> None:
    """Print the path of the mitmproxy script: `mitmdump -s "$(guardian-proxy addon-path)"` (or mitmweb -s)."""
    from importlib.util import find_spec

    typer.echo(find_spec("guardian_proxy.mitm.script").origin)

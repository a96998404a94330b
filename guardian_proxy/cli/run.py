"""`guardian-proxy run`: start the proxy."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import typer

from ..resources import ensure_private_dir
from .app import app
from .common import CONFIG, console, fail, settings_from


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_hostport(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit():
        fail(f"expected HOST:PORT, got {value!r}")
    return host.strip("[]"), int(port)


@app.command()
def run(
    host: str = typer.Option(None, help="Address to listen on (default 127.0.0.1)."),
    port: int = typer.Option(None, help="Port to listen on (default 8080)."),
    config: Path = CONFIG,
    state_dir: Path = typer.Option(None, "--state-dir", help="Decision log, vault, overrides, user policies."),
    log: Path = typer.Option(None, "--log", help="Decision log file (default <state-dir>/decisions.jsonl)."),
    confdir: str = typer.Option("~/.mitmproxy", "--confdir", help="mitmproxy configuration and CA directory."),
    redirect_upstream: str = typer.Option(
        None, "--redirect-upstream", help="Send every upstream connection to HOST:PORT, keeping Host and SNI."),
    allow_remote: bool = typer.Option(False, "--allow-remote", help="Permit a non-loopback bind (needs --proxyauth)."),
    proxyauth: str = typer.Option(None, "--proxyauth", help="USER:PASS required from clients."),
    ssl_insecure: bool = typer.Option(False, "--ssl-insecure", help="Do not verify upstream TLS certificates."),
    mode: str = typer.Option(None, "--mode", help="mitmproxy mode: regular (default), transparent, "
                             "wireguard[:CONF][@PORT], socks5, upstream:URL (mitmproxy 11 syntax)."),
    dashboard_port: int = typer.Option(None, "--dashboard-port", min=0, max=65535,
                                       help="Live dashboard on 127.0.0.1:N (default 8081; 0 = off)."),
) -> None:
    """Start the proxy (127.0.0.1:8080 by default) with the embedded defaults."""
    s = settings_from(config, state_dir, log, host=host, port=port, allow_remote=allow_remote or None,
                      proxyauth=proxyauth, dashboard_port=dashboard_port)
    mode_name = "regular"
    if mode:
        from ..addon import check_mode

        try:
            mode_name = check_mode(mode)
        except ValueError as e:
            fail(f"invalid --mode {mode!r}: {e}")
        if mode_name == "wireguard" and "@" not in mode and port is None:
            mode += "@51820"  # WireGuard's usual UDP port, not the HTTP proxy's 8080
    if not _is_loopback(s.host):
        if not s.allow_remote:
            fail(f"refusing to listen on {s.host}: binding beyond loopback needs --allow-remote and --proxyauth")
        if not s.proxyauth and mode_name != "wireguard":  # WireGuard peers authenticate with their keys
            fail("--allow-remote needs proxy authentication: pass --proxyauth USER:PASS")
    redirect = parse_hostport(redirect_upstream) if redirect_upstream else None
    ensure_private_dir(s.state_dir)

    from ..addon import ca_cert_path, run_proxy
    from ..pipeline import Gateway

    console.print("[dim]loading models …[/]")
    gateway = Gateway.from_settings(s)
    gateway.warm_up()

    dash = None
    if s.dashboard_port:
        from ..dashboard import Dashboard

        dash = Dashboard(gateway.settings, port=s.dashboard_port, proxy=(s.host, s.port), mode=mode,
                         overrides=getattr(gateway, "overrides", None))

    def ready() -> None:
        ca = ca_cert_path(confdir)
        if mode_name == "regular":
            console.print(f"[bold green]guardian-proxy[/] listening on http://{s.host}:{s.port}")
        else:
            where = f"{s.host}:{s.port} " if "@" not in mode else ""
            console.print(f"[bold green]guardian-proxy[/] listening on {where}in {mode_name} mode ({mode})")
        if mode_name == "wireguard":
            console.print(f"WireGuard client configuration: {Path(confdir).expanduser() / 'wireguard-client.conf'}")
        if dash is not None and dash.running:
            console.print(f"dashboard: {dash.url}")
            console.print(f"PAC file for browsers: {dash.pac_url}")
        elif dash is not None:
            console.print(f"[yellow]warning:[/] {dash.error}")
        console.print(f"decision log: {s.decision_log}")
        console.print(f"CA certificate: {ca}")
        console.print("  trust it to inspect HTTPS: Firefox → Settings → Certificates → Import; "
                      f"Debian/Ubuntu: sudo cp {ca} /usr/local/share/ca-certificates/mitmproxy.crt && "
                      "sudo update-ca-certificates; macOS: open it in Keychain Access and set 'Always Trust'")
        console.print(f"  command-line tools: HTTPS_PROXY=http://{s.host}:{s.port} SSL_CERT_FILE={ca}")

    run_proxy(gateway, s.host, s.port, confdir=confdir, redirect=redirect, ssl_insecure=ssl_insecure,
              proxyauth=s.proxyauth, mode=mode, on_ready=ready, dashboard=dash)

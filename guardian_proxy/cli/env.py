"""`guardian-proxy env`: the environment lines that send command-line tools and agents through the proxy.

    eval "$(guardian-proxy env)"        # POSIX shells
    guardian-proxy env --shell fish | source

Both spellings of the proxy variables are printed (curl and wget read the lower-case ones; many
libraries the upper-case ones). SSL_CERT_FILE, REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE replace a tool's
trust store, so by default they point at a bundle of the system CAs plus mitmproxy's CA (written to the
state dir); NODE_EXTRA_CA_CERTS adds to Node's store, so it gets the mitmproxy CA alone. Node reads the
proxy variables only with NODE_USE_ENV_PROXY=1 (Node 22.21+/24.5+); older Node needs an agent that does.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import typer

from ..resources import ensure_private_dir
from .app import app
from .common import CONFIG, STATE_DIR, console, fail, settings_from

SYSTEM_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem",
                  "/etc/ssl/ca-bundle.pem")
NO_PROXY = "localhost,127.0.0.1,::1"


def system_bundle() -> Path | None:
    for p in SYSTEM_BUNDLES:
        if Path(p).is_file():
            return Path(p)
    try:
        import certifi

        return Path(certifi.where())
    except ImportError:
        return None


def write_bundle(ca: Path, dest: Path) -> Path:
    """System CAs + the proxy CA in one PEM file (rewritten only when it changes)."""
    parts = []
    base = system_bundle()
    if base is not None:
        parts.append(base.read_text(errors="replace").rstrip() + "\n")
    parts.append(ca.read_text().rstrip() + "\n")
    text = "".join(parts)
    if not dest.exists() or dest.read_text(errors="replace") != text:
        ensure_private_dir(dest.parent)
        dest.write_text(text)
        os.chmod(dest, 0o644)
    return dest


def env_lines(proxy_url: str, ca: Path, bundle: Path, shell: str = "sh") -> list[str]:
    pairs = [("HTTP_PROXY", proxy_url), ("HTTPS_PROXY", proxy_url), ("http_proxy", proxy_url),
             ("https_proxy", proxy_url), ("NO_PROXY", NO_PROXY), ("no_proxy", NO_PROXY),
             ("SSL_CERT_FILE", str(bundle)), ("REQUESTS_CA_BUNDLE", str(bundle)), ("CURL_CA_BUNDLE", str(bundle)),
             ("NODE_EXTRA_CA_CERTS", str(ca)), ("NODE_USE_ENV_PROXY", "1")]
    if shell == "fish":
        return [f"set -gx {k} {shlex.quote(v)};" for k, v in pairs]
    if shell == "powershell":
        return [f"$env:{k} = '{v}'" for k, v in pairs]
    return [f"export {k}={shlex.quote(v)}" for k, v in pairs]


@app.command("env")
def env_cmd(
    shell: str = typer.Option("sh", "--shell", help="sh (bash, zsh …) | fish | powershell"),
    ca_only: bool = typer.Option(False, "--ca-only", help="Point SSL_CERT_FILE at the mitmproxy CA alone (no bundle)."),
    host: str = typer.Option(None, "--host", help="Proxy address (default from settings: 127.0.0.1)."),
    port: int = typer.Option(None, "--port", help="Proxy port (default from settings: 8080)."),
    confdir: str = typer.Option("~/.mitmproxy", "--confdir", help="mitmproxy configuration and CA directory."),
    state_dir: Path = STATE_DIR,
    config: Path = CONFIG,
) -> None:
    """Print HTTP(S)_PROXY, SSL_CERT_FILE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS lines for your shell."""
    if shell not in ("sh", "fish", "powershell"):
        fail(f"--shell must be sh, fish or powershell, got {shell!r}")
    s = settings_from(config, state_dir, host=host, port=port)
    ca = Path(os.path.expanduser(confdir)) / "mitmproxy-ca-cert.pem"
    proxy_host = "127.0.0.1" if s.host in ("0.0.0.0", "::", "") else s.host
    url = f"http://{'[' + proxy_host + ']' if ':' in proxy_host else proxy_host}:{s.port}"
    if not ca.is_file():
        console.print(f"[yellow]warning:[/] no CA certificate at {ca} yet: start the proxy once "
                      "(`guardian-proxy run`) so mitmproxy creates it")
        bundle = ca
    elif ca_only:
        bundle = ca
    else:
        bundle = write_bundle(ca, s.state_dir / "ca-bundle.pem")
    for line in env_lines(url, ca, bundle, shell):
        print(line)

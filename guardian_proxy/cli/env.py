"""`guardian-proxy env`: the environment lines that send command-line tools and agents through the proxy.

    eval "$(guardian-proxy env)"        # POSIX shells
    guardian-proxy env --shell fish | source

Both spellings of the proxy variables are printed (curl and wget read the lower-case ones; many
libraries the upper-case ones). SSL_CERT_FILE, REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE replace a tool's
trust store, so by default they point at a bundle of the system CAs plus mitmproxy's CA (written to the
state dir); NODE_EXTRA_CA_CERTS adds to Node's store, so it gets the mitmproxy CA alone. Node reads the
proxy variables only with NODE_USE_ENV_PROXY=1 (Node 22.21+/24.5+); older Node needs an agent that does.

The address and the CA are the running proxy's (its `<state_dir>/runtime.json`, guardian_proxy/runtime.py):
a proxy started with `--port 9000 --confdir …` gets lines for 9000 and its CA. `--host`, `--port` and
`--confdir` given here win; with no proxy running the configured address is used, and a warning on stderr
says so. The bundle is 0600, written atomically, like every file in the state dir.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import typer

from .. import runtime
from ..private import write_atomic
from .app import app
from .common import CONFIG, STATE_DIR, console, fail, settings_from, warn

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
    """System CAs + the proxy CA in one PEM file, 0600 (rewritten only when it changes)."""
    parts = []
    base = system_bundle()
    if base is not None:
        parts.append(base.read_text(errors="replace").rstrip() + "\n")
    parts.append(ca.read_text().rstrip() + "\n")
    text = "".join(parts)
    if not dest.exists() or dest.read_text(errors="replace") != text:
        write_atomic(dest, text)
    elif dest.stat().st_mode & 0o077:
        os.chmod(dest, 0o600)  # written 0644 by earlier versions
    return dest


def client_host(host: str) -> str:
    """How a client on this machine reaches a listen host (a wildcard bind through loopback)."""
    return {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(host.strip("[]"), host.strip("[]"))


def proxy_url(host: str, port: int, scheme: str = "http") -> str:
    h = client_host(host)
    return f"{scheme}://{'[' + h + ']' if ':' in h else h}:{port}"


#: the URL scheme clients use for a running proxy's mode (modes without one take no proxy variables)
SCHEMES = {"regular": "http", "upstream": "http", "socks5": "socks5h"}


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
    confdir: str = typer.Option(None, "--confdir", help="mitmproxy configuration and CA directory (default: the "
                                "running proxy's, else ~/.mitmproxy)."),
    state_dir: Path = STATE_DIR,
    config: Path = CONFIG,
) -> None:
    """Print HTTP(S)_PROXY, SSL_CERT_FILE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS lines for your shell."""
    if shell not in ("sh", "fish", "powershell"):
        fail(f"--shell must be sh, fish or powershell, got {shell!r}")
    s = settings_from(config, state_dir, host=host, port=port)
    rt = runtime.read(s.state_dir)
    url = proxy_url(s.host, s.port)
    if rt is not None and host is None and port is None:
        scheme = SCHEMES.get(str(rt.get("mode") or "regular").split(":")[0])
        if scheme and rt["listen"]:
            url = proxy_url(*rt["listen"][0], scheme=scheme)
        else:
            warn(f"the running guardian-proxy (pid {rt['pid']}) is in {rt.get('mode')} mode, which takes no proxy "
                 f"variables; the lines below use the configured {s.host}:{s.port}")
    elif rt is None and host is None and port is None:
        warn(f"no guardian-proxy is running (no {runtime.path(s.state_dir)}): the lines below use the configured "
             f"address {s.host}:{s.port}; start it with `guardian-proxy run`")
    if confdir is None and rt is not None and rt.get("ca"):
        ca = Path(rt["ca"])
    else:
        ca = Path(os.path.expanduser(confdir or "~/.mitmproxy")) / "mitmproxy-ca-cert.pem"
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

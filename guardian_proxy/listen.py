"""The loopback rule, one for every launcher (`guardian-proxy run`, `mitmdump -s`, `mitmweb -s`).

The proxy listens on loopback only unless it is told otherwise twice: remote clients allowed (`--allow-remote`, or
`--set guardian_allow_remote=true` under mitmdump/mitmweb) and proxy authentication required from them
(`--proxyauth USER:PASS`; WireGuard peers authenticate with their keys). The rule holds for every address the proxy
listens on however it is given (`--host`/`--listen-host`, a mode's own `@HOST:PORT`, an empty host meaning every
interface). No mitmproxy import here: mode specs are split as mitmproxy 11 splits them.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass


def is_loopback(host: str) -> bool:
    """`localhost` or a loopback IP (`127.0.0.0/8`, `::1`, `::ffff:127.x`); '' (every interface) is not."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)


def hostport(host: str, port: int | None) -> str:
    """`127.0.0.1:8080`, `[::1]:8080`, `*:8080` (every interface)."""
    h = "*" if host == "" else f"[{host}]" if ":" in host else host
    return f"{h}:{port}"


@dataclass(frozen=True)
class Listen:
    """One address the proxy will listen on, as mitmproxy will resolve it."""

    host: str  # "" = every interface
    port: int
    mode: str  # mitmproxy's mode name: regular, socks5, upstream, wireguard …
    spec: str | None  # the spec handed to mitmproxy (None: plain --host/--port)

    @property
    def where(self) -> str:
        return hostport(self.host, self.port)


#: modes that open no listening socket (they redirect this machine's own traffic)
NO_SOCKET = ("local", "tun")


def split_listen(spec: str) -> tuple[str, str | None, int | None]:
    """`mode[:data][@[HOST:]PORT]` → (mode name, HOST or None, PORT or None), split exactly as mitmproxy 11
    splits it (mode_specs.ProxyMode.parse: the last '@', then the last ':'). The spec must be valid
    (mitm/serve.py `check_mode`) — a bad port here is a ValueError."""
    head, _, listen_at = spec.rpartition("@")
    if not head:
        head, listen_at = listen_at, ""
    name = head.partition(":")[0].lower()
    if not listen_at:
        return name, None, None
    host, sep, port = listen_at.rpartition(":")
    return (name, host, int(port)) if sep else (name, None, int(listen_at))


def listen_addresses(specs: list[str], host: str, port: int) -> list[Listen]:
    """Where each mode spec listens: its own `@HOST:PORT` wins over --host/--port, as mitmproxy applies
    them (the spec's host, else options.listen_host = --host; the spec's port, else --port). No spec:
    regular mode on --host:--port. A host in brackets loses them (mitmproxy hands it to getaddrinfo as
    it is, which knows no brackets)."""
    if not specs:
        return [Listen(host.strip("[]"), port, "regular", None)]
    out = []
    for spec in specs:
        name, lhost, lport = split_listen(spec)
        if lhost is not None and lhost.startswith("["):
            lhost = lhost.strip("[]")
            spec = f"{spec[: spec.rindex('@') + 1]}{lhost}:{lport}"
        if name in NO_SOCKET:
            continue
        out.append(Listen(host.strip("[]") if lhost is None else lhost, port if lport is None else lport, name, spec))
    return out


#: how each launcher spells the two permissions and the way back to loopback
RUN_FLAGS = {"allow": "--allow-remote", "auth": "--proxyauth USER:PASS", "local": "listen on 127.0.0.1"}
MITM_FLAGS = {"allow": "--set guardian_allow_remote=true", "auth": "--proxyauth USER:PASS",
              "local": "--listen-host 127.0.0.1"}


def bind_problem(addrs: list[Listen], allow_remote: bool, proxyauth: str | None,
                 flags: dict[str, str] = RUN_FLAGS) -> str | None:
    """The loopback rule for every listen address: None when it holds, else one line naming the addresses and the fix."""
    remote = [a for a in addrs if not is_loopback(a.host)]
    if not remote:
        return None
    where = ", ".join(f"{a.where}{' (every interface)' if a.host in ('', '0.0.0.0', '::') else ''}"
                      for a in remote)
    if not allow_remote:
        return (f"refusing to listen on {where}: binding beyond loopback needs {flags['allow']} and {flags['auth']} "
                f"(or {flags['local']})")
    if not proxyauth and any(a.mode != "wireguard" for a in remote):  # WireGuard peers authenticate with keys
        return f"{flags['allow']} needs proxy authentication to listen on {where}: pass {flags['auth']}"
    return None

"""The addresses this process really listens on, for the `run` banner: read from the kernel (Linux
`/proc/self/net/*` matched against this process's socket inodes), not from what was asked for. mitmproxy
stays inside guardian_proxy/mitm/, so its own list of listen addresses is not read here. Elsewhere: an empty list
(the banner then prints the addresses asked for)."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

_LISTEN = {"tcp": "0A", "udp": "07"}  # TCP_LISTEN; an unconnected UDP socket


def _address(hexaddr: str) -> str:
    raw = bytes.fromhex(hexaddr)
    if len(raw) == 4:
        return str(ipaddress.IPv4Address(raw[::-1]))
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))  # four host-order 32-bit words
    ip = ipaddress.IPv6Address(words)
    return str(ip.ipv4_mapped) if ip.ipv4_mapped else str(ip)


def _inodes() -> set[str]:
    out = set()
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return out
    for fd in fds:
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            out.add(link[8:-1])
    return out


def listening(proto: str = "tcp") -> list[tuple[str, int]]:
    """(host, port) of this process's listening sockets of `proto` ("tcp" or "udp"), IPv4 then IPv6."""
    inodes = _inodes()
    found: list[tuple[str, int]] = []
    for table in (proto, proto + "6"):
        try:
            rows = Path(f"/proc/self/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if len(cols) < 10 or cols[3] != _LISTEN[proto] or cols[9] not in inodes:
                continue
            hexaddr, hexport = cols[1].split(":")
            try:
                found.append((_address(hexaddr), int(hexport, 16)))
            except ValueError:
                continue
    return sorted(set(found), key=found.index)

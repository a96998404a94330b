"""Who may talk to the dashboard: only this machine, only pages it served, only with the per-run token.

- The server binds to loopback only.
- `Host` must name the loopback address and port (defeats DNS rebinding).
- A request a browser marks `Sec-Fetch-Site: cross-site`, or whose `Origin` is not the dashboard's own, is
  refused (the PAC file excepted: browsers fetch it without a page).
- Pages and reads need the token: `?token=` once (it becomes a SameSite=Strict, HttpOnly cookie named for
  the port), the cookie, or the `X-Guardian-Token` header.
- Writes (overrides) need the header itself: a cross-site form cannot set it, and a cross-site script
  that tries is stopped by the CORS preflight the server never answers.
"""

from __future__ import annotations

import hmac
import secrets
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, urlsplit

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                               "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def new_token() -> str:
    return secrets.token_urlsafe(24)


class Guard:
    def __init__(self, port: int, token: str | None = None):
        self.port = port
        self.token = token or new_token()
        self.cookie_name = f"guardian_dashboard_{port}"
        self.allowed_hosts = {f"{h}:{port}" for h in LOOPBACK_NAMES}
        self.allowed_origins = {f"http://{h}" for h in self.allowed_hosts}

    def same_site(self, headers) -> tuple[bool, str]:
        """(ok, reason): the Host/Origin/Sec-Fetch-Site rules, for every request but the PAC file."""
        host = (headers.get("Host") or "").lower()
        if host not in self.allowed_hosts:
            return False, f"unexpected Host {host!r}"
        origin = headers.get("Origin")
        if origin is not None and origin.lower() not in self.allowed_origins:
            return False, "cross-site request"
        if (headers.get("Sec-Fetch-Site") or "").lower() == "cross-site":
            return False, "cross-site request"
        return True, ""

    def _eq(self, value: str | None) -> bool:
        return bool(value) and hmac.compare_digest(value.encode(), self.token.encode())

    def query_token(self, path: str) -> str | None:
        vals = parse_qs(urlsplit(path).query).get("token")
        return vals[0] if vals else None

    def cookie_token(self, headers) -> str | None:
        raw = headers.get("Cookie")
        if not raw:
            return None
        c = SimpleCookie()
        try:
            c.load(raw)
        except Exception:
            return None
        m = c.get(self.cookie_name)
        return m.value if m else None

    def can_read(self, path: str, headers) -> bool:
        return (self._eq(headers.get("X-Guardian-Token")) or self._eq(self.cookie_token(headers))
                or self._eq(self.query_token(path)))

    def can_write(self, headers) -> bool:
        return self._eq(headers.get("X-Guardian-Token"))

    def set_cookie(self) -> str:
        return f"{self.cookie_name}={self.token}; Path=/; HttpOnly; SameSite=Strict"

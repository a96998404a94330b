"""Who may talk to the dashboard: only this machine, only pages it served, only with the dashboard's token.

- The server binds to loopback only.
- `Host` must name the loopback address and port (defeats DNS rebinding).
- A request a browser marks `Sec-Fetch-Site: cross-site`, or whose `Origin` is not the dashboard's own, is
  refused (the PAC file excepted: browsers fetch it without a page).
- Pages and reads need the token: `?token=` once (it becomes a SameSite=Strict, HttpOnly cookie named for
  the port), the cookie, or the `X-Guardian-Token` header.
- Writes (overrides) need the header itself: a cross-site form cannot set it, and a cross-site script
  that tries is stopped by the CORS preflight the server never answers.
- The token is kept in `<state_dir>/dashboard.token` (mode 0600, created once, never followed through a
  symlink): the address, an open tab and its cookie stay valid across restarts. `rotate` writes a new one
  (`guardian-proxy dashboard --new-token`); a running dashboard reads the file again when it changes, so old
  addresses stop working at once, and a live stream opened with the old token is ended (server.py `_events`). An unreadable or damaged file is replaced; a state dir that cannot be
  written gives a token for this run only (with a warning).
"""

from __future__ import annotations

import hmac
import logging
import os
import re
import secrets
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

log = logging.getLogger("guardian_proxy.dashboard")
TOKEN_FILE = "dashboard.token"
_TOKEN_RE = re.compile(r"[A-Za-z0-9_\-]{16,200}")
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


class TokenFile:
    """`<state_dir>/dashboard.token`: one token, kept across runs (see the module's rule)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._seen: tuple | None = None  # (inode, mtime_ns, size) of the file last read
        self._token: str | None = None

    @classmethod
    def for_state_dir(cls, state_dir: Path) -> TokenFile:
        return cls(Path(state_dir) / TOKEN_FILE)

    def read(self) -> str | None:
        """The token in the file, or None when there is none (missing, unreadable, not a token)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if st.st_mode & 0o077 and st.st_uid == os.getuid():
                os.fchmod(fd, 0o600)  # readable by others: ours to tighten
                log.warning("dashboard: %s was readable by other users; now mode 0600", self.path)
            text = os.read(fd, 512).decode("ascii", "replace").strip()
        except OSError:
            return None
        finally:
            os.close(fd)
        return text if _TOKEN_RE.fullmatch(text) else None

    def get(self) -> str:
        """The kept token; created (0600) when there is none yet."""
        return self.read() or self.rotate()

    def rotate(self) -> str:
        """Write a new token (atomically, mode 0600) and return it. OSError when the directory is not writable."""
        token = new_token()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.write(fd, (token + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)
        self._seen, self._token = None, None
        return token

    def current(self, fallback: str) -> str:
        """The file's token when it changed since last read (one stat a call), else the last one (or
        `fallback`, while the file is gone or damaged: an open tab is not locked out by a deleted file)."""
        try:
            st = os.stat(self.path, follow_symlinks=False)
        except OSError:
            return self._token or fallback
        seen = (st.st_ino, st.st_mtime_ns, st.st_size)
        if seen != self._seen:
            self._seen, self._token = seen, self.read()
        return self._token or fallback


def stable_token(state_dir: Path) -> tuple[str, TokenFile | None]:
    """(token, its file) for a dashboard on `state_dir`; (a token for this run, None) when the file cannot be
    written (a warning says so)."""
    tf = TokenFile.for_state_dir(state_dir)
    try:
        return tf.get(), tf
    except OSError as e:
        log.warning("dashboard: cannot keep a token in %s (%s): this run's address changes at the next start",
                    tf.path, e.strerror or e)
        return new_token(), None


class Guard:
    def __init__(self, port: int, token: str | None = None, token_file: TokenFile | None = None):
        self.port = port
        self._token = token or (token_file.get() if token_file is not None else new_token())
        self.token_file = token_file
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

    @property
    def token(self) -> str:
        """The token in force: the kept file's (re-read when it changes), else this run's."""
        if self.token_file is not None:
            self._token = self.token_file.current(self._token)
        return self._token

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

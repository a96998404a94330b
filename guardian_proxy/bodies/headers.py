"""Request headers that can carry personal data, read as text fields and written back in their own format.

    header:x-user-email            a custom header (`X-…`), `From` (RFC 9110: the user's e-mail), `X-Forwarded-For`
    header:referer                 the Referer sent to another site (a page address whose query may hold `?email=`)
    header:authorization>basic:user       the user of `Authorization: Basic` (decoded; re-encoded on write-back)
    header:authorization>basic:password   its password (a credential whatever it looks like)

Protocol headers are not read: Host, Content-*, Accept*, User-Agent, Fetch Metadata and client hints, caching
and connection headers, CSRF tokens, request ids, signed-request headers (`X-Amz-*`, `X-Goog-*`), SDK telemetry
(`X-Stainless-*`), Chrome's `X-Client-Data` variations id, and bearer tokens (a credential issued by the
destination itself). Basic credentials are read only on their way to a tracker (`own_login=False`): sent anywhere
else they are the user's own login to the destination, which holds them already. Cookies have their own reader (`parse_cookies`). A header field repeated is read once per
occurrence (`header:x-tag#1`) and written back joined, as HTTP allows.
"""

from __future__ import annotations

import base64
import binascii
import re

from ..types import TextField

PREFIX = "header:"
BASIC = PREFIX + "authorization>basic:"
_SKIP = frozenset({
    "host", "content-type", "content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive",
    "accept", "accept-encoding", "accept-language", "user-agent", "origin", "cookie", "cache-control", "pragma",
    "te", "upgrade", "upgrade-insecure-requests", "dnt", "priority", "purpose", "range", "expect", "via",
    "x-requested-with", "x-csrf-token", "x-xsrf-token", "x-csrftoken", "x-request-id", "x-correlation-id",
    "x-client-data", "x-client-version", "x-app-version", "x-api-version", "x-http-method-override",
    "x-forwarded-proto", "x-forwarded-host", "x-forwarded-port", "x-real-ip", "authorization", "proxy-authorization",
    "x-api-key", "x-sentry-auth", "dd-api-key", "x-newrelic-id", "x-amzn-trace-id", "traceparent", "tracestate",
    "baggage", "sentry-trace", "x-datadog-trace-id", "x-datadog-parent-id", "x-b3-traceid", "x-b3-spanid",
})
_SKIP_PREFIXES = ("sec-", "if-", "access-control-", "x-amz-", "x-goog-", "x-stainless-", "x-datadog-", "x-b3-",
                  "x-ms-", "x-vercel-", "x-nextjs-", "x-firebase-", "x-guardian-")


def _readable(name: str) -> bool:
    n = name.lower()
    return n not in _SKIP and not n.startswith(_SKIP_PREFIXES) and (n.startswith("x-") or n in ("from", "referer"))


def carries_text(headers: list[tuple[str, str]]) -> bool:
    """A header that may hold free text (an `X-…` header, `From`, `Authorization: Basic`) is present: the request is
    not one whose only text is its URL path. The Referer alone does not count: it is a URL, read by patterns."""
    return any((_readable(k) and k.lower() != "referer") or (k.lower() == "authorization" and _basic(v) is not None)
               for k, v in headers)


def parse_headers(headers: list[tuple[str, str]], third_party: bool, own_login: bool = False) -> list[TextField]:
    """Text fields of the headers that can carry personal data. The Referer is read only on its way to another
    site (`third_party`): the site already holds its own page addresses; Basic credentials only when they are not
    the user's own login to the destination (`own_login`)."""
    out: list[TextField] = []
    seen: dict[str, int] = {}
    for k, v in headers:
        name = k.lower()
        if name == "authorization":
            cred = _basic(v)
            if cred is not None and not own_login:
                user, _, password = cred.partition(":")
                out.append(TextField(path=f"{BASIC}user", text=user, key="username"))
                out.append(TextField(path=f"{BASIC}password", text=password, key="password"))
            continue
        if not v.strip() or not _readable(name) or (name == "referer" and not third_party):
            continue
        n = seen.get(name, 0)
        seen[name] = n + 1
        # the Referer is read for what sits inside it (an e-mail in its query), not as a page view of its own
        out.append(TextField(path=f"{PREFIX}{name}" + (f"#{n}" if n else ""), text=v,
                             key=None if name == "referer" else name))
    return out


def _basic(value: str) -> str | None:
    scheme, _, cred = value.strip().partition(" ")
    if scheme.lower() != "basic" or not cred:
        return None
    try:
        text = base64.b64decode(cred.strip() + "=" * (-len(cred.strip()) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    return text if ":" in text else None


_INDEX = re.compile(r"#(\d+)$")


def rewrite_headers(headers: list[tuple[str, str]], replacements: dict[str, str]) -> dict[str, str]:
    """name → new value for every header a `header:` replacement addresses (repeated fields joined by ", ")."""
    repl = {p[len(PREFIX):]: t for p, t in replacements.items() if p.startswith(PREFIX)}
    if not repl:
        return {}
    out: dict[str, list[str]] = {}
    seen: dict[str, int] = {}
    for k, v in headers:
        name = k.lower()
        if name == "authorization":
            cred = _basic(v)
            keys = (f"{BASIC[len(PREFIX):]}user", f"{BASIC[len(PREFIX):]}password")
            if cred is not None and any(key in repl for key in keys):
                user, _, password = cred.partition(":")
                new = f"{repl.get(keys[0], user)}:{repl.get(keys[1], password)}"
                out.setdefault(name, []).append("Basic " + base64.b64encode(new.encode("utf-8")).decode("ascii"))
            continue
        n = seen.get(name, 0)
        seen[name] = n + 1
        key = name + (f"#{n}" if n else "")
        if any(_INDEX.sub("", r) == name for r in repl):
            out.setdefault(name, []).append(repl.get(key, v))
    return {name: ", ".join(values) for name, values in out.items()}

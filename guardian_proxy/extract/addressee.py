"""Who addressed the destination: a page, or the user's own client.

A browser marks what a page makes: Origin (every CORS request and every POST), Referer, and, to a secure origin,
the Fetch Metadata headers (`Sec-Fetch-Site/-Mode/-Dest/-User`). A request with none of them was made by no page.
It is one of:

    tool        curl, wget, Python (httpx, requests, urllib), Node (its fetch sends `Sec-Fetch-Mode: cors` and no
                other Fetch Metadata: no browser does that), Go, an agent or a script: the user's own
                client, sent to the host the user (or the user's agent) named. That host is the user's addressee
                (recipient rule `addressed`), unless it is a known tracker, ad network, social tracker or broker.
                A browser's User-Agent does not change this over HTTPS, where a browser always sends Fetch
                Metadata: a client without it only borrows the name.
    navigation  a browser's top-level navigation to a plain-HTTP address (no Fetch Metadata outside secure
                contexts) that was typed, picked from a bookmark or reloaded: `Upgrade-Insecure-Requests: 1`,
                which browsers send on navigations only, with no Origin and no Referer. The page being opened is
                the site (as `Sec-Fetch-Mode: navigate` says over HTTPS): a developer's own server on
                `http://dev.example.com:3000` is the site the user opened.
    browser     any other request with a browser's User-Agent over plain HTTP: a page may have made it without
                saying so (`Referrer-Policy: no-referrer`), so nothing is assumed
    app         a mobile app's runtime (Android's Dalvik or OkHttp, Apple's CFNetwork): the app's SDKs report to
                their vendors without page headers too, so nothing is assumed
    page        a page made it (Origin, Referer or Fetch Metadata)
    stream      not HTTP at all (a raw TCP/UDP stream the proxy relays: `tcp://host:port/`): no headers to read,
                so nothing is assumed

The program that sent it (RawRequest.app, guardian_proxy/procinfo.py; known only in the proxy, for a client on
this machine) corroborates the headers, only ever towards assuming less: a request with no page headers from a
browser's own process is the browser's background traffic (updates, safe browsing, sync), `browser`, not the
user's tool. A command-line program never turns a browser's or an app's request into `tool`: a script may speak
for an app (an emulator, a test harness, an SDK run from Python), and the headers say which.
"""

from __future__ import annotations

import re

from ..types import RawRequest

HTTP_SCHEMES = ("http", "https", "ws", "wss")
#: clients that no page speaks for: the explanation says "no page made" it (flag `no_page`)
PAGELESS = frozenset({"tool", "app", "browser"})
#: what a page's request carries. `Sec-Fetch-Mode` alone is not among them: a browser sends it only together with
#: `Sec-Fetch-Site` and `Sec-Fetch-Dest`, while Node's own fetch (undici) sends `Sec-Fetch-Mode: cors` and nothing
#: else on every request a script makes
PAGE_HEADERS = ("origin", "referer", "sec-fetch-site", "sec-fetch-dest", "sec-fetch-user")
_BROWSER = re.compile(r"^Mozilla/\d")
_APP_RUNTIME = re.compile(r"dalvik|cfnetwork|okhttp|\bandroid\b|iphone|ipad|\bios\b|darwin/", re.IGNORECASE)


def made_by_page(req: RawRequest) -> bool:
    """Origin, Referer or a browser's Fetch Metadata (Sec-Fetch-Site, -Dest, -User): a page made the request (an
    `Origin: null` counts: an opaque page, a sandboxed frame or a redirect, still a page). `Sec-Fetch-Mode: cors`
    alone is Node's fetch, a script (`PAGE_HEADERS`)."""
    return any(req.header(name) is not None for name in PAGE_HEADERS)


def client(req: RawRequest) -> str:
    """`page`, `navigation`, `browser`, `app`, `tool` or `stream` (module docstring)."""
    by_headers = _client_by_headers(req)
    kind = req.app.get("kind") if isinstance(req.app, dict) else None
    if by_headers == "tool" and kind == "browser":
        return "browser"  # the browser's own background request, not a command-line tool's
    return by_headers


def _client_by_headers(req: RawRequest) -> str:
    if req.scheme not in HTTP_SCHEMES:
        return "stream"
    if made_by_page(req):
        return "page"
    ua = (req.header("user-agent") or "").strip()
    if _APP_RUNTIME.search(ua):
        return "app"
    if _BROWSER.match(ua) and req.scheme not in ("https", "wss"):
        if req.method in ("GET", "HEAD") and (req.header("upgrade-insecure-requests") or "").strip() == "1":
            return "navigation"
        return "browser"
    return "tool"

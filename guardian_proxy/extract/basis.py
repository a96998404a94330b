"""Action basis: who initiated the request.

    user        a navigation or form submit with user activation (`Sec-Fetch-User: ?1`), a URL typed or
                picked from a bookmark (`Sec-Fetch-Site: none`), or typed input sent to an AI service
                (a chat/completion POST, from a page or from an agent/CLI)
    background  beacons, pings and pixels (`Ping-From`, `Sec-Fetch-Dest: report|image`, no-cors
                text/plain POSTs from sendBeacon), prefetches, cross-site frames and scripts, requests a
                page makes to trackers on its own, telemetry from non-browser clients
    default     everything else: same-site fetch/XHR, navigations without user activation, plain
                requests from non-browser clients
"""

from __future__ import annotations

from ..types import TRACKER_CLASSES as TRACKERS
from ..types import RawRequest

_BEACON_TYPES = ("text/plain", "text/ping", "application/csp-report", "application/reports+json")
_TELEMETRY = ("telemetry", "metrics", "analytics", "track", "events", "collect", "crash", "usage", "heartbeat")


def basis(req: RawRequest, recipient: str, ai_call: bool = False) -> str:
    def h(name: str) -> str:
        return (req.header(name) or "").lower()

    mode, dest, site = h("sec-fetch-mode"), h("sec-fetch-dest"), h("sec-fetch-site")
    user = h("sec-fetch-user") == "?1"
    ctype = h("content-type").split(";")[0].strip()
    if "prefetch" in h("sec-purpose") or "prefetch" in h("purpose") or h("x-moz") == "prefetch":
        return "background"
    if req.header("ping-from") or req.header("ping-to") or dest == "report" or ctype in _BEACON_TYPES[2:]:
        return "background"
    if mode == "navigate":
        if user or site == "none":
            return "user"
        if dest in ("iframe", "frame", "embed", "object") and site == "cross-site":
            return "background"
        return "default"
    if user:
        return "user"
    if ai_call and req.method == "POST":
        return "user"  # a prompt someone typed (chat UI or agent/CLI acting for the user)
    if dest or site:  # a browser sub-resource or fetch (Node's fetch sends `Sec-Fetch-Mode: cors` alone: a script)
        if dest in ("image", "script", "iframe", "frame", "style", "font", "audioworklet", "paintworklet") and \
                site == "cross-site":
            return "background"
        if mode == "no-cors" and (dest in ("image", "empty") or ctype in _BEACON_TYPES):
            return "background"
        if recipient in TRACKERS:
            return "background"
        return "default"
    # no Fetch Metadata: a non-browser client (agent, SDK, CLI, curl)
    path = req.path.lower()
    if recipient in TRACKERS or any(w in path for w in _TELEMETRY):
        return "background"
    return "default"

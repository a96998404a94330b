"""Action basis (who initiated the request) and declared purposes (what the endpoint is for)."""

from __future__ import annotations

import re

from ..types import RawRequest

_PURPOSE_PATHS: list[tuple[re.Pattern, str]] = [
    (re.compile(r"/(collect|track|beacon|events?|analytics|metrics|telemetry|log)\b", re.I), "analytics"),
    (re.compile(r"/(pixel|ads?|adserver|impression|conversion)\b", re.I), "advertising"),
    (re.compile(r"/(login|signin|sign-in|auth|oauth|token|session)\b", re.I), "authentication"),
    (re.compile(r"/(checkout|pay|payment|billing|order)s?\b", re.I), "payment"),
    (re.compile(r"/(v1/chat/completions|v1/responses|v1/messages|api/chat|api/generate)\b", re.I), "ai_processing"),
    (re.compile(r"/(search|upload|contact|comment|post|submit)\b", re.I), "functionality"),
]
_RECIPIENT_PURPOSE = {"ad_network": "advertising", "analytics": "analytics", "data_broker": "profiling",
                      "ai_service": "ai_processing"}


def basis(req: RawRequest) -> str:
    mode = (req.header("sec-fetch-mode") or "").lower()
    dest = (req.header("sec-fetch-dest") or "").lower()
    user = req.header("sec-fetch-user") == "?1"
    if user or (mode == "navigate" and req.method in ("GET", "POST")):
        return "user"
    if dest in ("image", "empty") and mode == "no-cors" or req.header("ping-to") or dest == "report":
        return "background"
    ctype = (req.header("content-type") or "").lower()
    if "text/plain" in ctype and mode == "no-cors":  # sendBeacon
        return "background"
    return "default"


def purposes(req: RawRequest, recipient: str) -> list[str]:
    found = [p for pat, p in _PURPOSE_PATHS if pat.search(req.path)]
    if recipient in _RECIPIENT_PURPOSE and _RECIPIENT_PURPOSE[recipient] not in found:
        found.append(_RECIPIENT_PURPOSE[recipient])
    return found or ["unknown"]

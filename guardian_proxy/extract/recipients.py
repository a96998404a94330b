"""Recipient class of a destination: first party when the initiating site has the same registrable
domain; otherwise a static table of well-known hosts; unknown third parties get `unknown_third_party`."""

from __future__ import annotations

from ..domains import registrable_domain

KNOWN: dict[str, str] = {
    "doubleclick.net": "ad_network",
    "googlesyndication.com": "ad_network",
    "adnxs.com": "ad_network",
    "criteo.com": "ad_network",
    "google-analytics.com": "analytics",
    "segment.io": "analytics",
    "mixpanel.com": "analytics",
    "facebook.com": "social",
    "facebook.net": "social",
    "twitter.com": "social",
    "amazonaws.com": "service_provider",
    "cloudfront.net": "service_provider",
    "zendesk.com": "service_provider",
    "openai.com": "ai_service",
    "anthropic.com": "ai_service",
    "acxiom.com": "data_broker",
}


def classify(host: str, site: str | None) -> tuple[str, str | None]:
    """(recipient class, owner) for a destination host and the initiating site's registrable domain."""
    domain = registrable_domain(host)
    if site and registrable_domain(site) == domain:
        return "first_party", None
    return KNOWN.get(domain, "unknown_third_party"), None

"""Stage 1: RawRequest → Action (six-tuple) with located spans. Never raises on bad input: parse
problems become flags on the Action (`unparsed`, `too_large`, `binary`, `truncated` …)."""

from __future__ import annotations

from collections import Counter
from urllib.parse import urlsplit

from ..bodies import BodyLimits, ParsedBody, parse_body, parse_cookies, parse_query
from ..domains import registrable_domain
from ..types import Action, RawRequest
from . import context, recipients
from .detector import Detector


def initiating_site(req: RawRequest) -> str | None:
    for name in ("origin", "referer"):
        v = req.header(name)
        if v and v != "null":
            host = urlsplit(v).hostname
            if host:
                return registrable_domain(host)
    if (req.header("sec-fetch-mode") or "").lower() == "navigate":
        return registrable_domain(req.host)
    return None


class Extractor:
    def __init__(self, detector: Detector, limits: BodyLimits | None = None):
        self.detector = detector
        self.limits = limits or BodyLimits()

    def parse(self, req: RawRequest) -> ParsedBody:
        return parse_body(req.body, req.header("content-type"), req.header("content-encoding"), self.limits)

    def extract(self, req: RawRequest) -> Action:
        parsed = self.parse(req)
        fields = parse_query(req.url) + parse_cookies(req.header("cookie")) + parsed.fields
        spans = self.detector.detect(fields)
        site = initiating_site(req)
        recipient, owner = recipients.classify(req.host, site)
        cats = Counter(s.category for s in spans)
        if any(f.path.startswith("cookie:") for f in fields):
            cats["cookie"] += sum(1 for f in fields if f.path.startswith("cookie:"))
        action = Action(
            domain=registrable_domain(req.host), host=req.host, categories=dict(cats), recipient=recipient,
            owner=owner, purposes=context.purposes(req, recipient), basis=context.basis(req), fields=fields,
            spans=spans, body_format=parsed.format, flags=list(parsed.flags), site=site,
        )
        action._parsed = parsed
        return action

"""Stage 1: RawRequest → Action (six-tuple) with located spans. Never raises: parse problems become
flags on the Action (`unparsed`, `too_large`, `binary`, `truncated`, `invalid_utf8`, `depth_limit`,
`duplicate_keys` … see docs/design/extraction.md), a detector failure falls back to patterns (`ner_error`), anything else
yields a bare tuple flagged `extract_error`."""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable
from urllib.parse import urlsplit

from ..bodies import BodyLimits, ParsedBody, parse_body, parse_cookies, parse_query
from ..bodies.graphql import operation
from ..bodies.headers import parse_headers
from ..domains import registrable_domain
from ..types import HOST_PATH, TRACKER_CLASSES, Action, RawRequest, TextField
from . import addressee, keys, recipients
from . import basis as basis_mod
from . import purposes as purposes_mod
from .context import RequestContext
from .detector import Detection, Detector
from .registry import MATCHERS as _MATCHERS

log = logging.getLogger("guardian_proxy")
#: recipients whose business is matching people across sites: a digest they receive is a match key (registry.py)
MATCHERS = _MATCHERS
_LABEL_SEP = re.compile(r"[.\-_]+")  # `jane-doe-536-22-1234` reads as `jane doe 536 22 1234`
_AI_BODY_KEYS = {"messages", "prompt", "contents", "input", "instructions", "system"}


_AUTH_SCHEMES = ("bearer ", "token ")
_TOKEN_HEADER = re.compile(r"(?:x-[\w-]*-)?(?:auth-token|access-token|api-token|private-token|token)")


def signed_in(req: RawRequest) -> bool:
    """The request carries the user's token for its destination: an Authorization header with a Bearer or Token
    credential, or a `…-token` header (`X-Figma-Token`, `Private-Token`), of 16 characters or more and not a
    publishable key. Basic credentials are left out (server and mobile SDKs send their app key:secret that way),
    and so is a tracker's key in a URL or body."""
    for k, v in req.headers:
        name, value = k.lower(), v.strip()
        if name == "authorization":
            low = value.lower()
            cred = value.split(None, 1)[1].strip() if low.startswith(_AUTH_SCHEMES) and " " in value else ""
        elif _TOKEN_HEADER.fullmatch(name):
            cred = value
        else:
            continue
        if len(cred) >= 16 and not cred.startswith(keys.PUBLISHABLE_PREFIXES):
            return True
    return False


def initiating_site(req: RawRequest) -> str | None:
    """The site the request is made for: for a top-level navigation the page being opened (over plain HTTP, where
    browsers send no Fetch Metadata: a typed or reloaded address, `addressee.client` "navigation"); otherwise the
    page that made it (Origin, then Referer; Sec-Fetch-Site same-origin/same-site without them); None when no
    page made it (a request of the user's own client: see `addressee`)."""
    mode = (req.header("sec-fetch-mode") or "").lower()
    dest = (req.header("sec-fetch-dest") or "").lower()
    if mode == "navigate" and dest in ("document", ""):
        return registrable_domain(req.host)
    if addressee.client(req) == "navigation":  # the same, to a plain-HTTP address (no Fetch Metadata there)
        return registrable_domain(req.host)
    for name in ("origin", "referer"):
        v = req.header(name)
        if v and v != "null":
            host = urlsplit(v).hostname
            if host:
                return registrable_domain(host)
    if (req.header("sec-fetch-site") or "").lower() in ("same-origin", "same-site"):
        return registrable_domain(req.host)
    return None


def _named_sites(req: RawRequest, fields: list[TextField]) -> frozenset[str]:
    """The names of the sites a request names (Referer, Origin, URL values): `huffingtonpost` for a widget's
    `twttr_referrer=http://www.huffingtonpost.com/` (resolver: an account named like one of them is the site's)."""
    urls = [req.header("referer") or "", req.header("origin") or ""] + \
        [f.text for f in fields if f.text.startswith(("http://", "https://")) and len(f.text) <= 2048]
    out = set()
    for u in urls:
        host = urlsplit(u.strip()).hostname if u else None
        if host:
            reg = registrable_domain(host)
            out.add(reg.split(".")[0])
    return frozenset(out)


class Extractor:
    def __init__(self, detector: Detector, limits: BodyLimits | None = None,
                 resolve_cname: Callable[[str], str | None] | None = None):
        self.detector = detector
        self.limits = limits or BodyLimits()
        self.resolve_cname = resolve_cname  # optional: host → canonical name, to unmask CNAME-cloaked trackers

    def parse(self, req: RawRequest) -> ParsedBody:
        return parse_body(req.body, req.header("content-type"), req.header("content-encoding"), self.limits)

    def extract(self, req: RawRequest) -> Action:
        try:
            return self._extract(req)
        except Exception:  # the stage never raises: a bare tuple with a flag
            log.exception("extract failed for %s", req.host)
            return Action(domain=registrable_domain(req.host), host=req.host, flags=["extract_error", "unparsed"],
                          body_format="unparsed", app=req.app)

    def _extract(self, req: RawRequest) -> Action:
        parsed = self.parse(req)
        # the URL path is read only when the body can be rebuilt: a writer that treats every non-query,
        # non-cookie path as a body path must never be handed an unreadable body to rebuild
        site = initiating_site(req)
        parts = urlsplit(req.url)
        # no page made it and the user's own client sent it (curl, a script, an agent): the host is the user's
        # addressee, unless it is a tracker, ad network or broker (recipients.classify, rule `addressed`)
        who = addressee.client(req)
        addressed = site is None and who == "tool"
        rec = recipients.classify(req.host, site, parts.port, req.path, None, addressed=addressed)
        dom = registrable_domain(req.host)
        sub = req.host[: -len(dom)].rstrip(".") if req.host.endswith(dom) else ""
        fields, det = self._read(req, parsed, rec, site, dom, sub)
        resolve = self.resolve_cname
        if resolve is None and req.canonical_host:  # the CNAME chain of the proxy's own DNS answer (dns_answer.py)
            resolve = lambda h: req.canonical_host if h == req.host else None  # noqa: E731
        if resolve is not None and rec.rule in ("same-site", "addressed") and sub and det.spans:
            # personal data to a first-party-looking subdomain: is the name a tracker's CNAME (cloaking)?
            hidden = recipients.classify(req.host, site, parts.port, req.path, resolve, addressed=addressed)
            if hidden.cls != rec.cls:
                rec = hidden
                fields, det = self._read(req, parsed, rec, site, dom, sub)
        ai_call = rec.cls == "ai_service" and req.method == "POST" and self._ai_body(parsed, req.path)
        basis = basis_mod.basis(req, rec.cls, ai_call)
        purposes = purposes_mod.purposes(req.path, [f.key for f in fields if f.key], rec.cls,
                                         self._operation(parsed, fields), ai_call, basis, sub)
        action = Action(
            domain=dom, host=req.host, categories=self._categories(fields, det), recipient=rec.cls,
            owner=rec.owner, purposes=purposes, basis=basis, fields=fields, spans=det.spans,
            body_format=parsed.format,
            flags=list(dict.fromkeys(parsed.flags + det.flags + rec.flags + (["signed_in"] if signed_in(req) else [])
                                     + (["no_page"] if who in addressee.PAGELESS else [])
                                     + (["host_mismatch"] if req.claimed_host else []))),
            site=site,
            role=rec.role,
            app=req.app,
        )
        action._parsed = parsed
        return action

    def _read(self, req: RawRequest, parsed: ParsedBody, rec: recipients.Recipient, site: str | None, dom: str,
              sub: str) -> tuple[list[TextField], Detection]:
        """The fields of the request and what the detector finds in them, for recipient `rec`."""
        # cookies sent back to the site the user is on are its own state (RFC 6265: a browser returns a cookie only to
        # the domain it was set for): they disclose nothing the site does not hold, so they are not read as data
        # leaving, and a rewrite never touches them (a masked session cookie logs the user out)
        own_site = rec.cls == "first_party" or site == dom
        cookies = [] if own_site else parse_cookies(req.cookie)
        fields = self._host_fields(sub) + self._url_fields(req.url, parsed.decoded is not None) + cookies + \
            parse_headers(req.headers, third_party=not own_site, own_login=rec.cls not in TRACKER_CLASSES) + parsed.fields
        for f in fields:  # protocol values: what a rewrite must leave byte for byte unless a span sits in it
            f.protocol = f.path in ("path:", HOST_PATH) or f.path.startswith(("cookie:", "header:")) \
                or keys.skip_ner(f.key)
        # one registry, one resolver: the destination is context (vendor vocabularies, digests to matchers, tracker
        # identifiers, a key sent to its issuer), not a second pass over the spans
        det = self._detect(fields, RequestContext(recipient=rec.cls, owner=rec.owner, domain=dom,
                                                  websocket=req.websocket is not None,
                                                  named_sites=_named_sites(req, fields)))
        return fields, det

    @staticmethod
    def _host_fields(sub: str) -> list[TextField]:
        """The labels left of the registrable domain (`jane-doe-123-45-6789.stats.example.com` → its first labels):
        a tracker can put a value there as easily as in a query. Read with patterns only (a protocol field: no
        NER), so an e-mail, card or SSN spelled into labels is found. A host cannot be rewritten (it is the
        destination): personal data found there blocks rather than rewrites (pipeline, rule `host-name-data`)."""
        if not sub or len(sub) < 9 or not any(c.isdigit() for c in sub):  # `www`, `api`, `cdn-eu`: nothing to read
            return []
        return [TextField(path=HOST_PATH, text=_LABEL_SEP.sub(" ", sub), key="host")]

    @staticmethod
    def _url_fields(url: str, with_path: bool = True) -> list[TextField]:
        out = []
        path = urlsplit(url).path
        if with_path and len(path) > 1:
            out.append(TextField(path="path:", text=path))
        return out + parse_query(url)

    def _detect(self, fields: list[TextField], context: RequestContext | None = None) -> Detection:
        try:
            return self.detector.analyse(fields, context=context)
        except Exception:  # e.g. a model failure: keep the pattern layer
            log.exception("detector failed; falling back to patterns")
            det = self.detector.analyse(fields, ner=False, context=context)
            det.flags.append("ner_error")
            return det

    @staticmethod
    def _categories(fields: list[TextField], det: Detection) -> dict[str, int]:
        cats = Counter(s.category for s in det.spans)
        cookie_spans = {s.path for s in det.spans if s.category == "cookie"}
        cats["cookie"] += sum(1 for f in fields if f.path.startswith("cookie:") and f.path not in cookie_spans)
        return {k: v for k, v in cats.items() if v > 0}

    @staticmethod
    def _ai_body(parsed: ParsedBody, path: str) -> bool:
        if path.rstrip("/").endswith(recipients.LOCAL_AI_PATHS) or ":generatecontent" in path.lower():
            return True
        data = parsed.data
        return isinstance(data, dict) and bool(_AI_BODY_KEYS & set(data))

    @staticmethod
    def _operation(parsed: ParsedBody, fields: list[TextField]) -> str | None:
        named = next((f.text for f in fields if f.key == "operationName" and f.text), None)
        if named or parsed.format != "graphql":
            return named
        data = parsed.data[0] if isinstance(parsed.data, list) and parsed.data else parsed.data
        if not isinstance(data, dict):
            return None
        name = data.get("operationName")
        if isinstance(name, str) and name:
            return name
        kind, opname = operation(data.get("query", ""))
        return opname or kind

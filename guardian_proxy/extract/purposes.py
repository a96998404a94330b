"""Declared purposes: what the endpoint says it is for.

From, in order: the path vocabulary (segments split on / - _ . : and a few whole-path idioms such as
Facebook's `/tr`; the host's own labels count too: ``telemetry.``, ``accounts.``), the parameter and field vocabulary (query/body keys: `tid`+`cid` hits, click ids,
`password`, card fields …), the GraphQL operation name, then the recipient class (ad network →
advertising, analytics → analytics, data broker → profiling, AI service → ai_processing). With none of
these, a user-initiated first-party or service-provider request is `functionality`; anything else
`unknown`. Policy evidence refines purposes later, in the evidence stage (it runs after extraction).
"""

from __future__ import annotations

import re

from ..types import TRACKER_CLASSES as TRACKERS

_SPLIT = re.compile(r"[/\-_.:;,=?&]+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")

VOCAB: dict[str, frozenset[str]] = {
    "ai_processing": frozenset({"completions", "generatecontent", "streamgeneratecontent", "embeddings",
                                "inference", "conversation", "chat", "generate", "responses", "prompt", "llm"}),
    "authentication": frozenset({"login", "signin", "logon", "auth", "oauth", "oauth2", "authorize", "authenticate",
                                 "token", "sso", "saml", "mfa", "2fa", "otp", "password", "passwordless",
                                 "signup", "register", "registration", "logout", "signout", "session", "sessions",
                                 "identitytoolkit", "accounts"}),
    "payment": frozenset({"checkout", "pay", "payment", "payments", "billing", "purchase", "charge", "charges",
                          "invoice", "invoices", "transaction", "transactions", "paymentintents", "payment_intents",
                          "payment_methods", "tokens", "donate", "donation", "order", "orders", "subscription"}),
    "security": frozenset({"captcha", "recaptcha", "hcaptcha", "turnstile", "challenge", "fraud", "risk",
                           "csp", "cspreport", "security", "antibot", "integrity", "attestation", "bot", "verify",
                           "siteverify", "fingerprintjs"}),
    "advertising": frozenset({"pixel", "ads", "ad", "adserver", "adview", "impression", "impressions", "imp",
                              "conversion", "conversions", "pagead", "bid", "bids", "prebid", "openrtb2", "auction",
                              "rtb", "clk", "adclick", "adsct", "retargeting",
                              "remarketing", "viewthroughconversion", "activityi", "gampad", "sodar", "gtag",
                              "adservice", "sponsored", "ddm", "fledge"}),
    "profiling": frozenset({"identify", "engage", "people", "audience", "audiences", "enrich", "enrichment",
                            "idsync", "sync", "cm", "match", "cookiematch", "alias", "graph", "persona", "traits",
                            "uid2", "resolve", "usersync", "cmf", "usermatch", "cookiesync", "pixelsync", "getuid"}),
    "analytics": frozenset({"collect", "track", "tracking", "tracker", "beacon", "event", "events", "analytics",
                            "metrics", "telemetry", "stats", "statistics", "hit", "pageview", "page", "measure",
                            "mp", "batch", "rum", "vitals", "heatmap", "recording", "ingest", "capture",
                            "log", "logs", "logging", "envelope", "store", "insights", "matomo", "piwik"}),
    "personalization": frozenset({"recommend", "recommendations", "recs", "personalize", "personalization",
                                  "preferences", "settings", "feed", "foryou", "experiments", "flags", "decide"}),
    "functionality": frozenset({"search", "upload", "uploads", "contact", "comment", "comments", "post", "posts",
                                "submit", "cart", "basket", "wishlist", "send", "share", "support", "ticket",
                                "tickets", "feedback", "form", "forms", "newsletter", "booking", "bookings",
                                "reservation", "messages", "message", "files", "file", "attachments", "query",
                                "find", "lookup", "save", "profile", "account", "address", "addresses", "widgets",
                                "plugins", "tweet", "like", "follow", "embed", "pins", "suggest", "suggestions",
                                "autocomplete", "typeahead", "avatar", "import", "export", "requests", "conversations",
                                "reply", "replies", "inbox", "compose", "draft", "drafts", "chat.postmessage",
                                "postmessage", "sendmessage", "directions", "geocode", "places", "route", "routes",
                                "retrieve", "submissions"}),
}
#: whole paths whose meaning is fixed by a well-known service
PATHS = {"/tr": "advertising", "/e": "analytics", "/i/v0/e": "analytics", "/s": "analytics", "/j/collect": "analytics", "/g/collect": "analytics", "/collect": "analytics",
         "/v1/t": "analytics", "/v1/p": "analytics", "/v1/i": "profiling", "/v1/identify": "profiling",
         "/v1/batch": "analytics", "/engage": "profiling", "/decide": "personalization",
         "/recaptcha/api2/reload": "security", "/recaptcha/api/siteverify": "security"}
#: parameter / field keys that reveal a purpose
KEYS = {
    "tid": "analytics", "cid": "analytics", "_ga": "analytics", "ec": "analytics", "ea": "analytics",
    "en": "analytics", "dl": "analytics", "utm_source": "analytics", "utm_campaign": "analytics",
    "gclid": "advertising", "fbclid": "advertising", "msclkid": "advertising", "ttclid": "advertising",
    "dclid": "advertising", "ev": "advertising", "ud": "advertising", "fbp": "advertising", "adid": "advertising",
    "idfa": "advertising", "gaid": "advertising",
    "password": "authentication", "passwd": "authentication", "otp": "authentication", "username": "authentication",
    "card_number": "payment", "cardnumber": "payment", "cc_number": "payment", "cvc": "payment", "cvv": "payment",
    "card": "payment", "pan": "payment", "iban": "payment", "g_recaptcha_response": "security",
    "h_captcha_response": "security", "cf_turnstile_response": "security", "captcha": "security",
    "messages": "ai_processing", "prompt": "ai_processing",
}
RECIPIENT_PURPOSE = {"ad_network": "advertising", "analytics": "analytics", "data_broker": "profiling",
                     "ai_service": "ai_processing"}
#: ambiguous words: they claim tracking purposes only for trackers, AI processing only for AI calls
_WEAK_WORDS = frozenset({"identify", "page", "store", "log", "logs", "logging", "batch", "event", "events", "graph",
                         "match", "sync", "cm", "people", "alias", "resolve", "capture", "insights", "ad", "imp",
                         "bid", "chat", "generate", "conversation", "responses", "prompt", "hit", "measure", "mp"})


def _allowed(word: str, purpose: str, recipient: str, ai_call: bool) -> bool:
    if word not in _WEAK_WORDS:
        return True
    if purpose in ("analytics", "profiling", "advertising"):
        return recipient in TRACKERS
    if purpose == "ai_processing":
        return ai_call or recipient == "ai_service"
    return True


def _words(text: str) -> list[str]:
    return [w for w in _SPLIT.split(_CAMEL.sub("_", text).lower()) if w]


def purposes(path: str, keys: list[str], recipient: str, operation: str | None = None,
             ai_call: bool = False, basis: str = "default", host_words: str = "") -> list[str]:
    found: list[str] = []

    def add(p: str) -> None:
        if p not in found:
            found.append(p)

    lp = path.lower().rstrip("/") or "/"
    if lp in PATHS:
        add(PATHS[lp])
    if ai_call:
        add("ai_processing")
    words = _words(path) + (_words(operation) if operation else []) + (_words(host_words) if host_words else [])
    if ai_call:  # a chat/completion call: the path says how to reach the model, not what the data is for
        words = [w for w in words if w in VOCAB["ai_processing"]]
    for purpose, vocab in VOCAB.items():
        if any(w in vocab and _allowed(w, purpose, recipient, ai_call) for w in words):
            add(purpose)
    for k in keys:
        p = KEYS.get(k.lower().replace("-", "_"))
        if p and ((p in ("analytics", "advertising")) == (recipient in TRACKERS) or p == "ai_processing"):
            add(p)
    if recipient in RECIPIENT_PURPOSE:
        add(RECIPIENT_PURPOSE[recipient])
    if not found and recipient in ("first_party", "service_provider") and basis == "user":
        add("functionality")
    return found or ["unknown"]

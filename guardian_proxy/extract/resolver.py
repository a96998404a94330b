"""The one resolver: every recognizer's results for one field → that field's spans, each value typed once.

In order:
  1 context rules (one place each):
    - a field name raises or lowers: a key that agrees with a text recognizer on the whole value raises that
      result (to the key's score or +0.1, reason `…+key:<name>`) instead of adding a second one; an identifier field (`_p`, `jid`,
      `…_id`, `nonce`) or a timing field (`t`, `ts`, `duration`, `…_ms`) lowers digit entities (card, phone, SSN,
      account …) to nothing;
    - no digit entity inside a decimal number or a longer digit run (`52.1234567890123` is a float, a timing);
    - a person found by NER that is a product, integration, role or UI word, or has digits ("Facebook Pixel",
      "Respond", "agent2") is not a person;
    - a product's name is no one's data: a vendor's name (a word of the product vocabulary, `not_name_terms`, that the
      tracker database names as a company: "Google", "Facebook", "Adobe") with capitalised product words of that
      vocabulary beside it ("Google Tag Manager", "Facebook Pixel", "Adobe Analytics", "Google Admin"); no NER or
      narrative name, organisation, place or job is found inside it ("[ORGANIZATION] Tag [OCCUPATION]"). A job word
      alone beside a vendor ("Google Manager") makes no product, nor does a vendor alone ("I work at Google");
    - tracker identifiers (the rule): an advertising, device, anonymous or session id is pseudonymous protocol
      state; it is personal data only on its way to a tracker class (analytics, ad network, social, broker), where
      it links the person across sites. To the user's own site, a service provider, an AI service or any other
      party it is that party's own state and not a span. Without a destination (no context) it counts;
    - an account id (USER_ID) sent to the site itself is the site's own id for its user: nothing it does not hold;
    - an API key sent to the service that issued it is that app authenticating, not a secret leaving;
  2 merge per category (overlaps of one category keep the longest, then the strongest), hits another kind
    explains dropped (a phone-like run inside an IBAN, a quasi hit on a direct identifier), page/event containers
    keep only identifiers and health terms inside them; a digest inside another span is not a second one.
The winning result's recognizer and reason are recorded on the Span (never the value).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..types import CONTAINER_ENTITIES, ENTITIES, TRACKER_CLASSES, Span, TextField
from . import keys, secrets, validators
from .context import FieldContext
from .quasi_lexicon import OCCUPATIONS
from .registry import Result

SKIP_ENTITIES = {"URL", "DATE_TIME"}  # too noisy to count as personal data on their own
CONTAINERS = CONTAINER_ENTITIES
#: entities that a bare digit run in an identifier field (GA4 `_p`, `jid`, `…_id`) is mistaken for
DIGIT_ENTITIES = frozenset({"CREDIT_CARD", "PHONE_NUMBER", "US_SSN", "US_BANK_NUMBER", "UK_NHS", "ACCOUNT_NUMBER",
                            "US_ITIN", "US_DRIVER_LICENSE", "US_PASSPORT", "GOVERNMENT_ID"})
#: pseudonymous ids: personal only where they link a person across sites (see the rule above)
TRACKER_IDS = frozenset({"ADVERTISING_ID", "DEVICE_ID", "SESSION_ID"})
_ID_PERSONAL_TO = frozenset(TRACKER_CLASSES)
#: fields that hold a time, a duration or a timestamp (a digit run there is a clock, never a card or a phone)
_TIMING_KEY = re.compile(r"(?:[a-z_]{0,30}_)?(?:time|timing|ts|ms|duration|elapsed|latency|delay|ttl|timestamp|epoch|"
                         r"seconds|secs|millis|nanos|dur|[a-z]{1,10}_time|[a-z]{1,10}_ms)")
_NUMBERISH = re.compile(r"[-+]?\d[\d.,:]*")
_NOT_NAMES = frozenset({"ssn", "iban", "dob", "pin", "id", "api", "url", "otp", "cvv", "email", "e-mail", "phone",
                        "tel", "sms", "gps", "ip", "mg", "rx", "ok", "hi", "hello", "thanks", "dear"})
#: operating-system and software names spaCy tags as nationalities or organisations ("built on Debian GNU/Linux"
#: in a browser's update ping): never a person's group or employer on their own
_SOFTWARE = frozenset({"debian", "ubuntu", "linux", "gnu", "gnu/linux", "fedora", "red hat", "centos", "kali", "arch",
                       "gentoo", "mint", "android", "ios", "ipados", "macos", "mac os", "mac os x", "os x", "windows",
                       "windows nt", "chrome os", "chromeos", "chromium", "chrome", "firefox", "safari", "edge",
                       "webkit", "gecko", "blink", "mozilla", "opera", "x11", "wayland", "unix", "freebsd", "x86_64",
                       "aarch64", "arm64", "amd64", "win64", "java", "python", "node", "node.js"})
_WORDS = re.compile(r"[^\W_]+")

# an item while resolving: start, end, entity, score, direct, recognizer, reason
Item = tuple[int, int, str, float, bool, str, str]


def resolve(f: TextField, hits: list[Result], ctx: FieldContext | None, min_score: float = 0.4) -> list[Span]:
    if not hits:
        return []
    text = f.text
    hits = _context_rules(f, hits, ctx)
    by_cat: dict[str, list[Item]] = {}
    for h in hits:
        start, end, entity, score = h[0], h[1], h[2], h[3]
        if entity in SKIP_ENTITIES or score < min_score or end <= start or entity not in ENTITIES:
            continue
        cat, direct = ENTITIES[entity]
        by_cat.setdefault(cat, []).append((start, end, entity, score, direct, h.recognizer, h.reason))
    by_cat = _drop_shadowed(by_cat, text)
    if any(h[2] in CONTAINERS for items in by_cat.values() for h in items):
        # a page address, title or event name: its places, dates, counts and organisations are the page's
        # content, not facts about the visitor (identifiers and health terms inside it still count)
        by_cat = {c: items for c, items in ((c, [h for h in items if h[4] or c not in ("demographic", "other")])
                                           for c, items in by_cat.items()) if items}
    out: list[Span] = []
    for cat, items in by_cat.items():
        items.sort(key=lambda h: (h[0], -(h[1] - h[0])))
        cur = None
        for h in items:
            if cur is not None and h[0] < cur[1]:
                if (h[1] - h[0], h[3]) > (cur[1] - cur[0], cur[3]):
                    cur = h
                continue
            if cur is not None:
                out.append(_span(f, cat, cur))
            cur = h
        if cur is not None:
            out.append(_span(f, cat, cur))
    others = [s for s in out if s.entity != "HASHED_IDENTIFIER"]
    out = [s for s in out if s.entity != "HASHED_IDENTIFIER" or
           not any(o.start <= s.start and s.end <= o.end for o in others)]
    out.sort(key=lambda s: (s.start, s.end))
    return out


def tracker_id_personal(recipient: str | None) -> bool:
    """The tracker-identifier rule: is a pseudonymous advertising/device/anonymous/session id personal data on its
    way to this recipient class? Yes to a tracker class (it links the person across sites), no to anyone else (the
    user's own site, a service provider, an AI service, another party: protocol state); yes when the destination is
    not known."""
    return recipient is None or recipient in _ID_PERSONAL_TO


def admits(f: TextField, entity: str, start: int, end: int) -> bool:
    """The field admits a value of this type at [start, end) (the digit rules: a propagated card is not one inside a
    timing field or a float either)."""
    if entity not in DIGIT_ENTITIES:
        return True
    lower_digits, whole_decimal = _digit_rules(f, f.text.strip())
    return not (lower_digits or whole_decimal or _inside_number(f.text, start, end))


def _digit_rules(f: TextField, value: str) -> tuple[bool, bool]:
    """(an identifier or timing field lowers digit entities, the whole value is a decimal number)."""
    nkey = keys.normalise(f.key) if f.key else ""
    lower_digits = bool(f.key) and ((value.isdigit() and keys.identifier_field(f.key)) or
                                    (_TIMING_KEY.fullmatch(nkey) is not None and _NUMBERISH.fullmatch(value) is not None))
    return lower_digits, validators.decimal_number(value)


def _context_rules(f: TextField, hits: list[Result], ctx: FieldContext | None) -> list[Result]:
    if not hits:
        return hits
    text = f.text
    value = text.strip()
    lower_digits, whole_decimal = _digit_rules(f, value)
    key_hits = [h for h in hits if h.recognizer in ("key", "cookie")]
    products = _product_names(text) if any(_named_by_model(h) for h in hits) else []
    out: list[Result] = []
    for h in hits:
        if h.recognizer in ("key", "cookie"):
            continue
        if products and _named_by_model(h) and any(a <= h.start and h.end <= b for a, b in products):
            continue  # "Google Tag Manager": a product's name, no organisation or job
        if h.entity in DIGIT_ENTITIES and (lower_digits or whole_decimal or _inside_number(text, h.start, h.end)):
            continue
        if h.entity == "PERSON" and h.recognizer.startswith(("ner", "narrative")) and not _ner_person(text[h.start:h.end]):
            continue
        if h.entity == "ORGANIZATION" and h.recognizer.startswith("ner") and ctx is not None and \
                ctx.request is not None and _ACRONYM.fullmatch(text[h.start:h.end]) and \
                not people_organisation(text, h.start, h.end):
            continue  # in a request's field a bare acronym ("SSE finish", "API error") names a technology: no one's data
        kh = next((k for k in key_hits if k.entity == h.entity and k.start == h.start and k.end == h.end), None)
        if kh is not None:  # the key agrees: raise the text recognizer's confidence, one result
            key_hits.remove(kh)
            h = h._replace(score=round(min(1.0, max(h.score + 0.1, kh.score)), 3), reason=(h.reason + "+" if h.reason else "") + kh.reason)
        out.append(h)
    for k in key_hits:
        if k.entity in DIGIT_ENTITIES and whole_decimal:
            continue
        out.append(k)
    if ctx is not None and ctx.request is not None:
        req = ctx.request
        if req.named_sites:  # an account named like a site the request names (a follow button's screen_name)
            out = [h for h in out if not (h.entity == "USERNAME" and _site_account(text[h.start:h.end], req.named_sites))]
        if req.recipient == "service_provider" and ctx.carrier == "query":
            # a credential found only by its key name in a URL the page asks a vendor's API with (a video
            # player's read token, a map key): the site's key for that vendor, public in its page, sent to its issuer
            out = [h for h in out if not (h.entity in ("AUTH_TOKEN", "API_KEY") and h.recognizer == "key")]
        if not tracker_id_personal(req.recipient):
            out = [h for h in out if h.entity not in TRACKER_IDS]
        if req.recipient == "first_party":  # the site's own account id for its user: nothing it does not hold
            out = [h for h in out if h.entity != "USER_ID"]
        if req.domain:
            out = [h for h in out if not (h.entity == "API_KEY" and secrets.issued_by(text[h.start:h.end], req.domain))]
    return out


def _inside_number(text: str, start: int, end: int) -> bool:
    """The match is part of a decimal number or a longer digit run: `52.1234567890123`, `1234567890123.5`."""
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    if before.isdigit() or after.isdigit():
        return True
    if before in ".," and start > 1 and text[start - 2].isdigit():
        return True
    return after in ".," and end + 1 < len(text) and text[end + 1].isdigit()


_ACRONYM = re.compile(r"[A-Z]{2,5}")
#: what the text says of an acronym that makes it a body of people someone belongs to, supports or acts for: a
#: membership or a role in it before it ("membership of the PKK", "leader of the X", "propaganda in favour of the X",
#: "aiding and abetting the X", "an illegal organisation, the X"), its people or movement after it ("X members",
#: "the X movement"), its long form naming a party, a movement, a union … ("the X (the Kurdistan Workers' Party)"),
#: or an apposition calling it one ("the X, an illegal organisation"). A technology's acronym has none of these
_MEMBER_BEFORE = re.compile(
    r"(?i)(?:\b(?:members?(?:hip)?|militants?|leaders?|leadership|supporters?|sympathi[sz]ers?|activists?|fighters?|"
    r"founders?|spokes(?:man|woman|person))\s+(?:of|in|for)|\bpropaganda\s+(?:(?:in\s+favou?r|on\s+behalf)\s+of|for)|"
    r"\babetting|\b(?:belong(?:s|ed|ing)?\s+to|joined|affiliated\s+with)|"
    r"\borgani[sz]ation,)\s+(?:the\s+)?$")
_PEOPLE = r"(?:party|organi[sz]ation|movement|front|army|union|league|brotherhood|federation|association|group)"
_MEMBER_AFTER = re.compile(
    r"(?i)\s+(?:members?|militants?|supporters?|sympathi[sz]ers?|activists?|fighters?|movement|leaders?|leadership)\b"
    rf"|\s*\((?:the\s+)?[^()\n]{{0,80}}?\b{_PEOPLE}\b"
    rf"|,\s+(?:an?|the)\s+(?:[\w-]+\s+){{0,3}}{_PEOPLE}\b")


def people_organisation(text: str, start: int, end: int) -> bool:
    """Does the text say that the acronym at [start, end) is a body of people someone belongs to or acts for (see
    `_MEMBER_BEFORE`)? Then it is an organisation the person may be known by, not a technology's name."""
    return _MEMBER_BEFORE.search(text[max(0, start - 60): start]) is not None or \
        _MEMBER_AFTER.match(text, end) is not None


def _site_account(value: str, sites: frozenset[str]) -> bool:
    """`HuffingtonPost` where the request names huffingtonpost.com: the site's own account, not the user's."""
    v = re.sub(r"[^a-z0-9]", "", value.lower())
    return len(v) >= 4 and v in sites


#: what NER and the narrative recognizers name that a product's name holds the words of
_NAMED = frozenset({"PERSON", "ORGANIZATION", "LOCATION", "NRP", "OCCUPATION"})
#: a word: letters and digits, a letter first ("Google", "Auth0")
_CAP_RUN_WORD = re.compile(r"[^\W\d_][^\W_]*")


def _named_by_model(h: Result) -> bool:
    return h.entity in _NAMED and h.recognizer.startswith(("ner", "narrative"))


@lru_cache(maxsize=1)
def vendor_names() -> frozenset[str]:
    """The words of the product vocabulary (`not_name_terms`) that the tracker database (recipients.json) names as a
    company, lower-cased: the vendors whose names products are made with ("google", "facebook", "adobe")."""
    from .recipients import table

    t = table()
    owners = {v[1] for v in t["trackers"].values()} | set(t["owner_sites"].values())
    suffix = re.compile(r"(?i)[ ,]+(?:inc|llc|ltd|gmbh|corp|corporation|ag|sa|limited|co)\.?$")
    names = {suffix.sub("", o).strip().lower() for o in owners if isinstance(o, str)}
    return frozenset(names & validators.data()["not_name_terms"])


def _product_names(text: str) -> list[tuple[int, int]]:
    """(start, end) of each product's name in `text`: a run of capitalised words of the product vocabulary, one space
    or hyphen apart, that holds a vendor's name and a product word that is neither a vendor nor a job ("Google Tag
    Manager", "Facebook Pixel"; not "Google Manager", "Customer Service Manager")."""
    terms = validators.data()["not_name_terms"]
    vendors = vendor_names()
    out: list[tuple[int, int]] = []
    run: list[re.Match] = []

    def close():
        words = [m.group().lower() for m in run]
        if len(words) >= 2 and any(w in vendors for w in words) and \
                any(w not in vendors and w not in OCCUPATIONS for w in words):
            out.append((run[0].start(), run[-1].end()))
        run.clear()

    for m in _CAP_RUN_WORD.finditer(text):
        w = m.group()
        if not (w[0].isupper() and w.lower() in terms):
            close()
            continue
        if run and text[run[-1].end(): m.start()] not in (" ", "-"):
            close()
        run.append(m)
    close()
    return out


def _ner_person(name: str) -> bool:
    words = [w.lower() for w in _WORDS.findall(name)]
    if not words or any(any(c.isdigit() for c in w) for w in words) or validators.NOT_NAME_CHARS.search(name):
        return False  # a name has no digits, `+`, `#`, `|`, brackets … ("Disney+ Hotstar - Watch TV Shows")
    d = validators.data()
    return not (any(w in d["not_name_terms"] for w in words) or all(w in d["common_words"] for w in words))


def _span(f: TextField, cat: str, h: Item) -> Span:
    start, end, entity, score, direct, recognizer, reason = h
    if recognizer.startswith("ner") and not reason:
        reason = f"ner {entity} {score:.2f}"
    return Span(path=f.path, start=start, end=end, entity=entity, category=cat, score=round(score, 3),
                text=f.text[start:end], direct=direct, recognizer=recognizer, reason=reason or recognizer)


def _drop_shadowed(by_cat: dict[str, list], text: str) -> dict[str, list]:
    """Drop hits another hit explains: a quasi hit on a direct identifier (spaCy calling an e-mail an ORG),
    a hit inside a longer or stronger hit of another kind (a phone-like run inside an IBAN, a LOCATION inside
    a street address, a QUANTITY inside an SSN), and NER names that are field words ("SSN", "IBAN").
    Whole-field behavioural spans (search terms, page URLs) contain others without shadowing them."""
    hits = [h for items in by_cat.values() for h in items if h[2] not in CONTAINERS]
    if len(hits) > 2000:  # pathological input: keep everything rather than go quadratic
        return by_cat
    drop = {id(h) for h in hits if (h[2] in ("ORGANIZATION", "PERSON", "LOCATION", "NRP") and
                                    _not_a_name(text[h[0]:h[1]])) or any(_covers(g, h) for g in hits)}
    # NER's name, organisation or place around a direct identifier is a mis-span of that identifier ("BSN 273951841",
    # "National ID CA-TL-7206497" read as an organisation): the identifier stays, the NER hit goes
    drop |= {id(g) for g in hits if g[2] in _NER_NAMES and not g[4] and
             any(h[4] and h is not g and g[0] <= h[0] and h[1] <= g[1] and h[2] not in _NER_NAMES for h in hits)}
    direct = [h for h in hits if h[4] and id(h) not in drop]
    # NER's name, organisation or place that runs into a direct identifier ("Lily-Mae B - dad Gareth - 07812" of a
    # phone number "07812 340 675") ends where the identifier begins: the identifier keeps its whole value
    cut: dict[int, tuple] = {}
    for h in hits:
        if h[2] in _NER_NAMES and not h[4] and id(h) not in drop:
            starts = [d[0] for d in direct if h[0] < d[0] < h[1] < d[1] and d[2] not in _NER_NAMES]
            if starts:
                end = min(starts)
                while end > h[0] and not text[end - 1].isalnum():
                    end -= 1
                cut[id(h)] = (h[0], end, *h[2:]) if end - h[0] >= 2 else None
    for h in hits:
        if not h[4] and id(h) not in drop and \
                any(d[0] < h[1] and h[0] < d[1] and d[3] >= h[3] - 0.05 for d in direct):
            drop.add(id(h))
    out: dict[str, list] = {}
    for cat, items in by_cat.items():
        kept = [cut.get(id(h), h) for h in items if id(h) not in drop]
        kept = [h for h in kept if h is not None]
        if kept:
            out[cat] = kept
    return out


def _not_a_name(word: str) -> bool:
    w = word.strip().lower()
    return (len(w) <= 8 and w in _NOT_NAMES) or w in _SOFTWARE or all(t in _SOFTWARE for t in w.split())


_NER_NAMES = frozenset({"ORGANIZATION", "PERSON", "LOCATION", "NRP"})


def _covers(g, h) -> bool:
    """g (another kind of hit) covers h and is longer without being much weaker, or as long and stronger; a name,
    an organisation or a place NER found never covers a direct identifier (a number it took into its span)."""
    if g is h or g[2] == h[2] or ENTITIES[g[2]][0] == ENTITIES[h[2]][0]:
        return False
    if not (g[0] <= h[0] and h[1] <= g[1]):
        return False
    if h[4] and not g[4] and g[2] in _NER_NAMES:
        return False  # NER's "organisation" 'BSN 273951841' explains no identity number inside it
    glen, hlen = g[1] - g[0], h[1] - h[0]
    return (glen > hlen and g[3] >= h[3] - 0.05) or (glen == hlen and g[3] > h[3])

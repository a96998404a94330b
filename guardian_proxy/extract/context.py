"""What is known of a value besides its text: the field (key path, carrier) and the destination (recipient class,
owner/vendor). Recognizers read it to raise or lower their confidence (guardian_proxy/extract/registry.py).

`RequestContext` is the destination, built once per request by the extractor; `FieldContext` adds one field.
The carrier follows from the TextField's path prefix (docs/design/extraction.md): `query:`, `json:`/`form:`/`text:`/
`proto:` (body), `header:`, `cookie:`, `host:`, `path:`; a WebSocket message's body is carried by `websocket`, an
uploaded file's text (a path inside `>file`) by `file`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..types import TRACKER_CLASSES, TextField
from . import keys

CARRIERS = ("query", "body_json", "body_form", "body_text", "body_proto", "header", "cookie", "host", "path",
            "websocket", "file", "other")
_PREFIX_CARRIER = {"query": "query", "json": "body_json", "form": "body_form", "text": "body_text",
                   "proto": "body_proto", "header": "header", "cookie": "cookie", "host": "host", "path": "path"}


@dataclass(frozen=True)
class RequestContext:
    """The destination of a request, as the extractor classified it."""

    recipient: str | None = None  # one of types.RECIPIENT_CLASSES; None: not known (a caller without a request)
    owner: str | None = None  # the destination's owner or vendor ("Facebook", "ByteDance")
    domain: str | None = None  # registrable domain of the destination
    websocket: bool = False
    #: the names (registrable domain without suffix) of the sites the request names: its Referer and Origin, and
    #: every URL among its values (`twttr_referrer=http://www.huffingtonpost.com/` → "huffingtonpost")
    named_sites: frozenset[str] = frozenset()

    @property
    def tracker(self) -> bool | None:
        """The destination's business is tracking (None: not known)."""
        return None if self.recipient is None else self.recipient in TRACKER_CLASSES


@dataclass(frozen=True)
class FieldContext:
    path: str
    key: str | None
    nkey: str  # normalised key (keys.normalise), "" without one
    carrier: str
    request: RequestContext | None

    @property
    def recipient(self) -> str | None:
        return self.request.recipient if self.request else None

    @property
    def owner(self) -> str | None:
        return self.request.owner if self.request else None


@lru_cache(maxsize=4096)
def carrier(path: str, websocket: bool = False) -> str:
    prefix = path.split(":", 1)[0] if ":" in path else ""
    c = _PREFIX_CARRIER.get(prefix, "other")
    if ">file" in path or ">filename" in path:
        return "file"
    if websocket and c.startswith("body_"):
        return "websocket"
    return c


def field_context(f: TextField, request: RequestContext | None) -> FieldContext:
    return FieldContext(path=f.path, key=f.key, nkey=keys.normalise(f.key) if f.key else "",
                        carrier=carrier(f.path, bool(request and request.websocket)), request=request)

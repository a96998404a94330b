"""Google Gemini's web app (gemini.google.com, formerly bard.google.com): `POST …/_/BardChatUi/data/
assistant.lamda.BardFrontendService/StreamGenerate?bl=…&_reqid=…&rt=c` (also under `/u/<n>/`).

Undocumented; the shapes were taken from open-source clients of it — HanaokaYuzu/Gemini-API
(`gemini_webapi/client.py`, `utils/parsing.py`), requests copied from the browser in several others
(gemini-web2api-style proxies, dbgpt/bardapi, an analysis script of captured `f.req` bodies) — and from
captured replies kept as their test fixtures.

Request: `application/x-www-form-urlencoded`, `f.req=<JSON>&at=<token>&` (the browser ends with `&`).
`f.req` is `[null, "<inner JSON>"]`; the inner JSON is a positional array: `[0]` the message
`[prompt, 0, null, <files>, null, null, 0]` (files `[[[url], name], …]`: not slots), `[1]` the language
(`["en"]`), `[2]` the conversation `[cid, rid, rcid, …]` (empty strings for a new chat), then tokens and
flags up to index ~80 (uncertain and changing with the web app's build: they are kept untouched). The
only text is the prompt at `inner[0][0]` (one user turn; the server keeps the conversation: history
False). Every other form field, their order and the trailing `&` are kept byte for byte; `f.req` is
re-encoded at both JSON levels in the style it came in (the browser: compact, non-ASCII as is) and
percent-encoded like the client did (the browser's `encodeURIComponent`: `%20`, `!'()*~` as is; Python
clients' `urlencode`: `+`).

Conversation: the cid (`c_…`) is given as `previous`, not `conversation`: a chat's first request has no
cid yet, and its reply announces it (`inner[1] = [cid, rid]`, returned by `aliases`), so the first turn
and the later ones share one session through the session store's aliases.

Reply: the length-prefixed frames of `chatapi.frames` (`)]}'`, then `<len>\\n[["wrb.fr",null,"<inner>"]]\\n`
…); the inner JSON holds each candidate's text so far (`inner[4][i][1][0]`, CUMULATIVE, not deltas), so
every frame is de-masked whole (no delta channels): every string of the inner JSON, thoughts included
(`inner[4][i][37]`: shown to the user, never sent back). Uncertain: whether the web app checks the final
`["e", …, total]` frame's total (recomputed anyway).
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote, quote_plus, unquote_plus

from ..dialect import Dialect
from ..frames import GoogleFramer, JSONStyle
from ..requests import ChatRequest, Slot

_FIELD = "f.req"

# how clients percent-encode a form value: the browser (encodeURIComponent), Python's urlencode, quote()
_URL_STYLES = {
    "browser": lambda s: quote(s, safe="-_.!~*'()"),
    "urlencode": lambda s: quote_plus(s, safe=""),
    "quote": lambda s: quote(s, safe="-_.~"),
}


def url_style(raw: str, value: str) -> str:
    for name, enc in _URL_STYLES.items():
        if enc(value) == raw:
            return name
    return "browser"


class GeminiWeb(Dialect):
    name = "gemini_web"
    service = "Google Gemini web app (gemini.google.com)"
    hosts = ("gemini.google.com", "bard.google.com")
    paths = (re.compile(r"/_/BardChatUi/data/assistant\.lamda\.BardFrontendService/StreamGenerate/?$"),)
    priority = 20

    def parse(self, body: bytes, content_type: str | None, path: str) -> ChatRequest | None:
        ct = (content_type or "").lower()
        if ct and "form-urlencoded" not in ct:
            return None
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return None
        form = text.split("&")
        at = next((i for i, p in enumerate(form) if unquote_plus(p.partition("=")[0]) == _FIELD), None)
        if at is None:
            return None
        raw = form[at].partition("=")[2]
        outer_text = unquote_plus(raw)
        outer = json.loads(outer_text)
        if not (isinstance(outer, list) and len(outer) > 1 and isinstance(outer[1], str)):
            return None
        inner = json.loads(outer[1])
        if not (isinstance(inner, list) and inner and isinstance(inner[0], list) and inner[0]
                and isinstance(inner[0][0], str)):
            return None
        data = {"inner": inner, "outer": outer, "form": form, "at": at, "url": url_style(raw, outer_text),
                "styles": (JSONStyle.of(outer_text), JSONStyle.of(outer[1]))}
        req = ChatRequest(kind=self.name, data=data, stream=True, history=False, turns=1)
        if inner[0][0].strip():
            req.slots = [Slot(("inner", 0, 0), inner[0][0], "user", 1)]
        conv = inner[2] if len(inner) > 2 else None
        cid = conv[0] if isinstance(conv, list) and conv else None
        req.previous = cid if isinstance(cid, str) and cid else None
        return req

    def read(self, data, path):
        return None  # a form body, not JSON: see `parse`

    def serialise(self, chat: ChatRequest) -> bytes:
        d = chat.data
        outer_style, inner_style = d["styles"]
        outer = list(d["outer"])
        outer[1] = inner_style.dumps(d["inner"])
        form = list(d["form"])
        form[d["at"]] = form[d["at"]].partition("=")[0] + "=" + _URL_STYLES[d["url"]](outer_style.dumps(outer))
        return "&".join(form).encode("utf-8")

    # ------------------------------------------------------------------ replies

    def framer(self, content_type: str | None):
        ct = (content_type or "").lower()
        if "html" in ct or "event-stream" in ct:
            return None  # an error page or another stream: not Google's frames
        return GoogleFramer()

    def closes(self, name, obj):
        return None

    def synth(self, template, channel, text, json_text=False):
        raise NotImplementedError("Gemini web replies are cumulative: there is no delta to synthesise")

    def aliases(self, obj) -> list[str]:
        out: list[str] = []
        for item in obj if isinstance(obj, list) else ():
            if isinstance(item, list) and len(item) > 2 and item[0] == "wrb.fr" and isinstance(item[2], list):
                ids = item[2][1] if len(item[2]) > 1 else None
                cid = ids[0] if isinstance(ids, list) and ids else None
                if isinstance(cid, str) and cid.startswith("c_") and cid not in out:
                    out.append(cid)
        return out


DIALECTS = [GeminiWeb()]

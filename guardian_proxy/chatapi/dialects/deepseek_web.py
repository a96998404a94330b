"""DeepSeek's web app (chat.deepseek.com): `POST /api/v0/chat/completion`.

Request (from captures quoted in open-source DeepSeek web clients' tests, 2025–2026, e.g. the
deepseek-20251121 capture and the "Count from 1 to 5" fixture): `{"chat_session_id", "parent_message_id",
"prompt", "ref_file_ids", "thinking_enabled", "search_enabled", "client_stream_id"?}`. `prompt` is the one
slot; `ref_file_ids` are uploads (handled elsewhere). The session is created beforehand
(`/api/v0/chat_session/create`), so every completion carries its id: `conversation` = `chat_session_id`,
`history=False`.

Reply: SSE of patch-like events on the response document: a snapshot `{"v": {"response": {…, "fragments":
[{"id", "type": "RESPONSE"|"THINK"|…, "content": "first piece"}]}}}` (2025 shape: `"content"`,
`"thinking_content"` fields instead of fragments), then `{"p": "response/fragments/-1/content", "o": "APPEND",
"v": "…"}`, `{"p": "response/content", "v": "…"}` (no `o`: an append on a content path), `{"o": "APPEND", "v"}`
and bare `{"v": "…"}` (path, then op, inherited: "sticky"), `{"p": "response/fragments", "o": "APPEND", "v":
[fragment…]}` (a new fragment, its first piece in `content`), `{"p": "response", "o": "BATCH", "v": [ops with
relative paths]}`, `{"p": "response/status", "o": "SET", "v": "FINISHED"}`, and named events (`ready`,
`update_session`, `finish`, `title`, `close`, `hint`). Text deltas: appends on a RESPONSE fragment's content
(channel: the fragment's index) or on `response/content`, and a fragment's first piece. Thinking (`THINK`
fragments, `response/thinking_content`) passes byte for byte. A channel closes at the first event that does
not continue it; the held tail is flushed as `{"p": <the channel's path>, "o": "APPEND", "v": …}` (`-1` is
still the channel's fragment then: the event that adds a fragment is flushed after).

Uncertain: how the client reads a bare `{"v": str}` straight after a snapshot (taken as an append on the
snapshot's last fragment, or on `response/content`); fragment types other than RESPONSE/THINK (SEARCH,
TIP, …: de-masked whole, never treated as text deltas).
"""

from __future__ import annotations

import re

from ..dialect import Dialect
from ..events import DeltaRef
from ..requests import ChatRequest, Slot
from .annotated import Ann, ClosingVerbatim, StatefulSSE, Verbatim, ann_closes, ann_deltas, rebind

_FRAG_CONTENT = re.compile(r"^response/fragments/(-?\d+)/content$")
_THINK = {"THINK", "THINKING"}


class _DeepSeekState:
    def __init__(self):
        self.p: str | None = None
        self.o: str | None = None
        self.frags: list[str] = []  # fragment types, in order
        self.open: tuple | None = None

    def _frag(self, idx: int) -> int | None:
        if not self.frags:
            return None
        i = idx if idx >= 0 else len(self.frags) + idx
        return i if 0 <= i < len(self.frags) else None

    def _add_frags(self, frags, deltas: list, marks: list) -> None:
        for f in frags if isinstance(frags, list) else [frags]:
            if not isinstance(f, dict):
                continue
            t = str(f.get("type") or "RESPONSE").upper()
            self.frags.append(t)
            i = len(self.frags) - 1
            if t in _THINK:
                marks.append("think")
            elif t == "RESPONSE" and isinstance(f.get("content"), str):
                deltas.append((("ds", i), f, "content"))

    def _op(self, holder: dict, p, o, v, deltas: list, marks: list) -> None:
        if not isinstance(p, str):
            return
        if p == "response/thinking_content":
            marks.append("think")
            return
        m = _FRAG_CONTENT.match(p)
        if m or p == "response/content":
            i = self._frag(int(m.group(1))) if m else "content"
            if m and i is None and not self.frags:  # no fragment seen yet: a RESPONSE one is assumed
                self.frags.append("RESPONSE")
                i = 0
            if i is None:
                return
            if i != "content" and self.frags[i] in _THINK:
                marks.append("think")
            elif i == "content" or self.frags[i] == "RESPONSE":
                if isinstance(v, str) and (o is None or str(o).upper() == "APPEND"):
                    deltas.append((("ds", i), holder, "v"))
                else:
                    marks.append("set")
            return
        if p == "response/fragments" and str(o).upper() in ("APPEND", "ADD"):
            self._add_frags(v, deltas, marks)
        elif p == "response" and str(o).upper() == "BATCH" and isinstance(v, list):
            for sub in v:
                if isinstance(sub, dict):
                    sp = sub.get("p")
                    self._op(sub, f"response/{sp}" if isinstance(sp, str) else None, sub.get("o"), sub.get("v"),
                             deltas, marks)

    def __call__(self, name, obj):
        if not isinstance(obj, dict):
            return obj
        deltas: list = []
        marks: list = []
        if name or "v" not in obj:  # named events, errors, titles, timestamps: de-masked whole
            self.open = None
            return Ann(obj, closes=[()])
        if "p" not in obj and "o" not in obj and isinstance(obj["v"], dict) and "response" in obj["v"]:
            resp = obj["v"]["response"] if isinstance(obj["v"]["response"], dict) else {}
            self.frags = []
            if isinstance(resp.get("fragments"), list):
                self._add_frags(resp["fragments"], deltas, marks)
                self.p = "response/fragments/-1/content" if self.frags else "response/fragments"
            else:
                if isinstance(resp.get("content"), str):
                    deltas.append((("ds", "content"), resp, "content"))
                if isinstance(resp.get("thinking_content"), str) and resp["thinking_content"]:
                    marks.append("think")
                self.p = "response/content"
            self.o = "APPEND"
        else:
            p = obj["p"] if "p" in obj else self.p
            o = obj["o"] if "o" in obj else (self.o if "p" not in obj else None)
            self._op(obj, p, o, obj.get("v"), deltas, marks)
            self.p, self.o = p, o
        first = deltas[0][0] if deltas else None
        closes = None if first is not None and first == self.open else [()]
        self.open = deltas[-1][0] if deltas else None
        if not deltas and "think" in marks:
            return ClosingVerbatim(obj, closes)
        return rebind(Ann(obj, deltas, closes), obj)


class DeepSeekWeb(Dialect):
    name = "deepseek_web"
    service = "DeepSeek web app (chat.deepseek.com)"
    hosts = ("chat.deepseek.com",)
    paths = (re.compile(r"^/api/v0/chat/completion/?$"),)
    priority = 10

    def read(self, data, path):
        if not isinstance(data, dict) or not isinstance(data.get("prompt"), str) or \
                not isinstance(data.get("chat_session_id"), str):
            return None
        req = ChatRequest(kind=self.name, data=data, stream=True, history=False,
                          conversation=data["chat_session_id"] or None)
        if data["prompt"].strip():
            req.slots = [Slot(("prompt",), data["prompt"], "user", 1)]
        req.turns = 1
        return req

    def framer(self, content_type):
        if "event-stream" in (content_type or "").lower():
            return StatefulSSE(_DeepSeekState())
        return super().framer(content_type)

    def deltas(self, name, obj):
        found = ann_deltas(obj)
        if found is not None:
            return found
        if isinstance(obj, dict) and obj.get("p") == "response/content" and isinstance(obj.get("v"), str):
            return [DeltaRef(("ds", "content"), obj, "v")]  # not through our framer: explicit appends only
        return []

    def closes(self, name, obj):
        if obj == "[DONE]":
            return [()]
        if isinstance(obj, Ann | Verbatim):
            return ann_closes(obj)
        return [()] if name in ("finish", "close") else None

    def synth(self, template, channel, text, json_text=False):
        path = "response/content" if channel[1] == "content" else "response/fragments/-1/content"
        return None, {"p": path, "o": "APPEND", "v": text}


DIALECTS = [DeepSeekWeb()]

"""ChatGPT's web app (chatgpt.com, chat.openai.com): `POST /backend-api/conversation`,
`/backend-api/f/conversation` and the logged-out `/backend-anon/…` twins.

Request (taken from captures published in open-source clients and wrappers: borik216/prompt-shield's
fixtures (2026), lanqian528/chat2api, Simatwa/WebChatGPT): `{"action": "next"|"variant"|"continue",
"messages": [{"id", "author": {"role"}, "content": {"content_type": "text"|"multimodal_text", "parts": [...]},
"metadata"}], "conversation_id"?, "parent_message_id", "model", …}`. String parts are slots; object parts
(asset pointers: images, files) are not, except a part that carries a string `text` (an audio transcription).
The server keeps the conversation (`history=False`). Session key: `previous` = the `conversation_id`; a first
turn has none yet (its `parent_message_id` is the constant "client-created-root" in current clients), so it
uses the new user message's `id`, and the reply's `conversation_id` is announced as an alias: the next turn's
`conversation_id` then resolves to the first turn's session. (`conversation` is left None on purpose: the
session stage resolves aliases for `previous` only.)

Reply: SSE. "Delta encoding v1": `event: delta_encoding` / `data: "v1"`, then `event: delta` events that are
JSON-patch-like operations on the current document: `{"p": "", "o": "add", "v": {"message": …,
"conversation_id": …}, "c": N}` (a new document: the echoed user message, system messages, the assistant's
message; `{"v": {...}, "c": N}` is the same with path and op inherited), `{"p": "/message/content/parts/0",
"o": "append", "v": "text"}`, `{"v": "text"}` (continues the last path and op), `{"o": "patch", "v": [ops…]}`
(the last op of a patch becomes the one continued); and typed events (`title_generation`,
`message_marker`, `input_message`, `server_ste_metadata`, `message_stream_complete`, …). The old format sent
each event as a whole cumulative message: those events are de-masked whole.

Text deltas are appends on a path ending in `/parts/N` (channel: document + path); everything else is
de-masked whole. A channel closes at the first event that does not continue it (a new path, a new
document, `message_stream_complete`, an error, `[DONE]`); typed events that only report on the stream
(titles, markers, metadata) do not close it. The held tail is flushed as `{"p": path, "o": "append", "v": …}`.
Reasoning (a document whose `content_type` is `thoughts` / `reasoning_recap`, or whose `channel` is
`analysis`) is passed byte for byte.

Uncertain: which typed events the web client treats as interrupting the delta state (assumed none); how a
bare `{"v": "text"}` after a patch is read (assumed: the patch's last op continues); whether the client
appends to a message already marked finished (the held tail of the final patch arrives in a delta event
after it, before `message_stream_complete`).

The framer keeps the per-stream state the interface does not carry (the path a bare `{"v": …}` continues, the
document kinds): it annotates each parsed event (`Ann`, a dict whose attributes say what the event is), and
wraps reasoning events in `Verbatim` (not a dict, so generic de-masking leaves them alone). The other web
dialects (DeepSeek, Perplexity, Le Chat) use the same helpers (`annotated.py`).
"""

from __future__ import annotations

import re

from ..dialect import Dialect
from ..events import DeltaRef
from ..requests import ChatRequest, Walker
from .annotated import Ann, ClosingVerbatim, StatefulSSE, Verbatim, ann_closes, ann_deltas, rebind

_CONV_PATH = re.compile(r"^/backend-(?:api|anon)/(?:f/)?conversation/?$")
_PARTS = re.compile(r"^/message/content/parts/\d+$")
_REASONING_TYPES = {"thoughts", "reasoning_recap"}
#: typed events that report on the stream without touching the message being written
_QUIET_TYPES = {"title_generation", "message_marker", "server_ste_metadata", "resume_conversation_token",
                "conversation_detail_metadata", "url_moderation"}


# ---------------------------------------------------------------------- ChatGPT

def _message_slots(w: Walker, i: int, m: dict) -> None:
    role = (m.get("author") or {}).get("role") or "user"
    role = {"developer": "system", "critic": "assistant"}.get(role, role)
    if role not in ("system", "user", "assistant", "tool"):
        role = "user"
    if role == "user":
        w.turn += 1
    c = m.get("content")
    if not isinstance(c, dict):
        return
    ct = c.get("content_type")
    base = ("messages", i, "content")
    if ct in _REASONING_TYPES:
        return
    if ct == "user_editable_context":  # custom instructions sent along
        for k in ("user_profile", "user_instructions"):
            w.add(base + (k,), c.get(k), "system")
        return
    for j, part in enumerate(c.get("parts") or []):
        if isinstance(part, str):
            w.add(base + ("parts", j), part, role)
        elif isinstance(part, dict) and isinstance(part.get("text"), str) and \
                "asset" not in str(part.get("content_type", "")):
            w.add(base + ("parts", j, "text"), part["text"], role)
    if isinstance(c.get("text"), str):  # code / tether quote / execution output
        w.add(base + ("text",), c["text"], role)


def _reasoning_doc(v) -> bool:
    msg = v.get("message") if isinstance(v, dict) else None
    if not isinstance(msg, dict):
        return False
    ct = (msg.get("content") or {}).get("content_type") if isinstance(msg.get("content"), dict) else None
    return ct in _REASONING_TYPES or msg.get("channel") == "analysis"


def _conv_id(obj) -> str | None:
    if not isinstance(obj, dict):
        return None
    for d in (obj, obj.get("v")):
        if isinstance(d, dict) and isinstance(d.get("conversation_id"), str) and d["conversation_id"]:
            return d["conversation_id"]
    return None


class _ChatGPTState:
    """What a bare `{"v": …}` continues and which documents are reasoning, for one stream."""

    def __init__(self):
        self.p: str | None = None
        self.o: str | None = None
        self.doc = None
        self.reasoning: set = set()
        self.open: tuple | None = None  # the text channel the last event wrote to
        self.aliases: set[str] = set()

    def __call__(self, name, obj):
        if not isinstance(obj, dict):
            return obj
        cid = _conv_id(obj)
        fresh = cid if cid and cid not in self.aliases else None
        if fresh:
            self.aliases.add(fresh)
        t = obj.get("type")
        if isinstance(t, str):  # a typed event: the delta state is left as it is
            closes = None if t in _QUIET_TYPES else [()]
            if closes:
                self.open = None
            return Ann(obj, closes=closes, alias=fresh)
        if "v" not in obj:  # old format (a whole message) or something else: de-masked whole
            self.open = None
            if "message" in obj and _reasoning_doc(obj):
                return ClosingVerbatim(obj, [()])
            return Ann(obj, closes=[()], alias=fresh)
        if "c" in obj:
            self.doc = obj["c"]
        p = obj["p"] if "p" in obj else self.p
        o = obj["o"] if "o" in obj else (self.o if "p" not in obj else None)
        ops = [(obj, p, o)]
        if o == "patch" and isinstance(obj.get("v"), list):
            ops = [(s, s.get("p"), s.get("o")) for s in obj["v"] if isinstance(s, dict)]
        if p == "" and o == "add" and isinstance(obj.get("v"), dict):  # a new document
            if _reasoning_doc(obj["v"]):
                self.reasoning.add(self.doc)
            else:
                self.reasoning.discard(self.doc)
        deltas, reasoning = [], self.doc in self.reasoning
        for holder, sp, so in ops:
            if isinstance(sp, str) and "/thoughts" in sp:
                reasoning = True
            if so == "append" and isinstance(sp, str) and _PARTS.match(sp) and isinstance(holder.get("v"), str):
                if self.doc in self.reasoning:
                    continue
                deltas.append((("cg", self.doc, sp), holder, "v"))
        last = ops[-1] if ops else (obj, p, o)
        self.p, self.o = (last[1], last[2]) if o == "patch" and ops else (p, o)
        first = deltas[0][0] if deltas else None
        closes = None if first is not None and first == self.open else [()]
        last_is_text = bool(deltas) and deltas[-1][1] is last[0]
        self.open = deltas[-1][0] if last_is_text else None
        if not deltas and reasoning:
            return ClosingVerbatim(obj, closes)
        return rebind(Ann(obj, deltas, closes, alias=fresh), obj)


class ChatGPTWeb(Dialect):
    name = "chatgpt_web"
    service = "ChatGPT web app (chatgpt.com)"
    hosts = ("chatgpt.com", "chat.openai.com")
    paths = (_CONV_PATH,)
    priority = 10

    def read(self, data, path):
        if not isinstance(data, dict):
            return None
        msgs = data.get("messages")
        if msgs is None and isinstance(data.get("action"), str) and isinstance(data.get("conversation_id"), str):
            msgs = []  # "continue": no new message, the reply is still de-masked
        if not isinstance(msgs, list) or not all(isinstance(m, dict) and "content" in m for m in msgs):
            return None
        if msgs and not any(isinstance(m.get("author"), dict) for m in msgs):
            return None
        w = Walker()
        for i, m in enumerate(msgs):
            _message_slots(w, i, m)
        req = ChatRequest(kind=self.name, data=data, stream=True, history=False)
        conv = data.get("conversation_id")
        last_id = next((m.get("id") for m in reversed(msgs) if isinstance(m.get("id"), str)), None)
        parent = data.get("parent_message_id")
        if isinstance(conv, str) and conv:
            req.previous = conv
        elif last_id:
            req.previous = "msg:" + last_id
        elif isinstance(parent, str) and parent and parent != "client-created-root":
            req.previous = "msg:" + parent
        req.slots, req.turns = w.slots, w.turn
        return req

    def framer(self, content_type):
        if "event-stream" in (content_type or "").lower():
            return StatefulSSE(_ChatGPTState())
        return super().framer(content_type)

    def deltas(self, name, obj):
        found = ann_deltas(obj)
        if found is not None:
            return found
        if not isinstance(obj, dict) or "type" in obj:  # not through our framer: explicit appends only
            return []
        p = obj.get("p")
        if obj.get("o") == "append" and isinstance(p, str) and _PARTS.match(p) and isinstance(obj.get("v"), str):
            return [DeltaRef(("cg", None, p), obj, "v")]
        if set(obj) == {"v"} and isinstance(obj["v"], str):
            return [DeltaRef(("cg", None, "/message/content/parts/0"), obj, "v")]
        return []

    def closes(self, name, obj):
        if obj == "[DONE]":
            return [()]
        if isinstance(obj, Ann | Verbatim):
            return ann_closes(obj)
        if isinstance(obj, dict) and (obj.get("type") == "message_stream_complete" or obj.get("o") == "add"):
            return [()]
        return None

    def synth(self, template, channel, text, json_text=False):
        return "delta", {"p": channel[2], "o": "append", "v": text}

    def aliases(self, obj):
        if isinstance(obj, Ann):
            a = obj.extra.get("alias")
            return [a] if a else []
        cid = _conv_id(obj)
        return [cid] if cid else []


DIALECTS = [ChatGPTWeb()]

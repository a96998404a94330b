"""Microsoft Copilot's web app (copilot.microsoft.com): a WebSocket, `wss://copilot.microsoft.com/c/api/chat
?api-version=2` (plus `clientSessionId`, `accessToken`, feature flags in the query).

Undocumented; the shapes were taken from open-source clients (gpt4free's Copilot provider, several
Node/Python/Go clients, a Chrome-DevTools capture script whose comments list a whole observed exchange)
and their test fixtures:

- client → server: `{"event":"setOptions", …}`, `{"event":"send","conversationId":…,"content":[{"type":
  "text","text":…}, {"type":"image","url":…}],"mode":"chat"|"reasoning"|"smart"|…,"context":{…}}`, and
  other events without conversation text (`challengeResponse`, `reportLocalConsents`, `ping` …). Only
  `send` is a chat request: its `text` parts are the user's turn; the strings of `context` (the Edge
  sidebar's page context, shape unknown) are analysed too, except ids and URLs' keys
  (`chatapi.SKIP_KEYS`). The conversation id comes in every `send` (it is created before, by
  `POST /c/api/conversations`), so turns share a session by it; the server keeps the history.
- server → client: `received`, `startMessage` {conversationId, messageId}, `appendText` {messageId,
  partId, text} — the text deltas, one channel per messageId + partId — `replaceText` (a part's whole
  text: closes the part's channel, then de-masked whole), `partCompleted` {messageId, partId} (closes
  it), `done` {messageId} (closes the message), `titleUpdate` {title}, `suggestedFollowups`
  {suggestions}, `citation`, `generatingImage` {prompt}, `imageGenerated`, `error`/`chatMessageError`
  (close everything), `challenge`, `ping`/`pong`. Messages carry a running `"id"` (a counter as a
  string) in recent captures and none in older ones.

Uncertain: a synthetic `appendText` (held text flushed before `partCompleted`) carries no `"id"` — the
web app's handling of ids is unknown and some captures have none; whether `replaceText` replaces one
part or the message; and one open-source client splits a single WebSocket message into several JSON
objects ("Copilot packs several per frame") — `split_json_values` (chatapi.frames) does that, the
WebSocket hook needs it for such messages to be de-masked.
"""

from __future__ import annotations

import json
import re

from ..dialect import Dialect
from ..events import DeltaRef
from ..frames import JSONStyle
from ..requests import SKIP_KEYS, ChatRequest, Slot

_IMAGE_PARTS = {"image", "file", "audio", "video"}
_MAX_CONTEXT_SLOTS = 256


def style_of(body: bytes) -> JSONStyle:
    try:
        return JSONStyle.of(body.decode("utf-8"))
    except UnicodeDecodeError:
        return JSONStyle()


def serialise_like(chat: ChatRequest) -> bytes:
    """A WebSocket message written back in the JSON style it came in (see `JSONStyle`)."""
    style = getattr(chat, "json_style", None) or JSONStyle()
    return style.dumps(chat.data).encode("utf-8")


class WebSocketJSON:
    """parse/serialise of one JSON WebSocket message that keeps the JSON style it came in (mixed into the
    WebSocket dialects before their Dialect base)."""

    def parse(self, body: bytes, content_type: str | None, path: str) -> ChatRequest | None:
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return None
        chat = self.read(data, path)
        if chat is not None:
            chat.json_style = style_of(body)
        return chat

    def serialise(self, chat: ChatRequest) -> bytes:
        return serialise_like(chat)

    def framer(self, content_type):
        return None  # WebSocket messages: one event each


class Copilot(WebSocketJSON, Dialect):
    name = "copilot"
    service = "Microsoft Copilot web app (copilot.microsoft.com)"
    hosts = ("copilot.microsoft.com",)
    paths = (re.compile(r"/c/api/chat/?$"),)
    priority = 20
    websocket = True

    def read(self, data, path):
        if not isinstance(data, dict) or data.get("event") != "send" or not isinstance(data.get("content"), list):
            return None
        slots: list[Slot] = []
        for i, part in enumerate(data["content"]):
            if isinstance(part, str) and part.strip():
                slots.append(Slot(("content", i), part, "user", 1))
            elif isinstance(part, dict) and part.get("type") not in _IMAGE_PARTS:
                t = part.get("text")
                if isinstance(t, str) and t.strip():
                    slots.append(Slot(("content", i, "text"), t, "user", 1))
        _strings(data.get("context"), ("context",), slots, 0)
        if not slots:
            return None
        conv = data.get("conversationId")
        return ChatRequest(kind=self.name, data=data, slots=slots, stream=True, turns=1, history=False,
                           conversation=conv if isinstance(conv, str) and conv else None)

    # ------------------------------------------------------------------ replies

    def framer(self, content_type):
        return None  # WebSocket messages: one event each

    def deltas(self, name, obj):
        if isinstance(obj, dict) and obj.get("event") == "appendText" and isinstance(obj.get("text"), str):
            return [DeltaRef(("cp", obj.get("messageId"), obj.get("partId")), obj, "text")]
        return []

    def closes(self, name, obj):
        if not isinstance(obj, dict):
            return None
        ev = obj.get("event")
        if ev in ("partCompleted", "replaceText"):
            return [("cp", obj.get("messageId"), obj.get("partId"))]
        if ev == "done":
            return [("cp", obj.get("messageId"))]
        if ev in ("error", "chatMessageError"):
            return [()]
        return None

    def synth(self, template, channel, text, json_text=False):
        _, message_id, part_id = channel
        return None, {"event": "appendText", "messageId": message_id, "partId": part_id, "text": text}


def _strings(value, parts: tuple, slots: list[Slot], depth: int) -> None:
    if depth > 16 or len(slots) >= _MAX_CONTEXT_SLOTS:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if k not in SKIP_KEYS and "url" not in k.lower():
                _strings(v, parts + (k,), slots, depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _strings(v, parts + (i,), slots, depth + 1)
    elif isinstance(value, str) and value.strip():
        slots.append(Slot(parts, value, "user", 1))


DIALECTS = [Copilot()]

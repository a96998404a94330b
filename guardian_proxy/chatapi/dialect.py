"""The interface every chat wire format implements: one `Dialect` per format, one module per service.

A dialect answers five questions, and nothing else of the proxy knows a service's shapes:

1. `matches(host, path)`: is a request to this address one of mine? (a path pattern; web apps also name
   their hosts, so `/backend-api/conversation` on another site is not ChatGPT);
2. `parse(body, content_type, path)` → `ChatRequest`: the conversation's texts as `Slot`s (where in the
   parsed body, who wrote it — system, user, assistant, tool — and which user turn), whether it streams,
   whether it carries the history, and its conversation id when it has one;
3. `serialise(chat)` → bytes: the body written back after the session stage rewrote slots in place;
4. for the reply: `framer(content_type)` cuts a stream (or a whole body) into events, `deltas` names the
   text fragments of an event by channel, `closes` which channels end at an event, `synth` makes a delta
   event to flush text held back while a surrogate may still be completing, `aliases` the ids a later
   request may use to continue the conversation;
5. `websocket`: its requests and replies are WebSocket messages, one event each (`parse` gets one
   client→server message and may return None for messages that carry no conversation text).

Stated rules shared by every dialect: a request whose body does not have the dialect's shape is not a
chat (it goes through the general pipeline); texts of unknown part types are analysed when they carry a
string `text`; images, audio and files are left to the file reader (`bodies.files`); reasoning blocks
that providers sign are never analysed or changed.
"""

from __future__ import annotations

import json
import re
from typing import ClassVar

from .events import DeltaRef
from .requests import ChatRequest
from .sse import NDJSONFramer, SSEFramer


class Dialect:
    name: ClassVar[str] = ""
    #: hosts (or registrable domains, matched as suffixes) this dialect is limited to; empty = any host
    hosts: ClassVar[tuple[str, ...]] = ()
    #: request paths (searched in the path without its query)
    paths: ClassVar[tuple[re.Pattern, ...]] = ()
    #: tried before dialects of a lower priority (web apps with hosts before generic API shapes)
    priority: ClassVar[int] = 0
    websocket: ClassVar[bool] = False
    #: the human name docs/services.md and the decision log use
    service: ClassVar[str] = ""

    # ------------------------------------------------------------------ requests

    def matches(self, host: str, path: str) -> bool:
        if self.hosts and not any(host == h or host.endswith("." + h) for h in self.hosts):
            return False
        return any(p.search(path) for p in self.paths)

    def parse(self, body: bytes, content_type: str | None, path: str) -> ChatRequest | None:
        """The chat request in a decoded body; None when it does not have this dialect's shape."""
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return None
        return self.read(data, path)

    def read(self, data, path: str) -> ChatRequest | None:
        raise NotImplementedError

    def serialise(self, chat: ChatRequest) -> bytes:
        return json.dumps(chat.data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    # ------------------------------------------------------------------ replies

    def framer(self, content_type: str | None):
        """A framer for a streamed reply of this content type, or None (then it is not a stream of mine)."""
        ct = (content_type or "").lower()
        if "event-stream" in ct:
            return SSEFramer()
        if "ndjson" in ct or "jsonl" in ct:
            return NDJSONFramer()
        return None

    def deltas(self, name: str | None, obj) -> list[DeltaRef]:
        return []

    def closes(self, name: str | None, obj) -> list[tuple] | None:
        """Channel prefixes that end at this event (flushed before it); `[()]` = every channel; None = none."""
        return [()] if obj == "[DONE]" else None

    def synth(self, template, channel: tuple, text: str, json_text: bool = False) -> tuple[str | None, object]:
        """(event name, data) of a delta event carrying `text` for `channel`, modelled on `template`."""
        raise NotImplementedError

    def aliases(self, obj) -> list[str]:
        return []

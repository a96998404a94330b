"""Chat wire formats: one dialect per service (`chatapi.dialects`, the interface in `chatapi.dialect`).

`recognise` turns a request into a `ChatRequest`: every text the user, the system prompt or a tool wrote
as a `Slot` with its path in the parsed body (`json:$.messages[3].content`, `…content[0].text`,
`…tool_calls[0].function.arguments`), so the session stage can rewrite the whole history in place and the
dialect can write the body back. Stated rules: content parts of unknown types are analysed when they
carry a string `text`; images, audio and files are left to the file reader; reasoning blocks (`thinking`,
`redacted_thinking`, `reasoning` items) are never analysed or changed because providers sign them.

Replies: the dialect's framer cuts a stream into events (SSE, NDJSON, AWS event-stream, length-prefixed
frames, or WebSocket messages), `deltas` says which string of an event is a delta of which text channel,
`closes` which events close a channel, and `synth` makes a delta event (to flush text held back while a
surrogate might still be completing across two chunks).
"""

from __future__ import annotations

import json

from . import dialects
from .dialect import Dialect
from .events import DeltaRef, event_closes, event_deltas, response_aliases, synth_event
from .requests import SKIP_KEYS, ChatRequest, Slot, context_hash, set_text


def kinds() -> tuple[str, ...]:
    return tuple(d.name for d in dialects.all_dialects())


def kind_of(path: str, host: str = "") -> str | None:
    """The first dialect a request path (and host) may belong to, or None."""
    found = dialects.find(host, path)
    return found[0].name if found else None


def recognise(path: str, data, host: str = "") -> ChatRequest | None:
    """The chat request in a parsed body sent to `host` + `path`, or None when address or shape do not fit."""
    for d in dialects.find(host, path):
        chat = d.read(data, path)
        if chat is not None:
            return chat
    return None


def recognise_body(host: str, path: str, body: bytes, content_type: str | None,
                   websocket: bool = False, fallback: Dialect | None = None) -> ChatRequest | None:
    """The chat request in a decoded body (or one WebSocket message), or None. A JSON body is parsed once for
    every dialect that reads JSON the default way, `fallback` included (`ai_generic`: tried when no dialect of
    the address accepted the body; its errors are not caught)."""
    data = _UNPARSED
    for d in dialects.find(host, path, websocket):
        try:
            if type(d).parse is Dialect.parse:
                if data is _UNPARSED:
                    data = _json(body)
                chat = d.read(data, path) if data is not None else None
            else:
                chat = d.parse(body, content_type, path)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, UnicodeDecodeError):
            chat = None  # a body that does not have the shape is not a chat of this dialect
        if chat is not None:
            return chat
    if fallback is None:
        return None
    if type(fallback).parse is not Dialect.parse:
        return fallback.parse(body, content_type, path)
    if data is _UNPARSED:
        data = _json(body)
    return fallback.read(data, path) if data is not None else None


_UNPARSED = object()


def _json(body: bytes):
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None


__all__ = ["SKIP_KEYS", "ChatRequest", "DeltaRef", "Dialect", "Slot", "context_hash", "dialects", "event_closes",
           "event_deltas", "kind_of", "kinds", "recognise", "recognise_body", "response_aliases", "set_text",
           "synth_event"]

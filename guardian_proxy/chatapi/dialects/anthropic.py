"""Anthropic Messages (`…/v1/messages`: `system`, text/tool_use/tool_result/document blocks; SSE with
content_block_delta events). Also what Bedrock's and Vertex's Anthropic bodies carry (`bedrock.py`)."""

from __future__ import annotations

import re

from ..dialect import Dialect
from ..events import DeltaRef
from ..requests import ChatRequest, Walker


def read_messages(data, kind: str) -> ChatRequest | None:
    """An Anthropic Messages body (also inside Bedrock InvokeModel and Vertex rawPredict)."""
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        return None
    w = Walker()
    system = data.get("system")
    if isinstance(system, str):
        w.add(("system",), system, "system")
    else:
        w.content(system, ("system",), "system")
    w.messages(data["messages"], "anthropic")
    req = ChatRequest(kind=kind, data=data, stream=data.get("stream") is True)
    w.metadata(req, data)
    req.slots, req.turns = w.slots, w.turn
    return req


def deltas(obj) -> list[DeltaRef]:
    if not isinstance(obj, dict):
        return []
    d = obj.get("delta")
    if obj.get("type") == "content_block_delta" and isinstance(d, dict):
        if d.get("type") == "text_delta" and isinstance(d.get("text"), str):
            return [DeltaRef(("a", obj.get("index", 0)), d, "text")]
        if d.get("type") == "input_json_delta" and isinstance(d.get("partial_json"), str):
            return [DeltaRef(("a", obj.get("index", 0)), d, "partial_json", True)]
    return []


def closes(obj) -> list[tuple] | None:
    if not isinstance(obj, dict):
        return None
    t = obj.get("type")
    if t == "content_block_stop":
        return [("a", obj.get("index", 0))]
    return [()] if t in ("message_stop", "error", "message_delta") else None


def synth(channel: tuple, text: str, json_text: bool) -> tuple[str, dict]:
    delta = {"type": "input_json_delta", "partial_json": text} if json_text else {"type": "text_delta", "text": text}
    return "content_block_delta", {"type": "content_block_delta", "index": channel[1], "delta": delta}


class Anthropic(Dialect):
    name = "anthropic"
    service = "Anthropic Messages API"
    paths = (re.compile(r"/messages/?$"),)
    priority = -10  # `/messages` is a common word: every more specific dialect is tried first

    def read(self, data, path):
        return read_messages(data, self.name)

    def deltas(self, name, obj):
        return deltas(obj)

    def closes(self, name, obj):
        return [()] if obj == "[DONE]" else closes(obj)

    def synth(self, template, channel, text, json_text=False):
        return synth(channel, text, json_text)


DIALECTS = [Anthropic()]

"""Ollama (`/api/chat` with messages, `/api/generate` with prompt + system and the `context` it hands
back; NDJSON streams, on by default)."""

from __future__ import annotations

import re

from ..dialect import Dialect
from ..events import DeltaRef
from ..requests import ChatRequest, Walker, context_hash


class OllamaChat(Dialect):
    name = "ollama_chat"
    service = "Ollama /api/chat"
    paths = (re.compile(r"/api/chat/?$"),)

    def read(self, data, path):
        if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
            return None
        w = Walker()
        w.messages(data["messages"], self.name)
        req = ChatRequest(kind=self.name, data=data, stream=data.get("stream") is not False)
        w.metadata(req, data)
        req.slots, req.turns = w.slots, w.turn
        return req

    def deltas(self, name, obj):
        m = obj.get("message") if isinstance(obj, dict) else None
        return [DeltaRef(("o", "content"), m, "content")] if isinstance(m, dict) and isinstance(
            m.get("content"), str) else []

    def closes(self, name, obj):
        return [()] if obj == "[DONE]" or (isinstance(obj, dict) and obj.get("done") is True) else None

    def synth(self, template, channel, text, json_text=False):
        base = {k: v for k, v in (template if isinstance(template, dict) else {}).items() if k in ("model", "created_at")}
        return None, {**base, "message": {"role": "assistant", "content": text}, "done": False}


class OllamaGenerate(OllamaChat):
    name = "ollama_generate"
    service = "Ollama /api/generate"
    paths = (re.compile(r"/api/generate/?$"),)

    def read(self, data, path):
        if not isinstance(data, dict) or not isinstance(data.get("prompt"), str):
            return None
        w = Walker()
        w.add(("system",), data.get("system"), "system")
        w.turn = 1
        w.add(("prompt",), data["prompt"], "user")
        req = ChatRequest(kind=self.name, data=data, stream=data.get("stream") is not False, history=False)
        ctx = data.get("context")
        req.previous = context_hash(ctx) if isinstance(ctx, list) and ctx else None
        w.metadata(req, data)
        req.slots, req.turns = w.slots, w.turn
        return req

    def deltas(self, name, obj):
        return [DeltaRef(("o", "response"), obj, "response")] if isinstance(obj, dict) and isinstance(
            obj.get("response"), str) else []

    def synth(self, template, channel, text, json_text=False):
        base = {k: v for k, v in (template if isinstance(template, dict) else {}).items() if k in ("model", "created_at")}
        return None, {**base, "response": text, "done": False}

    def aliases(self, obj):
        if isinstance(obj, dict) and isinstance(obj.get("context"), list) and obj["context"]:
            return [context_hash(obj["context"])]
        return []


DIALECTS = [OllamaChat(), OllamaGenerate()]

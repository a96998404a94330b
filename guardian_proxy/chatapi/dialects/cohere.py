"""Cohere Chat: v2 (`/v2/chat`, api.cohere.com / api.cohere.ai or any host with that shape) and v1 (`/v1/chat`:
`message` + `chat_history` + `preamble`).

Shapes from Cohere's API reference and the cohere Python SDK (`v2/raw_client.py`, `v2/types/*`, `types/*`,
`raw_base_client.py`, `core/http_sse`):

- v2 request: `messages[]` {role system|user|assistant|tool; content a string or a list of {type: text, text}
  / {type: document, document: {data: {...}, id}} (every string of `data` a slot) / {type: thinking} (never a
  slot) / {type: image_url} (a file)}; assistant `tool_plan`, `tool_calls[].function.arguments` (a JSON string:
  `json_text`) and `citations[]` (`text`, and the strings of `sources[].document` / `.tool_output`: the reply's
  own quotes of the conversation, sent back with the history); tool messages' content (`tool_call_id`); top-level
  `documents[]` (strings, or {id, data: {...}}). Stateless: the history travels with every request.
- v2 reply: JSON {id, finish_reason, message: {role, content: [{type: text, text}], tool_plan, tool_calls,
  citations}, usage} (de-masked whole), or an SSE stream (`event: <type>` + `data:` JSON with the same
  `type`; the SDK reads `data` only, requires `text/event-stream`, and stops at `data: [DONE]` if one comes):
  message-start, content-start, content-delta (`delta.message.content.text`; `.thinking` for reasoning models:
  never de-masked), content-end, tool-plan-delta (`delta.message.tool_plan`), tool-call-start (with
  `delta.message.tool_calls.function.arguments`, usually ""), tool-call-delta (the same path), tool-call-end,
  citation-start/-end (de-masked whole), message-end. Channels: content by index, the tool plan, tool calls
  by index; content-end / tool-call-end close theirs, tool-call-start closes the plan, message-end everything.
- v1 request: `preamble` (system), `chat_history[]` {role USER|CHATBOT|SYSTEM|TOOL, message, tool_calls[]
  {name, parameters object}, tool_results[]}, `message` (the new user turn), `tool_results[]` {call {name,
  parameters}, outputs[] objects}, `documents[]` (objects of strings); `conversation_id` means the server
  keeps the history (then the request is one turn of that conversation).
- v1 reply: JSON (text, chat_history, tool_calls …, de-masked whole) or a stream, NDJSON by default
  (`application/stream+json`), SSE with `Accepts: text/event-stream`: events by `event_type`:
  text-generation (`text`), tool-calls-chunk (`tool_call_delta.parameters`, partial JSON; `text`, the plan),
  tool-calls-generation (whole calls), citation-generation, stream-end (the whole response).
  Uncertain: whether v1's SSE form names events with `event:` lines (synthetic v1 events carry none).
"""

from __future__ import annotations

import re

from ..dialect import Dialect
from ..events import DeltaRef
from ..requests import ChatRequest, Walker
from ..sse import NDJSONFramer, SSEFramer


def _document_parts(w: Walker, content, base: tuple, role: str) -> None:
    """`{type: document, document: {data: {...}}}` parts of a v2 message (the walker reads the text parts)."""
    if not isinstance(content, list):
        return
    for j, part in enumerate(content):
        if isinstance(part, dict) and part.get("type") == "document" and isinstance(part.get("document"), dict):
            w.strings(part["document"].get("data"), base + (j, "document", "data"), role)


def read_v2(data, kind: str) -> ChatRequest | None:
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        return None
    w = Walker()
    w.messages(data["messages"], kind)  # content strings / text parts, tool_calls' arguments (json_text)
    walked = w.slots
    w.slots = []
    for i, m in enumerate(data["messages"]):
        if not isinstance(m, dict):
            continue
        base = ("messages", i)
        w.turn = sum(1 for s in data["messages"][: i + 1] if isinstance(s, dict) and s.get("role") == "user")
        role = m.get("role") or "user"
        _document_parts(w, m.get("content"), base + ("content",), "tool" if role == "tool" else role)
        if role == "assistant":
            w.add(base + ("tool_plan",), m.get("tool_plan"), "assistant")
            for j, cit in enumerate(m.get("citations") or []):
                if not isinstance(cit, dict):
                    continue
                w.add(base + ("citations", j, "text"), cit.get("text"), "assistant")
                for k, src in enumerate(cit.get("sources") or []):
                    if not isinstance(src, dict):
                        continue
                    for key in ("document", "tool_output"):
                        w.strings(src.get(key), base + ("citations", j, "sources", k, key), "tool")
    extra = w.slots
    w.slots = sorted(walked + extra, key=lambda s: _order(s.parts))
    w.turn = sum(1 for m in data["messages"] if isinstance(m, dict) and m.get("role") == "user")
    for i, doc in enumerate(data.get("documents") or []):
        if isinstance(doc, str):
            w.add(("documents", i), doc, "tool")
        elif isinstance(doc, dict):
            w.strings(doc.get("data"), ("documents", i, "data"), "tool")
    req = ChatRequest(kind=kind, data=data, stream=data.get("stream") is True)
    req.slots, req.turns = w.slots, w.turn
    return req


def _order(parts: tuple) -> tuple:
    return tuple((0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in parts)


_V1_ROLES = {"USER": "user", "CHATBOT": "assistant", "SYSTEM": "system", "TOOL": "tool"}


def read_v1(data, kind: str) -> ChatRequest | None:
    if not isinstance(data, dict) or not isinstance(data.get("message"), str):
        return None
    if "messages" in data or "contents" in data:
        return None
    w = Walker()
    w.add(("preamble",), data.get("preamble"), "system")
    history = data.get("chat_history")
    for i, m in enumerate(history if isinstance(history, list) else []):
        if not isinstance(m, dict):
            continue
        role = _V1_ROLES.get(str(m.get("role", "")).upper(), "user")
        if role == "user":
            w.turn += 1
        base = ("chat_history", i)
        w.add(base + ("message",), m.get("message"), role)
        for j, call in enumerate(m.get("tool_calls") or []):
            if isinstance(call, dict):
                w.strings(call.get("parameters"), base + ("tool_calls", j, "parameters"), "assistant")
        _tool_results(w, m.get("tool_results"), base + ("tool_results",))
    if data["message"].strip():
        w.turn += 1
    w.add(("message",), data["message"], "user")
    _tool_results(w, data.get("tool_results"), ("tool_results",))
    for i, doc in enumerate(data.get("documents") or []):
        w.strings(doc, ("documents", i), "tool")
    req = ChatRequest(kind=kind, data=data, stream=data.get("stream") is True)
    conv = data.get("conversation_id")
    if isinstance(conv, str) and conv:
        req.conversation = conv
        req.history = bool(history)  # without chat_history the server keeps the conversation
    req.slots, req.turns = w.slots, w.turn
    return req


def _tool_results(w: Walker, results, base: tuple) -> None:
    for j, r in enumerate(results if isinstance(results, list) else []):
        if not isinstance(r, dict):
            continue
        call = r.get("call")
        if isinstance(call, dict):
            w.strings(call.get("parameters"), base + (j, "call", "parameters"), "assistant")
        w.strings(r.get("outputs"), base + (j, "outputs"), "tool")


def _msg(obj) -> dict | None:
    d = obj.get("delta") if isinstance(obj, dict) else None
    m = d.get("message") if isinstance(d, dict) else None
    return m if isinstance(m, dict) else None


class CohereV2(Dialect):
    name = "cohere_v2"
    service = "Cohere Chat API v2"
    paths = (re.compile(r"/v2/chat/?$"),)

    def read(self, data, path):
        return read_v2(data, self.name)

    def framer(self, content_type):
        return SSEFramer() if "event-stream" in (content_type or "").lower() else None

    def deltas(self, name, obj):
        if not isinstance(obj, dict):
            return []
        t, m = obj.get("type") or name, _msg(obj)
        if m is None:
            return []
        if t in ("content-delta", "content-start"):
            c = m.get("content")
            if isinstance(c, dict) and isinstance(c.get("text"), str):
                return [DeltaRef(("k", "content", obj.get("index", 0)), c, "text")]
        elif t == "tool-plan-delta" and isinstance(m.get("tool_plan"), str):
            return [DeltaRef(("k", "plan"), m, "tool_plan")]
        elif t in ("tool-call-delta", "tool-call-start"):
            tc = m.get("tool_calls")
            fn = tc.get("function") if isinstance(tc, dict) else None
            if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                return [DeltaRef(("k", "tool", obj.get("index", 0)), fn, "arguments", True)]
        return []

    def closes(self, name, obj):
        if obj == "[DONE]":
            return [()]
        if not isinstance(obj, dict):
            return None
        t = obj.get("type") or name
        if t == "content-end":
            return [("k", "content", obj.get("index", 0))]
        if t == "tool-call-end":
            return [("k", "tool", obj.get("index", 0))]
        if t == "tool-call-start":
            return [("k", "plan")]
        return [()] if t in ("message-end", "error") else None

    def synth(self, template, channel, text, json_text=False):
        if channel[1] == "plan":
            return "tool-plan-delta", {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": text}}}
        if channel[1] == "tool":
            return "tool-call-delta", {"type": "tool-call-delta", "index": channel[2],
                                       "delta": {"message": {"tool_calls": {"function": {"arguments": text}}}}}
        return "content-delta", {"type": "content-delta", "index": channel[2],
                                 "delta": {"message": {"content": {"text": text}}}}


class CohereV1(Dialect):
    name = "cohere_v1"
    service = "Cohere Chat API v1"
    paths = (re.compile(r"/v1/chat/?$"),)

    def read(self, data, path):
        return read_v1(data, self.name)

    def framer(self, content_type):
        ct = (content_type or "").lower()
        if "event-stream" in ct:
            return SSEFramer()
        if "stream+json" in ct or "ndjson" in ct or "jsonl" in ct:
            return NDJSONFramer()
        return None

    def deltas(self, name, obj):
        if not isinstance(obj, dict):
            return []
        t = obj.get("event_type")
        if t == "text-generation" and isinstance(obj.get("text"), str):
            return [DeltaRef(("c1", "text"), obj, "text")]
        if t == "tool-calls-chunk":
            out = []
            if isinstance(obj.get("text"), str):
                out.append(DeltaRef(("c1", "plan"), obj, "text"))
            d = obj.get("tool_call_delta")
            if isinstance(d, dict) and isinstance(d.get("parameters"), str):
                out.append(DeltaRef(("c1", "tool", d.get("index", 0)), d, "parameters", True))
            return out
        return []

    def closes(self, name, obj):
        if obj == "[DONE]":
            return [()]
        if not isinstance(obj, dict):
            return None
        t = obj.get("event_type")
        if t == "tool-calls-generation":
            return [("c1", "plan"), ("c1", "tool")]
        return [()] if t == "stream-end" or obj.get("is_finished") is True else None

    def synth(self, template, channel, text, json_text=False):
        if channel[1] == "tool":
            return None, {"is_finished": False, "event_type": "tool-calls-chunk",
                          "tool_call_delta": {"index": channel[2], "parameters": text}}
        if channel[1] == "plan":
            return None, {"is_finished": False, "event_type": "tool-calls-chunk", "text": text}
        return None, {"is_finished": False, "event_type": "text-generation", "text": text}


DIALECTS = [CohereV2(), CohereV1()]

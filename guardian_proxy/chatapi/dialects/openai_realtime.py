"""OpenAI over WebSocket: the Realtime API (`wss://api.openai.com/v1/realtime?model=…`, Azure OpenAI's
`…/openai/realtime` and `…/openai/v1/realtime`) and the Responses API over WebSocket as coding agents use
it (the open-source Codex CLI: `wss://chatgpt.com/backend-api/codex/responses`, `wss://api.openai.com/v1/
responses`). Each WebSocket message is one event; `parse` gets one client→server message.

Realtime (shapes: the `openai` SDK's `types/realtime` and `types/beta/realtime`, GA and beta names):

- client events with text: `session.update` (`session.instructions`), `conversation.item.create`
  (`item`: a message whose `content[]` parts `input_text`/`text`/`output_text` carry `text` — `input_audio`
  and `input_image` parts are not slots —, a `function_call_output`'s `output`, a `function_call`'s
  `arguments` (JSON text)), `response.create` (`response.instructions`, and `response.input[]` items of
  the same shapes). Other client events (`input_audio_buffer.*`, `response.cancel`, …) and events without
  text are not chat requests (None). The server keeps the conversation: history False, no conversation
  id (the session stage keys the session by the WebSocket connection), one turn per user message item.
- server events: the Responses-style `*.delta`/`*.done` pairs, by `OpenAIResponses`' rule (its channel plus
  the call id) —
  `response.output_text.delta` (beta `response.text.delta`), `response.output_audio_transcript.delta`
  (beta `response.audio_transcript.delta`), `response.function_call_arguments.delta` and
  `response.mcp_call_arguments.delta` (JSON text) — with their channel (item, output index, content
  index) closed by the matching `.done` (whose whole `text`/`transcript`/`arguments` is de-masked whole);
  `response.done` closes every channel (the parent would read it as the close of a "response" channel);
  `conversation.item.input_audio_transcription.delta` is closed by its `.completed` (its `transcript`
  de-masked whole). Audio deltas (`response.output_audio.delta`, beta `response.audio.delta`: base64)
  are never scanned: they are named as a delta of a channel that holds nothing (an empty holder), so no
  string of theirs is de-masked. Echoed items (`conversation.item.created`/`added`/`done`,
  `response.output_item.done`, `response.done`, `session.updated`) are de-masked whole.
  A synthetic delta (held text flushed before a `.done`) gets a fresh `event_id`, the closing event's
  `response_id` and, for function-call arguments, the call's `call_id` (kept in the channel).

Responses over WebSocket (shapes: codex-rs `codex-api` `ResponsesWsRequest`): the client sends
`{"type":"response.create", …a Responses request body…}` (model, instructions, input, tools,
previous_response_id, store, stream, include, prompt_cache_key, generate …), `{"type":"response.append",
"input":[…]}` in some versions (input added to the open response: history False) and
`{"type":"response.processed","response_id":…}` (no text); the server answers with the Responses
streaming events, one per message, exactly as over SSE (`OpenAIResponses`' deltas/closes/synth/aliases:
`previous_response_id` chains the session across the turns of one connection and across connections).

Messages are written back in the JSON style they came in (`chatapi.frames.JSONStyle`).
"""

from __future__ import annotations

import itertools
import re

from ..events import DeltaRef
from ..requests import ChatRequest, Walker
from .copilot import WebSocketJSON
from .openai import OpenAIResponses, channel

_AUDIO_DELTAS = ("response.output_audio.delta", "response.audio.delta")
_TRANSCRIPTION = "conversation.item.input_audio_transcription"
_ids = itertools.count(1)


class OpenAIRealtime(WebSocketJSON, OpenAIResponses):
    name = "openai_realtime"
    service = "OpenAI Realtime API (WebSocket; also Azure OpenAI)"
    paths = (re.compile(r"/realtime/?$"),)
    websocket = True

    def read(self, data, path):
        if not isinstance(data, dict):
            return None
        t = data.get("type")
        w = Walker()
        if t == "session.update" and isinstance(data.get("session"), dict):
            w.add(("session", "instructions"), data["session"].get("instructions"), "system")
        elif t == "conversation.item.create":
            _item(w, data.get("item"), ("item",))
        elif t == "response.create" and isinstance(data.get("response"), dict):
            r = data["response"]
            w.add(("response", "instructions"), r.get("instructions"), "system")
            for i, it in enumerate(r.get("input") if isinstance(r.get("input"), list) else []):
                _item(w, it, ("response", "input", i))
        else:
            return None
        if not w.slots:
            return None
        return ChatRequest(kind=self.name, data=data, slots=w.slots, stream=True, turns=w.turn, history=False)

    # ------------------------------------------------------------------ replies

    @staticmethod
    def _channel(base: str, obj: dict) -> tuple:
        """The Responses channel, plus the call id (so a flush of function-call arguments keeps it)."""
        return channel(base, obj) + (obj.get("call_id") if "arguments" in base else None,)

    def deltas(self, name, obj):
        if not isinstance(obj, dict):
            return []
        t = obj.get("type") or ""
        if t in _AUDIO_DELTAS:  # base64 audio: a delta of nothing, so that no string of it is scanned
            return [DeltaRef(("audio", obj.get("item_id")), {"delta": ""}, "delta")]
        if t.endswith(".delta") and isinstance(obj.get("delta"), str) and "reasoning" not in t and "audio." not in t:
            return [DeltaRef(self._channel(t[:-6], obj), obj, "delta", "arguments" in t)]
        return []

    def closes(self, name, obj):
        if not isinstance(obj, dict):
            return None
        t = obj.get("type") or ""
        if t in ("response.done", "error"):
            return [()]
        if t in ("response.output_audio.done", "response.audio.done"):
            return [("audio", obj.get("item_id"))]
        if t in (_TRANSCRIPTION + ".completed", _TRANSCRIPTION + ".failed"):
            return [self._channel(_TRANSCRIPTION, obj)]
        if t.endswith(".done"):
            return [self._channel(t[:-5], obj)]
        return None

    def synth(self, template, ch, text, json_text=False):
        tpl = template if isinstance(template, dict) else {}
        _, base, item_id, out_i, content_i, call_id = ch
        ev = {"type": base + ".delta", "event_id": f"event_guardian{next(_ids)}"}
        rid = tpl.get("response_id")
        if rid is None and isinstance(tpl.get("response"), dict):
            rid = tpl["response"].get("id")  # flushed at response.done
        if base != _TRANSCRIPTION and isinstance(rid, str):
            ev["response_id"] = rid
        ev["item_id"] = item_id
        if out_i is not None:
            ev["output_index"] = out_i
        if content_i is not None:
            ev["content_index"] = content_i
        if call_id is not None:
            ev["call_id"] = call_id
        ev["delta"] = text
        return base + ".delta", ev

    def aliases(self, obj):
        return []  # one conversation per connection: nothing to continue elsewhere


def _item(w: Walker, it, p: tuple) -> None:
    """One Realtime conversation item (a message, a function call or its output)."""
    if not isinstance(it, dict):
        return
    t = it.get("type", "message")
    if t == "message":
        role = it.get("role") or "user"
        if role == "user":
            w.turn += 1
        w.content(it.get("content"), p + ("content",), {"developer": "system"}.get(role, role))
    elif t == "function_call_output":
        w.content(it.get("output"), p + ("output",), "tool")
    elif t == "function_call":
        w.add(p + ("arguments",), it.get("arguments"), "assistant", json_text=True)


class OpenAIResponsesWS(WebSocketJSON, OpenAIResponses):
    name = "openai_responses_ws"
    service = "OpenAI Responses API over WebSocket (Codex CLI, chatgpt.com/backend-api/codex)"
    paths = (re.compile(r"/responses/?$"),)
    websocket = True

    def read(self, data, path):
        if not isinstance(data, dict) or data.get("type") not in ("response.create", "response.append"):
            return None
        chat = super().read(data, path)
        if chat is None:
            return None
        chat.stream = True  # every answer on the socket is a stream of events
        if data["type"] == "response.append":
            chat.history = False
        return chat


DIALECTS = [OpenAIRealtime(), OpenAIResponsesWS()]

"""OpenAI Chat Completions (`…/chat/completions`, and every API that imitates it: Azure OpenAI, Mistral,
Groq, Together, DeepSeek's API, vLLM, LM Studio, llama.cpp's server, LiteLLM) and the Responses API
(`…/responses`; `…/responses/{id}` reads a stored response and is not a chat request).

Together's chat streams carry each piece twice, as `choices[i].delta.content` and as `choices[i].text`: the
copy is written with the de-masked piece (`_Mirror`), and a `text` that is no copy is a channel of its own."""

from __future__ import annotations

import re

from ..dialect import Dialect
from ..events import DeltaRef
from ..requests import ChatRequest, Walker


class OpenAIChat(Dialect):
    name = "openai_chat"
    service = "OpenAI Chat Completions and compatible APIs (Mistral, Groq, Azure, vLLM, LM Studio …)"
    paths = (re.compile(r"/chat/completions/?$"),)

    def read(self, data, path):
        if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
            return None
        w = Walker()
        w.messages(data["messages"], self.name)
        req = ChatRequest(kind=self.name, data=data, stream=data.get("stream") is True)
        w.metadata(req, data)
        req.slots, req.turns = w.slots, w.turn
        return req

    def deltas(self, name, obj):
        out: list[DeltaRef] = []
        if not isinstance(obj, dict):
            return out
        for ch in obj.get("choices") or []:
            d = ch.get("delta") if isinstance(ch, dict) else None
            if not isinstance(d, dict):
                continue
            i = ch.get("index", 0)
            copy = ch.get("text")  # Together (and some vLLM builds) send a copy of the text as choices[].text
            for key in ("content", "refusal"):
                if isinstance(d.get(key), str):
                    holder = _Mirror(d, ch) if key == "content" and copy == d[key] else d
                    out.append(DeltaRef(("c", i, key), holder, key))
            if isinstance(copy, str) and copy != d.get("content"):
                out.append(DeltaRef(("c", i, "text"), ch, "text"))
            for tc in d.get("tool_calls") or []:
                fn = tc.get("function") if isinstance(tc, dict) else None
                if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                    out.append(DeltaRef(("c", i, "tool", tc.get("index", 0)), fn, "arguments", True))
        return out

    def closes(self, name, obj):
        if obj == "[DONE]":
            return [()]
        if not isinstance(obj, dict):
            return None
        ended = [("c", ch.get("index", 0)) for ch in obj.get("choices") or []
                 if isinstance(ch, dict) and ch.get("finish_reason")]
        return ended or None

    def synth(self, template, channel, text, json_text=False):
        tpl = template if isinstance(template, dict) else {}
        i = channel[1]
        if channel[2] == "text":
            choice = {"index": i, "text": text, "delta": {}, "finish_reason": None}
        else:
            delta = ({"tool_calls": [{"index": channel[3], "function": {"arguments": text}}]} if channel[2] == "tool"
                     else {channel[2]: text})
            choice = {"index": i, "delta": delta, "finish_reason": None}
            if channel[2] == "content" and any(isinstance(c, dict) and "text" in c for c in tpl.get("choices") or []):
                choice["text"] = text  # the stream carries a text copy: the flushed piece has it too
        base = {k: v for k, v in tpl.items() if k in ("id", "object", "created", "model", "system_fingerprint")}
        return None, {**base, "choices": [choice]}


class _Mirror(dict):
    """The holder of a chat delta's `content` when the choice also carries it as `text` (Together's streams):
    the de-masked piece is written to both, so the copy never keeps a surrogate or half of one."""

    def __init__(self, delta: dict, choice: dict):
        super().__init__()
        self.delta, self.choice = delta, choice

    def __getitem__(self, k):
        return self.delta[k]

    def __setitem__(self, k, v):
        self.delta[k] = v
        self.choice["text"] = v


class OpenAIResponses(Dialect):
    name = "openai_responses"
    service = "OpenAI Responses API"
    paths = (re.compile(r"/responses/?$"),)

    def read(self, data, path):
        if not isinstance(data, dict):
            return None
        inp, instr = data.get("input"), data.get("instructions")
        if not isinstance(inp, str | list) and not isinstance(instr, str):
            return None
        w = Walker()
        w.add(("instructions",), instr, "system")
        if isinstance(inp, str | list):
            w.responses_input(inp)
        req = ChatRequest(kind=self.name, data=data, stream=data.get("stream") is True)
        prev, conv = data.get("previous_response_id"), data.get("conversation")
        req.previous = prev if isinstance(prev, str) else None
        if isinstance(conv, dict):
            conv = conv.get("id")
        req.conversation = conv if isinstance(conv, str) else None
        req.history = req.previous is None and req.conversation is None
        w.metadata(req, data)
        req.slots, req.turns = w.slots, w.turn
        return req

    def deltas(self, name, obj):
        if not isinstance(obj, dict):
            return []
        t = obj.get("type") or name or ""
        if t.endswith(".delta") and isinstance(obj.get("delta"), str) and "reasoning" not in t and "audio." not in t:
            return [DeltaRef(channel(t[:-6], obj), obj, "delta", "arguments" in t)]
        return []

    def closes(self, name, obj):
        if obj == "[DONE]":
            return [()]
        if not isinstance(obj, dict):
            return None
        t = obj.get("type") or name or ""
        if t.endswith(".done"):
            return [channel(t[:-5], obj)]
        return [()] if t in ("response.completed", "response.failed", "response.incomplete", "response.done",
                             "error") else None

    def synth(self, template, ch, text, json_text=False):
        tpl = template if isinstance(template, dict) else {}
        _, base, item_id, out_i, content_i = ch
        ev = {"type": base + ".delta", "item_id": item_id, "output_index": out_i, "delta": text}
        if content_i is not None:
            ev["content_index"] = content_i
        if "sequence_number" in tpl:
            ev["sequence_number"] = tpl["sequence_number"]
        if "event_id" in tpl:  # Realtime events carry one
            ev["event_id"] = tpl["event_id"]
        if "response_id" in tpl:
            ev["response_id"] = tpl["response_id"]
        return base + ".delta", ev

    def aliases(self, obj):
        if not isinstance(obj, dict):
            return []
        r = obj.get("response") if isinstance(obj.get("response"), dict) else obj
        rid = r.get("id")
        return [rid] if isinstance(rid, str) and rid.startswith("resp") else []


def channel(base: str, obj: dict) -> tuple:
    """The text channel of a Responses (and Realtime) streaming event."""
    return ("r", base, obj.get("item_id"), obj.get("output_index"), obj.get("content_index"))


DIALECTS = [OpenAIChat(), OpenAIResponses()]

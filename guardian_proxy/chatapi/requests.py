"""Chat-API request shapes: which texts of a request body the user, the system prompt or a tool wrote.

See the package docstring for the APIs recognised and the stated rules.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field

from ..bodies import json_path

KINDS = ("openai_chat", "openai_responses", "anthropic", "ollama_chat", "ollama_generate")
_PATHS = [
    (re.compile(r"/chat/completions/?$"), "openai_chat"),
    (re.compile(r"/responses/?$"), "openai_responses"),
    (re.compile(r"/api/chat/?$"), "ollama_chat"),
    (re.compile(r"/api/generate/?$"), "ollama_generate"),
    (re.compile(r"/messages/?$"), "anthropic"),
]
_TEXT_PARTS = {"text", "input_text", "output_text"}
_SKIP_PARTS = {"thinking", "redacted_thinking", "reasoning", "image", "image_url", "input_image", "input_audio",
               "input_file", "file", "audio", "item_reference"}
#: keys never analysed or de-masked: identifiers, signatures and provider-signed reasoning
SKIP_KEYS = frozenset({"id", "type", "model", "role", "object", "signature", "encrypted_content", "thinking",
                       "tool_call_id", "tool_use_id", "call_id", "item_id", "name", "finish_reason", "stop_reason",
                       "created_at", "status", "images"})


@dataclass
class Slot:
    parts: tuple  # JSON path inside the body
    text: str
    role: str  # system | user | assistant | tool
    turn: int  # user messages up to and including this one (0 = before the first)
    json_text: bool = False  # the text is itself JSON (tool arguments): replacements are JSON-escaped

    @property
    def path(self) -> str:
        return "json:" + json_path(self.parts)


@dataclass
class ChatRequest:
    kind: str
    data: dict
    slots: list[Slot] = field(default_factory=list)
    stream: bool = False
    turns: int = 0  # user messages in the request
    history: bool = True  # the request carries the conversation so far (False: server-side state)
    conversation: str | None = None  # explicit conversation / thread id
    previous: str | None = None  # previous_response_id, or a hash of Ollama's `context`

    def prefix(self) -> str:
        """System texts and the first user message: stable across the turns of one conversation."""
        out = [s.text for s in self.slots if s.role == "system"]
        firsts = [s.text for s in self.slots if s.role == "user" and s.turn == 1]
        return "\x1e".join(out + firsts[:4])


def context_hash(context: list) -> str:
    return hashlib.sha256(json.dumps(context, separators=(",", ":")).encode()).hexdigest()


def set_text(data, parts: tuple, new: str) -> None:
    node = data
    for p in parts[:-1]:
        node = node[p]
    node[parts[-1]] = new


# --------------------------------------------------------------------------- requests


class _Walker:
    def __init__(self):
        self.slots: list[Slot] = []
        self.turn = 0

    def add(self, parts: tuple, value, role: str, json_text: bool = False) -> None:
        if isinstance(value, str) and value.strip():
            self.slots.append(Slot(parts, value, role, self.turn, json_text))

    def strings(self, value, parts: tuple, role: str, depth: int = 0) -> None:
        """Every string leaf of a parsed structure (tool inputs/arguments given as objects)."""
        if depth > 32:
            return
        if isinstance(value, dict):
            for k, v in value.items():
                self.strings(v, parts + (k,), role, depth + 1)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                self.strings(v, parts + (i,), role, depth + 1)
        else:
            self.add(parts, value, role)

    def content(self, value, parts: tuple, role: str) -> None:
        if isinstance(value, str):
            self.add(parts, value, role)
            return
        if not isinstance(value, list):
            return
        for i, part in enumerate(value):
            p = parts + (i,)
            if isinstance(part, str):
                self.add(p, part, role)
                continue
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind in _SKIP_PARTS:
                continue
            if kind == "tool_result":
                self.content(part.get("content"), p + ("content",), "tool")
            elif kind == "tool_use":
                self.strings(part.get("input"), p + ("input",), role)
            elif kind == "document" and isinstance(part.get("source"), dict) and part["source"].get("type") == "text":
                self.add(p + ("source", "data"), part["source"].get("data"), role)
            elif kind in _TEXT_PARTS or isinstance(part.get("text"), str):
                self.add(p + ("text",), part.get("text"), role)

    def is_user_turn(self, msg: dict, kind: str) -> bool:
        if msg.get("role") != "user":
            return False
        c = msg.get("content")
        if kind == "anthropic" and isinstance(c, list) and c:  # a message of tool results is not a turn
            return not all(isinstance(b, dict) and b.get("type") == "tool_result" for b in c)
        return True

    def messages(self, msgs: list, kind: str) -> None:
        for i, m in enumerate(msgs):
            if not isinstance(m, dict):
                continue
            p = ("messages", i)
            if self.is_user_turn(m, kind):
                self.turn += 1
            role = {"developer": "system", "function": "tool"}.get(m.get("role"), m.get("role") or "user")
            self.content(m.get("content"), p + ("content",), role)
            for j, call in enumerate(m.get("tool_calls") or []):
                fn = call.get("function") if isinstance(call, dict) else None
                if not isinstance(fn, dict):
                    continue
                args = fn.get("arguments")
                if isinstance(args, str):
                    self.add(p + ("tool_calls", j, "function", "arguments"), args, role, json_text=True)
                else:
                    self.strings(args, p + ("tool_calls", j, "function", "arguments"), role)
            fc = m.get("function_call")
            if isinstance(fc, dict) and isinstance(fc.get("arguments"), str):
                self.add(p + ("function_call", "arguments"), fc["arguments"], role, json_text=True)

    def responses_input(self, items) -> None:
        if isinstance(items, str):
            self.turn += 1
            self.add(("input",), items, "user")
            return
        for i, it in enumerate(items):
            p = ("input", i)
            if isinstance(it, str):
                continue
            if not isinstance(it, dict):
                continue
            t = it.get("type", "message")
            if t == "message" or ("role" in it and "content" in it):
                if it.get("role") == "user":
                    self.turn += 1
                role = {"developer": "system"}.get(it.get("role"), it.get("role") or "user")
                self.content(it.get("content"), p + ("content",), role)
            elif t in ("function_call", "custom_tool_call"):
                key = "arguments" if t == "function_call" else "input"
                self.add(p + (key,), it.get(key), "assistant", json_text=t == "function_call")
            elif t.endswith("_call_output"):
                self.content(it.get("output"), p + ("output",), "tool")


def kind_of(path: str) -> str | None:
    """The chat API a request path belongs to, or None."""
    path = path.split("?", 1)[0]
    return next((k for pat, k in _PATHS if pat.search(path)), None)


def recognise(path: str, data) -> ChatRequest | None:
    """The chat request in a parsed JSON body sent to `path`, or None when path or shape do not fit."""
    if not isinstance(data, dict):
        return None
    kind = kind_of(path)
    if kind is None:
        return None
    w = _Walker()
    req = ChatRequest(kind=kind, data=data)
    if kind in ("openai_chat", "anthropic", "ollama_chat"):
        if not isinstance(data.get("messages"), list):
            return None
        if kind == "anthropic":
            system = data.get("system")
            if isinstance(system, str):
                w.add(("system",), system, "system")
            else:
                w.content(system, ("system",), "system")
        w.messages(data["messages"], kind)
        req.stream = data.get("stream") is True if kind != "ollama_chat" else data.get("stream") is not False
    elif kind == "openai_responses":
        inp, instr = data.get("input"), data.get("instructions")
        if not isinstance(inp, str | list) and not isinstance(instr, str):
            return None
        w.add(("instructions",), instr, "system")
        if isinstance(inp, str | list):
            w.responses_input(inp)
        req.stream = data.get("stream") is True
        prev, conv = data.get("previous_response_id"), data.get("conversation")
        req.previous = prev if isinstance(prev, str) else None
        if isinstance(conv, dict):
            conv = conv.get("id")
        req.conversation = conv if isinstance(conv, str) else None
        req.history = req.previous is None and req.conversation is None
    else:  # ollama_generate
        if not isinstance(data.get("prompt"), str):
            return None
        w.add(("system",), data.get("system"), "system")
        w.turn = 1
        w.add(("prompt",), data["prompt"], "user")
        req.stream = data.get("stream") is not False
        ctx = data.get("context")
        req.previous = context_hash(ctx) if isinstance(ctx, list) and ctx else None
        req.history = False
    md = data.get("metadata")
    if isinstance(md, dict) and req.conversation is None:
        cid = md.get("conversation_id") or md.get("thread_id") or md.get("session_id")
        req.conversation = cid if isinstance(cid, str) else None
    req.slots, req.turns = w.slots, w.turn
    return req



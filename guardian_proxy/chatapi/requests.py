"""What a chat request is to the session stage (`ChatRequest`, its `Slot`s) and the walker the
message-list dialects share. Each wire format's own reading lives in `chatapi.dialects`."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from ..bodies import json_path

_TEXT_PARTS = {"text", "input_text", "output_text"}
_SKIP_PARTS = {"thinking", "redacted_thinking", "reasoning", "image", "image_url", "input_image", "input_audio",
               "input_file", "file", "audio", "item_reference"}
#: keys never analysed or de-masked: identifiers, signatures and provider-signed reasoning
SKIP_KEYS = frozenset({"id", "type", "model", "role", "object", "signature", "encrypted_content", "thinking",
                       "tool_call_id", "tool_use_id", "call_id", "item_id", "name", "finish_reason", "stop_reason",
                       "created_at", "status", "images", "reasoningContent", "thoughtSignature"})


@dataclass
class Slot:
    parts: tuple  # JSON path inside the body
    text: str
    role: str  # system | user | assistant | tool
    turn: int  # user messages up to and including this one (0 = before the first)
    json_text: bool = False  # the text is itself JSON (tool arguments): replacements are JSON-escaped
    file: int | None = None  # the text of `ChatRequest.files[file]` (an attachment), not a string of the body

    @property
    def path(self) -> str:
        return f"file:{self.file}" if self.file is not None else "json:" + json_path(self.parts)


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
    files: list = field(default_factory=list)  # session.files.Attachment: files the request carries
    unread_files: int = 0  # embedded files of a kind the proxy reads that could not be read

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




class Walker:
    """Collects the slots of a message-list body (the shapes OpenAI, Anthropic, Ollama and their imitators share)."""

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

    def metadata(self, req: ChatRequest, data: dict) -> None:
        md = data.get("metadata")
        if isinstance(md, dict) and req.conversation is None:
            cid = md.get("conversation_id") or md.get("thread_id") or md.get("session_id")
            req.conversation = cid if isinstance(cid, str) else None

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

"""Le Chat, Mistral's web app (chat.mistral.ai). No public documentation; taken from open-source clients
of the web app and the captures they publish (a 2026-01 capture of newChat + /api/chat with reasoning, a
2025-11 fixture of the patch stream, the 2024–2025 `messageInput` clients).

Requests:
- the first message of a new chat goes to the tRPC batch `POST /api/trpc/message.newChat?batch=1`:
  `{"0": {"json": {"content": [{"type": "text", "text": "…"}] | "…", "chatId": null, "files", "features", …},
  "meta": …}}` (the procedure list in the path says which batch entry is newChat). Its reply is tRPC
  JSON lines (superjson `{"json": …}`) echoing the user message and the new `chatId`: de-masked line by line,
  and the `chatId` is announced as an alias;
- `POST /api/chat` `{"chatId", "mode": "start"|"append"|"retry", "messageInput": "…" | [{"type": "text",
  "text"}], "messageId", "messageFiles", "clientPromptData", "shouldUseMessagePatch", …}` asks for the answer
  (mode "start" right after newChat carries no text: a chat request without slots, so its reply is still
  de-masked). An older client shape with `messages: [{role, content}]` is read too.
  Session key: `previous` = `chatId` (resolves to the newChat turn's session through the alias).

Reply of /api/chat (served as text/event-stream, but not SSE): one line per event, `<n>:<json>`. With
`shouldUseMessagePatch`, `15:{"json": {"type": "message", "messageId", "messageVersion", "patches": [{"op",
"path", "value"}]}}`: `replace "/"` (the whole message), `replace /contentChunks` (the first chunks, their
first text), `add /contentChunks/N` (a new chunk), `append /contentChunks/N/text` (text deltas: channel =
message + chunk), `replace /contentChunks/N/_context` (a chunk's context: `{"type": "reasoning"}` marks
reasoning, passed byte for byte), `replace /generationStatus` (closes the message); other lines (`16:`
disclaimers, `8:null` at the end) — every prefix but 15/16/0 closes all channels. The 2024 stream was
Vercel-AI-SDK-like `0:"text"` lines (text deltas) and `1:…` status lines. The held tail is flushed as an
`append` to the channel's chunk (or a `0:` line).

Uncertain: whether lines may ever be SSE `data:` lines (not seen); the meaning of prefixes other than
0/15/16/8; other tRPC procedures that carry user text (edits) are not read.
"""

from __future__ import annotations

import json
import re

from ..dialect import Dialect
from ..events import DeltaRef
from ..requests import ChatRequest, Walker
from ..sse import MAX_EVENT_BYTES, Event
from .annotated import Ann, ClosingVerbatim, Verbatim, ann_closes, ann_deltas, rebind

_LINE = re.compile(r"^([0-9a-z]+):(.*)$", re.S)
_CHUNK_TEXT = re.compile(r"^/contentChunks/(\d+)/text$")
_CHUNK = re.compile(r"^/contentChunks/(\d+)$")
_CHUNK_CTX = re.compile(r"^/contentChunks/(\d+)/_context$")
_NEWCHAT = re.compile(r"^/api/trpc/([\w.,]*\bmessage\.newChat\b[\w.,]*)/?$")


class Wrapped(dict):
    """A line whose payload is a bare JSON string (`0:"text"`): held as {"text": …} so it can be rewritten."""


def _dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class LineFramer:
    """Newline-delimited events: `<n>:<json>` lines (prefixed) or bare JSON lines (tRPC JSONL). A JSON
    object or array left without its newline at the end is still an event (a whole JSON reply)."""

    def __init__(self, annotate, prefixed: bool):
        self.buf = bytearray()
        self.overflow = False
        self.annotate = annotate
        self.prefixed = prefixed

    def _event(self, raw: bytes) -> Event:
        ev = Event(raw=raw)
        try:
            text = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError:
            return ev
        payload = text
        if self.prefixed:
            m = _LINE.match(text)
            if not m:
                return ev
            ev.name, payload = m.group(1), m.group(2)
        ev.data = payload
        try:
            obj = json.loads(payload) if payload.strip() else None
        except ValueError:
            return ev
        if obj is None:
            ev.obj = Verbatim(None) if self.prefixed else None  # `8:null` still closes the channels
        elif isinstance(obj, str):
            ev.obj = Wrapped({"text": obj})
        else:
            ev.obj = obj
        if isinstance(ev.obj, dict) or isinstance(ev.obj, Verbatim):
            ev.obj = self.annotate(ev.name, ev.obj)
        return ev

    def feed(self, data: bytes) -> list[Event]:
        self.buf += data
        out = []
        while True:
            i = self.buf.find(b"\n")
            if i < 0:
                break
            raw = bytes(self.buf[:i + 1])
            del self.buf[:i + 1]
            out.append(self._event(raw))
        tail = bytes(self.buf).strip()
        if tail[:1] in (b"{", b"[") and not self.prefixed:
            try:
                json.loads(tail)
            except ValueError:
                pass
            else:
                out.append(self._event(bytes(self.buf)))
                self.buf.clear()
        if len(self.buf) > MAX_EVENT_BYTES:
            self.overflow = True
        return out

    def rest(self) -> bytes:
        out = bytes(self.buf)
        self.buf.clear()
        return out

    def encode(self, ev, name, obj) -> bytes:
        if isinstance(obj, Verbatim):
            obj = obj.data
        payload = _dumps(obj["text"] if isinstance(obj, Wrapped) else obj)
        end = "\n"
        if ev is not None:
            end = "\r\n" if ev.raw.endswith(b"\r\n") else ("\n" if ev.raw.endswith(b"\n") else "")
        return (f"{name}:{payload}{end}" if self.prefixed and name is not None else payload + end).encode("utf-8")


def _norm_path(path) -> str | None:
    if isinstance(path, list):
        return "/" + "/".join(str(p) for p in path) if path else "/"
    return path if isinstance(path, str) else None


class _LeChatState:
    def __init__(self):
        self.chunks: dict[str, list[bool]] = {}  # message id → per chunk: reasoning?
        self.open: set[tuple] = set()

    def _reasoning(self, chunk) -> bool:
        ctx = chunk.get("_context") if isinstance(chunk, dict) else None
        return isinstance(ctx, dict) and ctx.get("type") == "reasoning"

    def _is_text(self, chunk) -> bool:
        return isinstance(chunk, dict) and chunk.get("type", "text") == "text" and isinstance(chunk.get("text"), str)

    def __call__(self, name, obj):
        if isinstance(obj, Wrapped):  # `0:"text"` lines: the dialect reads them without state
            return obj
        if isinstance(obj, Verbatim) or name not in ("15", "16") or not isinstance(obj, dict):
            self.open = set()
            if isinstance(obj, Verbatim):
                return ClosingVerbatim(obj.data, [()])
            return Ann(obj, closes=[()]) if isinstance(obj, dict) else obj
        j = obj.get("json")
        if name == "16" or not isinstance(j, dict) or j.get("type") != "message" or \
                not isinstance(j.get("patches"), list):
            return Ann(obj)
        msg, ver = j.get("messageId"), j.get("messageVersion", 0)
        chunks = self.chunks.setdefault(msg, [])
        mine = {k for k in self.open if k[1] == msg}
        closes, deltas, reasoning = set(), [], False

        def touch(i: int) -> None:
            closes.update(k for k in mine if k[3] != i)

        for patch in j["patches"]:
            if not isinstance(patch, dict):
                continue
            op, path, value = patch.get("op"), _norm_path(patch.get("path")), patch.get("value")
            if path is None:
                continue
            if op == "replace" and path in ("/", "", "/contentChunks"):
                closes.update(mine)
                if path == "/contentChunks":
                    chunks[:] = [self._reasoning(c) for c in (value if isinstance(value, list) else [])]
                    for i, c in enumerate(value if isinstance(value, list) else []):
                        if self._is_text(c):
                            if chunks[i]:
                                reasoning = True
                            else:
                                deltas.append((("lc", msg, ver, i), c, "text"))
                else:
                    vc = value.get("contentChunks") if isinstance(value, dict) else None
                    chunks[:] = [self._reasoning(c) for c in vc] if isinstance(vc, list) else []
            elif op == "add" and (m := _CHUNK.match(path)):
                i = int(m.group(1))
                touch(i)
                while len(chunks) < i:
                    chunks.append(False)
                chunks.insert(i, self._reasoning(value))
                if self._is_text(value):
                    if chunks[i]:
                        reasoning = True
                    else:
                        deltas.append((("lc", msg, ver, i), value, "text"))
            elif (m := _CHUNK_TEXT.match(path)) and isinstance(value, str):
                i = int(m.group(1))
                touch(i)
                if i < len(chunks) and chunks[i]:
                    reasoning = True
                elif op == "append":
                    deltas.append((("lc", msg, ver, i), patch, "value"))
                else:  # a whole new text for the chunk: a new channel
                    closes.update(k for k in mine if k[3] == i)
                    deltas.append((("lc", msg, ver, i), patch, "value"))
            elif (m := _CHUNK_CTX.match(path)) and op in ("replace", "add"):
                i = int(m.group(1))
                while len(chunks) <= i:
                    chunks.append(False)
                chunks[i] = self._reasoning({"_context": value})
                if chunks[i]:
                    reasoning = True
            elif path == "/generationStatus":
                closes.update(mine)
        self.open -= closes
        self.open.update(ch for ch, _, _ in deltas)
        closes_l = sorted(closes, key=str) or None
        if not deltas and reasoning:
            return ClosingVerbatim(obj, closes_l)
        return rebind(Ann(obj, deltas, closes_l), obj)


class _NewChatState:
    def __init__(self):
        self.aliases: set[str] = set()

    def __call__(self, name, obj):
        found: list[str] = []
        _find_chat_ids(obj, found, 0)
        fresh = [a for a in dict.fromkeys(found) if a not in self.aliases]
        self.aliases.update(fresh)
        return Ann(obj, alias=fresh) if isinstance(obj, dict) else obj


def _find_chat_ids(obj, out: list, depth: int) -> None:
    if depth > 12:
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "chatId" and isinstance(v, str) and v:
                out.append(v)
            else:
                _find_chat_ids(v, out, depth + 1)
    elif isinstance(obj, list):
        for v in obj:
            _find_chat_ids(v, out, depth + 1)


def _content_slots(w: Walker, content, parts: tuple) -> None:
    if isinstance(content, str):
        w.add(parts, content, "user")
    elif isinstance(content, list):
        for i, c in enumerate(content):
            if isinstance(c, dict) and c.get("type", "text") == "text":
                w.add(parts + (i, "text"), c.get("text"), "user")


class LeChatWeb(Dialect):
    name = "lechat_web"
    service = "Le Chat web app (chat.mistral.ai)"
    hosts = ("chat.mistral.ai",)
    paths = (re.compile(r"^/api/chat/?$"),)
    priority = 10

    def read(self, data, path):
        if not isinstance(data, dict) or not isinstance(data.get("chatId"), str):
            return None
        if not isinstance(data.get("mode"), str) and not isinstance(data.get("messages"), list):
            return None
        w = Walker()
        if isinstance(data.get("messages"), list):
            w.messages(data["messages"], self.name)
        else:
            w.turn = 1 if data.get("messageInput") else 0
            _content_slots(w, data.get("messageInput"), ("messageInput",))
        req = ChatRequest(kind=self.name, data=data, stream=True, history=False)
        req.previous = data["chatId"] or None
        req.slots, req.turns = w.slots, w.turn
        return req

    def framer(self, content_type):
        ct = (content_type or "").lower()
        if "event-stream" in ct or "text/plain" in ct or "stream" in ct:
            return LineFramer(_LeChatState(), prefixed=True)
        return None

    def deltas(self, name, obj):
        if isinstance(obj, Wrapped):
            return [DeltaRef(("lc", "0"), obj, "text")] if name == "0" else []
        found = ann_deltas(obj)
        return found if found is not None else []

    def closes(self, name, obj):
        if isinstance(obj, Wrapped):
            return None if name == "0" else [()]
        if isinstance(obj, list) and name not in ("15", "16"):
            return [()]
        return ann_closes(obj)

    def synth(self, template, channel, text, json_text=False):
        if channel[1] == "0":
            return "0", Wrapped({"text": text})
        _, msg, ver, i = channel
        return "15", {"json": {"type": "message", "messageId": msg, "messageVersion": ver, "patches": [
            {"op": "append", "path": f"/contentChunks/{i}/text", "value": text}]}}


class LeChatNewChat(Dialect):
    name = "lechat_web_newchat"
    service = "Le Chat web app (chat.mistral.ai), new chat"
    hosts = ("chat.mistral.ai",)
    paths = (_NEWCHAT,)
    priority = 10

    def read(self, data, path):
        m = _NEWCHAT.search(path.split("?", 1)[0])
        if not m or not isinstance(data, dict):
            return None
        procs = m.group(1).split(",")
        w = Walker()
        w.turn = 1
        found = False
        for i, proc in enumerate(procs):
            if proc != "message.newChat":
                continue
            entry, parts = (data.get(str(i)), (str(i), "json")) if str(i) in data else (data, ("json",))
            body = entry.get("json") if isinstance(entry, dict) else None
            if not isinstance(body, dict) or "content" not in body:
                continue
            found = True
            _content_slots(w, body["content"], parts + ("content",))
        if not found:
            return None
        req = ChatRequest(kind=self.name, data=data, stream=False, history=False)
        req.slots, req.turns = w.slots, 1
        return req

    def framer(self, content_type):
        ct = (content_type or "").lower()
        if "json" in ct or "event-stream" in ct:
            return LineFramer(_NewChatState(), prefixed=False)
        return None

    def deltas(self, name, obj):
        return []

    def closes(self, name, obj):
        return None

    def synth(self, template, channel, text, json_text=False):
        raise NotImplementedError  # no deltas: nothing is ever held back

    def aliases(self, obj):
        if isinstance(obj, Ann):
            return list(obj.extra.get("alias") or [])
        found: list[str] = []
        _find_chat_ids(obj, found, 0)
        return list(dict.fromkeys(found))


DIALECTS = [LeChatWeb(), LeChatNewChat()]

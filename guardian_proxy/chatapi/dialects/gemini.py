"""Google Gemini: the Gemini API (`generativelanguage.googleapis.com/{v1,v1beta,v1alpha}/models/{m}:generateContent`
and `:streamGenerateContent`), Vertex AI's Gemini (`{region}-aiplatform.googleapis.com/{v1,v1beta1}/projects/{p}/
locations/{l}/publishers/google/models/{m}:…`, express mode without `projects/…/locations/…`, tuned
`…/endpoints/{id}:…`), and Vertex AI's Anthropic partner models (`…/publishers/anthropic/models/{m}:rawPredict`
and `:streamRawPredict`, an Anthropic Messages body: `anthropic.py`'s functions).

Shapes, from the Gemini API reference (GenerateContentRequest / GenerateContentResponse) and the google-genai
SDK (`models.py`, `_api_client.py`, `types.py`); REST takes both proto JSON spellings, so `systemInstruction` /
`system_instruction`, `functionCall` / `function_call` … are both read:

- request: `contents[]` {role user|model (absent = user; v1beta's old `function` = tool), parts[]},
  `systemInstruction` {parts[]}. Parts: `text` (a slot unless `thought: true`), `functionCall` {name, args
  object}: every string leaf of args; `functionResponse` {name, response object}: every string leaf;
  `executableCode.code`, `codeExecutionResult.output`; `inlineData` / `fileData` are files, `thoughtSignature`
  is never a slot. A user turn is a user content with a text part (function responses alone are not turns).
  `cachedContent` (a server-side cache of the conversation's start) becomes the conversation id.
- replies: a JSON GenerateContentResponse (de-masked whole, generically), or — `:streamGenerateContent?alt=sse`,
  what the SDK uses — SSE whose every event is a GenerateContentResponse chunk. Without `alt=sse` the stream
  is one JSON array (application/json): it is de-masked as a whole body, not chunk by chunk.

Stream channels: one text channel per candidate (`("g", candidate index)`), not per part index: a chunk's
`parts` restart at 0 in every chunk, so the part index does not name a text across chunks (a chunk with a
thought part first would move the answer's text to index 1 for one chunk). A candidate's channel closes at the
chunk that carries its `finishReason`; `synth` makes a chunk with one text part for that candidate.

Work-around for the interface (inside this file): the session stage closes channels *before* an event's own
deltas are fed, and de-masks an event's other strings only when it has no text delta. Real Gemini streams
put the last text piece in the chunk with `finishReason`, and may put text and a `functionCall` in one chunk.
`GeminiSSEFramer` therefore splits such a chunk into consecutive chunks — the text parts, then the other
parts (function calls, code), with the finish fields (finishReason, safetyRatings, citationMetadata,
groundingMetadata …) on the last one, or on an extra chunk with one empty text part — so a held-back
surrogate tail is flushed before the finish and function-call arguments are de-masked whole. A client that
concatenates chunks (as the SDK does) reads the same content. Chunks that need no split pass byte for byte.
Thought parts are never de-masked (they are never masked either): an event of thought parts only answers one
empty no-op delta so the generic de-masking leaves it alone.
"""

from __future__ import annotations

import itertools
import json
import re

from ..dialect import Dialect
from ..events import DeltaRef
from ..requests import SKIP_KEYS, ChatRequest, Walker
from ..sse import Event, SSEFramer, parse_event
from . import anthropic as _anthropic

_METHOD = r":(?:stream)?[gG]enerate[cC]ontent/?$"
_GEMINI_PATH = re.compile(r"/v1(?:beta|alpha)?/(?:models|tunedModels)/[^/:]+" + _METHOD)
_VERTEX_PATH = re.compile(r"/v1(?:beta1)?/(?:projects/[^/]+/locations/[^/]+/)?"
                          r"(?:publishers/google/models/[^/:]+|endpoints/[^/:]+)" + _METHOD)
_VERTEX_ANTHROPIC_PATH = re.compile(r"/publishers/anthropic/models/[^/:]+:(?:stream)?[rR]aw[pP]redict/?$")

_ROLES = {"user": "user", "model": "assistant", "function": "tool", "tool": "tool", "system": "system"}
#: candidate fields that belong with the end of a candidate (everything but content and index)
_KEEP_ON_EVERY_CHUNK = ("modelVersion", "responseId", "createTime")


def _get(d: dict, camel: str, snake: str):
    """(key used, value) for a proto JSON field spelt either way."""
    if camel in d:
        return camel, d[camel]
    return snake, d.get(snake)


def _text_part(p) -> bool:
    return isinstance(p, dict) and isinstance(p.get("text"), str) and p.get("thought") is not True


def read_gemini(data, kind: str, path: str) -> ChatRequest | None:
    """A GenerateContentRequest (Gemini API and Vertex AI)."""
    if not isinstance(data, dict) or not isinstance(data.get("contents"), list):
        return None
    w = Walker()
    skey, system = _get(data, "systemInstruction", "system_instruction")
    if isinstance(system, dict) and isinstance(system.get("parts"), list):
        _parts(w, system["parts"], (skey, "parts"), "system", "system")
    elif isinstance(system, str):  # lenient: a bare string
        w.add((skey,), system, "system")
    for i, c in enumerate(data["contents"]):
        if not isinstance(c, dict) or not isinstance(c.get("parts"), list):
            continue
        role = c.get("role") or "user"
        if role == "user" and any(_text_part(p) for p in c["parts"]):
            w.turn += 1
        _parts(w, c["parts"], ("contents", i, "parts"), _ROLES.get(role, "user"), role)
    req = ChatRequest(kind=kind, data=data, stream=":stream" in path.split("?", 1)[0])
    _, cached = _get(data, "cachedContent", "cached_content")
    req.conversation = cached if isinstance(cached, str) and cached else None
    req.slots, req.turns = w.slots, w.turn
    return req


def _parts(w: Walker, parts: list, base: tuple, role: str, wire_role: str) -> None:
    for j, p in enumerate(parts):
        if not isinstance(p, dict) or p.get("thought") is True:
            continue  # thoughts (and their signatures) are the provider's, never analysed
        at = base + (j,)
        if isinstance(p.get("text"), str):
            w.add(at + ("text",), p["text"], role)
        k, fc = _get(p, "functionCall", "function_call")
        if isinstance(fc, dict):
            w.strings(fc.get("args"), at + (k, "args"), "assistant" if wire_role == "model" else role)
        k, fr = _get(p, "functionResponse", "function_response")
        if isinstance(fr, dict):
            w.strings(fr.get("response"), at + (k, "response"), "tool")
        k, code = _get(p, "executableCode", "executable_code")
        if isinstance(code, dict):
            w.add(at + (k, "code"), code.get("code"), "assistant")
        k, res = _get(p, "codeExecutionResult", "code_execution_result")
        if isinstance(res, dict):
            w.add(at + (k, "output"), res.get("output"), "tool")


# ---------------------------------------------------------------------- stream events


def _candidates(obj) -> list[tuple[int, dict]]:
    if not isinstance(obj, dict) or not isinstance(obj.get("candidates"), list):
        return []
    return [(c.get("index", pos) if isinstance(c.get("index", pos), int) else pos, c)
            for pos, c in enumerate(obj["candidates"]) if isinstance(c, dict)]


def _cparts(c: dict) -> list:
    content = c.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    return parts if isinstance(parts, list) else []


def _class(p) -> str:
    """t: answer text, h: thought, o: anything else (function call, code, file), n: empty (goes with any)."""
    if not isinstance(p, dict):
        return "n"
    if p.get("thought") is True:
        return "h"
    if isinstance(p.get("text"), str):
        return "t" if p["text"] else "n"
    return "o" if any(k not in ("thoughtSignature", "thought_signature") for k in p) else "n"


def _finish(c: dict) -> dict:
    return {k: v for k, v in c.items() if k not in ("content", "index")}


def _needs_split(c: dict) -> bool:
    """Text and other parts (a function call, code) in one finishing chunk. A finishing chunk of text alone
    passes as it is: the stage releases held text inside that chunk's own delta (it continues and closes
    the candidate's channel), so a chunk that needs no change leaves byte for byte."""
    classes = {_class(p) for p in _cparts(c)}
    return bool(_finish(c)) and "t" in classes and "o" in classes


def split_chunk(obj: dict) -> list[dict] | None:
    """The chunks `obj` is split into (see the module docstring), or None when it stays as it is."""
    cands = _candidates(obj)
    if not any(_needs_split(c) for _, c in cands):
        return None
    every = {k: obj[k] for k in _KEEP_ON_EVERY_CHUNK if k in obj}
    rest = {k: v for k, v in obj.items() if k != "candidates" and k not in every}
    out: list[dict] = []
    for i, c in cands:
        if not _needs_split(c):
            out.append({**every, "candidates": [c]})
            continue
        content = c.get("content") if isinstance(c.get("content"), dict) else {}
        out.append({**every, "candidates": [{"content": content, "index": i}]})
        out.append({**every, "candidates": [{"content": {**content, "parts": [{"text": ""}]}, "index": i,
                                             **_finish(c)}]})
    out[-1].update(rest)
    return out


class GeminiSSEFramer(SSEFramer):
    """SSE framing that splits a chunk whose finish, text and function calls must be told apart."""

    def feed(self, data: bytes) -> list[Event]:
        out: list[Event] = []
        for ev in super().feed(data):
            pieces = split_chunk(ev.obj) if isinstance(ev.obj, dict) else None
            if not pieces:
                out.append(ev)
                continue
            for obj in pieces:
                raw = "data: " + json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n\n"
                out.append(parse_event(raw.encode("utf-8")))
        return out


_NOT_TEXT = frozenset(SKIP_KEYS | {"thoughtSignature", "thought_signature", "data", "mimeType", "mime_type",
                                   "finishReason", "modelVersion", "responseId", "createTime"})
_WHOLE = "\x00"  # ends a whole string fed to a channel: no surrogate starts with it, so nothing is held back
_serial = itertools.count()


class _Whole(dict):
    """The holder of a `DeltaRef` for a string that is complete in its event (function-call arguments,
    citations, grounding): the channel sees it with `_WHOLE` appended, so it is de-masked at once and nothing
    is held back; writing it back drops the marker. Each gets a channel of its own (fresh word-boundary
    context), closed at the next event. Why: an event with a text delta is not de-masked generically, and
    the generic de-masking leaves `name` keys alone, which tool arguments use for values."""

    def __init__(self, target, key):
        super().__init__()
        self.target, self.tkey = target, key

    def __getitem__(self, k):
        return self.target[self.tkey] + _WHOLE

    def __setitem__(self, k, v):
        self.target[self.tkey] = v[: -len(_WHOLE)] if v.endswith(_WHOLE) else v


def _leaves(value, out: list[DeltaRef], every_key: bool, depth: int = 0) -> None:
    """A whole-string delta for every string leaf (`every_key`: keys not filtered, as in tool arguments)."""
    if depth > 32:
        return
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        if isinstance(v, str):
            if v and (every_key or k not in _NOT_TEXT):
                out.append(DeltaRef(("gw", next(_serial)), _Whole(value, k), "v"))
        elif isinstance(v, dict | list):
            if isinstance(v, dict) and v.get("thought") is True or not every_key and k in _NOT_TEXT:
                continue
            _leaves(v, out, every_key or k == "args", depth + 1)


def gemini_deltas(obj) -> list[DeltaRef]:
    out: list[DeltaRef] = []
    kinds: set[str] = set()
    for i, c in _candidates(obj):
        for p in _cparts(c):
            k = _class(p)
            kinds.add(k)
            if k == "t":
                out.append(DeltaRef(("g", i), p, "text"))
    if not kinds & {"t", "h", "o"}:
        return []  # no content: the generic de-masking takes the event
    for _, c in _candidates(obj):  # every other string of the event, whole
        for p in _cparts(c):
            if _class(p) == "o":
                _leaves(p, out, False)
        _leaves({k: v for k, v in c.items() if k != "content"}, out, False)
    _leaves({k: v for k, v in obj.items() if k != "candidates"}, out, False)
    if not out:  # thought parts only: leaves the thought text alone (no generic de-masking of this event)
        out.append(DeltaRef(("gw", next(_serial)), {"text": ""}, "text"))
    return out


def gemini_closes(obj) -> list[tuple] | None:
    ended = [("g", i) for i, c in _candidates(obj) if c.get("finishReason")]
    return ended + [("gw",)]


def gemini_synth(template, channel: tuple, text: str) -> tuple[None, dict]:
    tpl = template if isinstance(template, dict) else {}
    base = {k: tpl[k] for k in _KEEP_ON_EVERY_CHUNK if k in tpl}
    return None, {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "index": channel[1]}],
                  **base}


class Gemini(Dialect):
    name = "gemini"
    service = "Google Gemini API (generateContent)"
    paths = (_GEMINI_PATH,)

    def read(self, data, path):
        return read_gemini(data, self.name, path)

    def framer(self, content_type):
        return GeminiSSEFramer() if "event-stream" in (content_type or "").lower() else None

    def deltas(self, name, obj):
        return gemini_deltas(obj)

    def closes(self, name, obj):
        return gemini_closes(obj)

    def synth(self, template, channel, text, json_text=False):
        return gemini_synth(template, channel, text)


class VertexGemini(Gemini):
    name = "vertex_gemini"
    service = "Google Vertex AI Gemini (generateContent)"
    paths = (_VERTEX_PATH,)


class VertexAnthropic(Dialect):
    name = "vertex_anthropic"
    service = "Anthropic Claude on Google Vertex AI (rawPredict)"
    paths = (_VERTEX_ANTHROPIC_PATH,)

    def read(self, data, path):
        req = _anthropic.read_messages(data, self.name)
        if req is not None and ":stream" in path.split("?", 1)[0]:
            req.stream = True
        return req

    def deltas(self, name, obj):
        return _anthropic.deltas(obj)

    def closes(self, name, obj):
        return [()] if obj == "[DONE]" else _anthropic.closes(obj)

    def synth(self, template, channel, text, json_text=False):
        return _anthropic.synth(channel, text, json_text)


DIALECTS = [Gemini(), VertexGemini(), VertexAnthropic()]

"""Perplexity's web app (www.perplexity.ai): `POST /rest/sse/perplexity_ask`.

Request (from a 2026 capture in borik216/prompt-shield's fixtures and the open-source clients
helallao/perplexity-ai and pplx-sdk): `{"query_str": "…", "params": {"frontend_uuid", "frontend_context_uuid",
"last_backend_uuid"? (a follow-up), "read_write_token"?, "dsl_query": <the same text>, "query_source":
"home"|"followup", "attachments": [urls], "mode", "model_preference", "use_schematized_api", "version", …}}`.
Slots: `query_str` and `params.dsl_query` (the same user text, rewritten alike). The thread lives on the
server (`history=False`). Session key: a follow-up's `previous` = `last_backend_uuid`, the `backend_uuid` of
the answer it follows, which every answer's stream announces as an alias (so a thread's turns chain into the
first turn's session); a first question uses its `frontend_uuid`.

Reply: SSE, `event: message` events each carrying the entry's state (`backend_uuid`, `context_uuid`,
`status`, `final_sse_message`, …) and `blocks`. Current ("schematized") answers stream as `diff_block`s
on the `markdown_block` of the blocks `ask_text` and `ask_text_0_markdown` (the same text twice): first
`{"op": "replace", "path": "", "value": {"chunks": ["first piece"], …}}`, then `{"op": "add", "path":
"/chunks/N", "value": "piece"}`. Those pieces are text deltas (channel: the block's `intended_usage`); the
last event carries every block whole (`markdown_block` with `chunks` and the cumulative `answer`) and closes
the channels; it and every event without answer pieces (web results, plans, sources) are de-masked whole.
The held tail is flushed as an `add` of the next chunk index (counted per block by the framer). The older
answer format put a JSON string in `text` (`{"answer": …, "chunks": […]}` or a list of steps): the framer
parses it so that it is de-masked whole inside, and writes it back as a string.

Uncertain / limits: in an event that carries answer pieces, the other blocks of the same event (web
results, reformulated queries) are passed unchanged (one event cannot be both streamed and de-masked whole
through the interface); a surrogate split across two chunks of the final whole `markdown_block.chunks` is
not restored there (its `answer` is); how the client merges a synthetic event (it carries the entry's ids
copied from the event it precedes).
"""

from __future__ import annotations

import json
import re

from ..dialect import Dialect
from ..requests import ChatRequest, Walker
from ..sse import SSEFramer
from .annotated import Ann, ann_closes, ann_deltas, rebind

_CHUNK = re.compile(r"^/chunks/(\d+|-)$")
_IDS = ("backend_uuid", "context_uuid", "uuid", "frontend_context_uuid", "frontend_uuid", "cursor", "status",
        "message_mode", "thread_url_slug")


class Nested(dict):
    """A JSON document that travelled as a string (`text`): de-masked as a structure, written back as a string."""


class NestedList(list):
    pass


def _nest(v):
    if isinstance(v, str) and v[:1] in ("{", "["):
        try:
            parsed = json.loads(v)
        except ValueError:
            return v
        if isinstance(parsed, dict):
            return Nested(parsed)
        if isinstance(parsed, list):
            return NestedList(parsed)
    return v


def _unnest(obj):
    if isinstance(obj, Nested | NestedList):
        return json.dumps(obj, ensure_ascii=False)
    if isinstance(obj, dict):
        return {k: _unnest(v) for k, v in obj.items()}
    return obj


class _PerplexityState:
    def __init__(self):
        self.count: dict[str, int] = {}  # chunks per text block
        self.aliases: set[str] = set()

    def __call__(self, name, obj):
        if not isinstance(obj, dict):
            return obj
        before = dict(self.count)
        deltas, closes = [], []
        for b in obj.get("blocks") or []:
            if not isinstance(b, dict) or not isinstance(b.get("intended_usage"), str):
                continue
            usage = b["intended_usage"]
            ch = ("px", usage)
            if isinstance(b.get("markdown_block"), dict):  # the block whole: closes its channel
                closes.append(ch)
                continue
            diff = b.get("diff_block")
            if not isinstance(diff, dict) or diff.get("field") != "markdown_block":
                continue
            for patch in diff.get("patches") or []:
                if not isinstance(patch, dict):
                    continue
                op, path, value = patch.get("op"), patch.get("path"), patch.get("value")
                if op == "replace" and path == "" and isinstance(value, dict):
                    closes.append(ch)
                    chunks = value.get("chunks") if isinstance(value.get("chunks"), list) else []
                    deltas += [(ch, chunks, i) for i, c in enumerate(chunks) if isinstance(c, str)]
                    self.count[usage] = len(chunks)
                elif op == "add" and isinstance(path, str) and _CHUNK.match(path) and isinstance(value, str):
                    deltas.append((ch, patch, "value"))
                    n = _CHUNK.match(path).group(1)
                    self.count[usage] = self.count.get(usage, 0) + 1 if n == "-" else int(n) + 1
        if obj.get("final_sse_message") is True or name == "end_of_stream":
            closes = [()]
        if isinstance(obj.get("text"), str):
            obj = {**obj, "text": _nest(obj["text"])}
        bid = obj.get("backend_uuid")
        fresh = bid if isinstance(bid, str) and bid and bid not in self.aliases else None
        if fresh:
            self.aliases.add(fresh)
        return rebind(Ann(obj, deltas, closes or None, before=before, after=dict(self.count), alias=fresh), obj)


class _Framer(SSEFramer):
    def __init__(self):
        super().__init__()
        self.state = _PerplexityState()

    def feed(self, data: bytes):
        evs = super().feed(data)
        for ev in evs:
            if ev.obj is not None and ev.obj != "[DONE]":
                ev.obj = self.state(ev.name, ev.obj)
        return evs

    def encode(self, ev, name, obj):
        return super().encode(ev, name, _unnest(obj))


class PerplexityWeb(Dialect):
    name = "perplexity_web"
    service = "Perplexity web app (www.perplexity.ai)"
    hosts = ("perplexity.ai",)
    paths = (re.compile(r"^/rest/sse/perplexity[_.]ask/?$"),)
    priority = 10

    def read(self, data, path):
        if not isinstance(data, dict) or not isinstance(data.get("query_str"), str):
            return None
        params = data.get("params") if isinstance(data.get("params"), dict) else {}
        w = Walker()
        w.turn = 1
        w.add(("query_str",), data["query_str"], "user")
        if "params" in data and isinstance(data["params"], dict):
            w.add(("params", "dsl_query"), params.get("dsl_query"), "user")
        req = ChatRequest(kind=self.name, data=data, stream=True, history=False)
        last, front = params.get("last_backend_uuid"), params.get("frontend_uuid")
        if isinstance(last, str) and last:
            req.previous = last
        elif isinstance(front, str) and front:
            req.previous = "front:" + front
        req.slots, req.turns = w.slots, 1
        return req

    def framer(self, content_type):
        if "event-stream" in (content_type or "").lower():
            return _Framer()
        return super().framer(content_type)

    def deltas(self, name, obj):
        found = ann_deltas(obj)
        return found if found is not None else []

    def closes(self, name, obj):
        if obj == "[DONE]":
            return [()]
        if isinstance(obj, Ann):
            return ann_closes(obj)
        return [()] if name == "end_of_stream" or (isinstance(obj, dict) and obj.get("final_sse_message")) else None

    def synth(self, template, channel, text, json_text=False):
        usage = channel[1]
        tpl = template if isinstance(template, dict) else {}
        n = None
        if isinstance(template, Ann):  # the event it precedes (its state before), or the channel's last delta
            closing = any(channel[:len(p)] == p for p in template.closes or [])
            n = template.extra.get("before" if closing else "after", {}).get(usage)
        path = f"/chunks/{n}" if n is not None else "/chunks/-"
        ev = {k: tpl[k] for k in _IDS if k in tpl}
        ev.update({"blocks": [{"intended_usage": usage, "diff_block": {"field": "markdown_block", "patches": [
            {"op": "add", "path": path, "value": text}]}}], "final_sse_message": False})
        return "message", ev

    def aliases(self, obj):
        if isinstance(obj, Ann):
            a = obj.extra.get("alias")
            return [a] if a else []
        bid = obj.get("backend_uuid") if isinstance(obj, dict) else None
        return [bid] if isinstance(bid, str) and bid else []


DIALECTS = [PerplexityWeb()]

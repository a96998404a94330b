"""The guard on streamed responses (SSE): tool-call arguments arrive in fragments, so they are held
back until the call is complete, checked as a whole, and sent as one delta just before the event that
closes the call. Text deltas, keep-alives, comments and `[DONE]` pass through unchanged.

    openai_chat       choices[].delta.tool_calls[].function.arguments fragments; closed by finish_reason or [DONE]
    anthropic         content_block_delta/input_json_delta.partial_json; closed by content_block_stop
    openai_responses  response.function_call_arguments.delta; closed by response.function_call_arguments.done
                      (its `arguments`, and the item in response.output_item.done, are replaced too)

Stated rule: a stream whose events cannot be parsed passes unchanged (the guard never corrupts a stream).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from ..chatapi.sse import Event, SSEFramer

Check = Callable[[str, str], str]  # (tool name, complete arguments JSON) -> arguments to send


def _sse(obj: dict, name: str | None = None) -> bytes:
    head = f"event: {name}\n" if name else ""
    return (head + "data: " + json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n\n").encode()


class StreamGuard:
    def __init__(self, kind: str, check: Check):
        self.kind = kind
        self.check = check
        self.framer = SSEFramer()
        self.args: dict[tuple, list[str]] = {}  # call key -> argument fragments held back
        self.names: dict[tuple, str] = {}
        self.guarded: dict[str, str] = {}  # responses item_id -> guarded arguments
        self.template: dict = {}
        self.whole: dict[tuple, dict] = {}  # call key -> id/type of a call whose name came with its arguments
        self.calls = 0

    def __call__(self, data: bytes) -> bytes:
        out = bytearray()
        for ev in self.framer.feed(data):
            out += self._event(ev)
        if not data:  # end of stream: what is left, and any call never closed
            out += self.framer.rest()
            out += self._flush_all()
        return bytes(out)

    # ------------------------------------------------------------------ per API

    def _event(self, ev: Event) -> bytes:
        obj = ev.obj
        if ev.data == "[DONE]":
            return self._flush_all() + ev.raw
        if not isinstance(obj, dict):
            return ev.raw
        if self.kind == "openai_chat":
            return self._openai(ev, obj)
        if self.kind == "anthropic":
            return self._anthropic(ev, obj)
        if self.kind == "openai_responses":
            return self._responses(ev, obj)
        return ev.raw

    def _openai(self, ev: Event, obj: dict) -> bytes:
        self.template = {k: obj[k] for k in ("id", "object", "created", "model") if k in obj}
        changed, closing = False, []
        for ch in obj.get("choices") or []:
            if not isinstance(ch, dict):
                continue
            ci = ch.get("index", 0)
            delta = ch.get("delta") or {}
            calls = delta.get("tool_calls") if isinstance(delta.get("tool_calls"), list) else []
            for tc in list(calls):
                fn = tc.get("function") if isinstance(tc, dict) else None
                if not isinstance(fn, dict):
                    continue
                key = (ci, tc.get("index", 0))
                if fn.get("name"):
                    self.names[key] = fn["name"]
                if isinstance(fn.get("arguments"), str) and fn["arguments"]:
                    self.args.setdefault(key, []).append(fn["arguments"])
                    fn["arguments"] = ""
                    changed = True
                    if fn.get("name"):  # the whole call in one delta (Mistral): it leaves whole, when checked
                        self.whole[key] = {k: tc[k] for k in ("id", "type") if k in tc}
                        calls.remove(tc)
                        if not calls:
                            delta.pop("tool_calls", None)
                else:
                    self.args.setdefault(key, [])
            if ch.get("finish_reason"):
                closing.append(ci)
        prefix = b"".join(self._openai_flush(ci) for ci in closing)
        body = ev.serialise(json.dumps(obj, ensure_ascii=False, separators=(",", ":"))) if changed else ev.raw
        return prefix + body

    def _openai_flush(self, ci: int) -> bytes:
        out = b""
        for key in [k for k in self.args if k[0] == ci]:
            name = self.names.get(key, "tool")
            args = self._checked(key)
            call = {"index": key[1], "function": {"arguments": args}}
            if key in self.whole:  # id, type and name with the arguments, as the model sent them (SDKs require it)
                call = {"index": key[1], **self.whole.pop(key), "function": {"name": name, "arguments": args}}
            delta = {"tool_calls": [call]}
            out += _sse({**self.template, "choices": [{"index": ci, "delta": delta, "finish_reason": None}]})
        return out

    def _anthropic(self, ev: Event, obj: dict) -> bytes:
        t = obj.get("type")
        idx = obj.get("index")
        if t == "content_block_start" and (obj.get("content_block") or {}).get("type") == "tool_use":
            self.names[(idx,)] = str(obj["content_block"].get("name", "tool"))
            self.args[(idx,)] = []
            return ev.raw
        if t == "content_block_delta" and (idx,) in self.args:
            d = obj.get("delta") or {}
            if d.get("type") == "input_json_delta":
                self.args[(idx,)].append(str(d.get("partial_json", "")))
                return b""  # held back until the block closes
        if t == "content_block_stop" and (idx,) in self.args:
            args = self._checked((idx,))
            delta = {"type": "content_block_delta", "index": idx,
                     "delta": {"type": "input_json_delta", "partial_json": args}}
            return _sse(delta, "content_block_delta") + ev.raw
        return ev.raw

    def _responses(self, ev: Event, obj: dict) -> bytes:
        t = obj.get("type")
        item_id = obj.get("item_id")
        if t == "response.output_item.added" and (obj.get("item") or {}).get("type") == "function_call":
            item = obj["item"]
            self.names[(item.get("id"),)] = str(item.get("name", "tool"))
            self.args[(item.get("id"),)] = []
            return ev.raw
        if t == "response.function_call_arguments.delta" and (item_id,) in self.args:
            self.args[(item_id,)].append(str(obj.get("delta", "")))
            return b""
        if t == "response.function_call_arguments.done" and (item_id,) in self.args:
            args = self._checked((item_id,), whole=obj.get("arguments"))
            self.guarded[item_id] = args
            delta = {"type": "response.function_call_arguments.delta", "item_id": item_id,
                     "output_index": obj.get("output_index", 0), "delta": args}
            obj["arguments"] = args
            return _sse(delta, "response.function_call_arguments.delta") + ev.serialise(json.dumps(obj))
        if t in ("response.output_item.done", "response.completed"):
            items = [obj.get("item")] if t == "response.output_item.done" else (obj.get("response") or {}).get("output") or []
            hit = False
            for it in items:
                if isinstance(it, dict) and it.get("id") in self.guarded:
                    it["arguments"] = self.guarded[it["id"]]
                    hit = True
            return ev.serialise(json.dumps(obj, ensure_ascii=False)) if hit else ev.raw
        return ev.raw

    # ------------------------------------------------------------------ helpers

    def _checked(self, key: tuple, whole: str | None = None) -> str:
        text = whole if whole is not None else "".join(self.args.pop(key, []))
        self.args.pop(key, None)
        self.calls += 1
        try:
            return self.check(self.names.get(key, "tool"), text)
        except Exception:
            return text  # the check failed: the arguments pass as the model wrote them (logged by the caller)

    def _flush_all(self) -> bytes:
        if self.kind == "openai_chat":
            return b"".join(self._openai_flush(ci) for ci in sorted({k[0] for k in self.args}))
        return b""


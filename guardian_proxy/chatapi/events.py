"""Chat-API streamed-response shapes: which string of an event is a delta of which text channel, which
events close a channel, how to make a synthetic delta event (to flush text held back while a surrogate
may still be completing across two chunks), and which response ids continue a conversation.
"""

from __future__ import annotations

from dataclasses import dataclass

from .requests import context_hash


@dataclass
class DeltaRef:
    """One streamed text fragment inside an event: `holder[key]` belongs to text channel `channel`."""

    channel: tuple
    holder: dict
    key: str
    json_text: bool = False


def event_deltas(kind: str, name: str | None, obj) -> list[DeltaRef]:
    if not isinstance(obj, dict):
        return []
    out: list[DeltaRef] = []
    if kind == "openai_chat":
        for ch in obj.get("choices") or []:
            d = ch.get("delta") if isinstance(ch, dict) else None
            if not isinstance(d, dict):
                continue
            i = ch.get("index", 0)
            for key in ("content", "refusal"):
                if isinstance(d.get(key), str):
                    out.append(DeltaRef(("c", i, key), d, key))
            for tc in d.get("tool_calls") or []:
                fn = tc.get("function") if isinstance(tc, dict) else None
                if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                    out.append(DeltaRef(("c", i, "tool", tc.get("index", 0)), fn, "arguments", True))
    elif kind == "anthropic":
        d = obj.get("delta")
        if obj.get("type") == "content_block_delta" and isinstance(d, dict):
            if d.get("type") == "text_delta" and isinstance(d.get("text"), str):
                out.append(DeltaRef(("a", obj.get("index", 0)), d, "text"))
            elif d.get("type") == "input_json_delta" and isinstance(d.get("partial_json"), str):
                out.append(DeltaRef(("a", obj.get("index", 0)), d, "partial_json", True))
    elif kind == "openai_responses":
        t = obj.get("type") or name or ""
        if t.endswith(".delta") and isinstance(obj.get("delta"), str) and "reasoning" not in t and "audio" not in t:
            out.append(DeltaRef(_responses_channel(t[:-6], obj), obj, "delta", "arguments" in t))
    elif kind == "ollama_chat":
        m = obj.get("message")
        if isinstance(m, dict) and isinstance(m.get("content"), str):
            out.append(DeltaRef(("o", "content"), m, "content"))
    elif kind == "ollama_generate":
        if isinstance(obj.get("response"), str):
            out.append(DeltaRef(("o", "response"), obj, "response"))
    return out


def _responses_channel(base: str, obj: dict) -> tuple:
    return ("r", base, obj.get("item_id"), obj.get("output_index"), obj.get("content_index"))


def event_closes(kind: str, name: str | None, obj) -> list[tuple] | None:
    """Channel prefixes that end at this event (flushed before it); `[()]` = every channel; None = none."""
    if obj == "[DONE]":
        return [()]
    if not isinstance(obj, dict):
        return None
    if kind == "openai_chat":
        ended = [("c", ch.get("index", 0)) for ch in obj.get("choices") or []
                 if isinstance(ch, dict) and ch.get("finish_reason")]
        return ended or None
    if kind == "anthropic":
        t = obj.get("type")
        if t == "content_block_stop":
            return [("a", obj.get("index", 0))]
        return [()] if t in ("message_stop", "error", "message_delta") else None
    if kind == "openai_responses":
        t = obj.get("type") or name or ""
        if t.endswith(".done"):
            return [_responses_channel(t[:-5], obj)]
        return [()] if t in ("response.completed", "response.failed", "response.incomplete", "error") else None
    return [()] if obj.get("done") is True else None


def synth_event(kind: str, template, channel: tuple, text: str, json_text: bool = False) -> tuple[str | None, dict]:
    """(event name, data) of a delta event carrying `text` for `channel`, modelled on `template`."""
    tpl = template if isinstance(template, dict) else {}
    if kind == "openai_chat":
        i = channel[1]
        delta = ({"tool_calls": [{"index": channel[3], "function": {"arguments": text}}]} if channel[2] == "tool"
                 else {channel[2]: text})
        base = {k: v for k, v in tpl.items() if k in ("id", "object", "created", "model", "system_fingerprint")}
        return None, {**base, "choices": [{"index": i, "delta": delta, "finish_reason": None}]}
    if kind == "anthropic":
        delta = {"type": "input_json_delta", "partial_json": text} if json_text else {"type": "text_delta", "text": text}
        return "content_block_delta", {"type": "content_block_delta", "index": channel[1], "delta": delta}
    if kind == "openai_responses":
        _, base, item_id, out_i, content_i = channel
        ev = {"type": base + ".delta", "item_id": item_id, "output_index": out_i, "delta": text}
        if content_i is not None:
            ev["content_index"] = content_i
        if "sequence_number" in tpl:
            ev["sequence_number"] = tpl["sequence_number"]
        return base + ".delta", ev
    base = {k: v for k, v in tpl.items() if k in ("model", "created_at")}
    if kind == "ollama_chat":
        return None, {**base, "message": {"role": "assistant", "content": text}, "done": False}
    return None, {**base, "response": text, "done": False}


def response_aliases(kind: str, obj) -> list[str]:
    """Ids in a response that a later request may use to continue the conversation."""
    if not isinstance(obj, dict):
        return []
    if kind == "openai_responses":
        r = obj.get("response") if isinstance(obj.get("response"), dict) else obj
        rid = r.get("id")
        return [rid] if isinstance(rid, str) and rid.startswith("resp") else []
    if kind == "ollama_generate" and isinstance(obj.get("context"), list) and obj["context"]:
        return [context_hash(obj["context"])]
    return []

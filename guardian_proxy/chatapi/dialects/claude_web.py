"""claude.ai, the web app: `POST /api/organizations/{org}/chat_conversations/{conv}/completion` (and
`/retry_completion`); the 2023 app's `/api/append_message` / `/api/retry_message` too.

Request (from captures in borik216/prompt-shield's fixtures (2026) and ChatLunaLab/chatluna's claude2
adapter): `{"prompt": "…", "parent_message_uuid"?, "timezone", "locale", "model", "attachments": [{"file_name",
"file_type", "file_size", "extracted_content": "…"}], "files": [uuid…], "rendering_mode", "tools": [...],
"turn_message_uuids", "create_conversation_params", …}`. Slots: `prompt` and each attachment's
`extracted_content` (text the user pasted or uploaded, already extracted by the browser). `files` are ids
of uploads (images, PDFs) and tool definitions are the app's: neither is a slot. The 2023 body was
`{"completion": {"prompt"}, "text", "conversation_uuid", "attachments"}`. The conversation lives on the
server (`history=False`); `conversation` = the conversation uuid from the path (2023: the body's
`conversation_uuid`).

Reply: SSE. Current: Anthropic Messages events (message_start, content_block_start/delta/stop with
text_delta, thinking_delta, thinking_summary_delta, input_json_delta, message_delta, message_stop) plus the
app's own `conversation_ready` and `message_limit` events: text deltas, closes and synthetic deltas are
anthropic.py's; thinking blocks and their summaries are never changed. Older: `{"type": "completion",
"completion": "text", "stop_reason": null, "model", …}` events, each a delta; the one with a `stop_reason`
closes. Uncertain: the event name of a synthetic old-format delta (none is written; the 2023 stream had
`data:` lines only, as far as the published clients show).
"""

from __future__ import annotations

import re

from ..dialect import Dialect
from ..events import DeltaRef
from ..requests import ChatRequest, Walker
from . import anthropic

_COMPLETION = re.compile(r"^/api/organizations/[^/]+/chat_conversations/([^/]+)/(?:retry_)?completion/?$")
_LEGACY = re.compile(r"^/api/(?:append|retry)_message/?$")


class ClaudeWeb(Dialect):
    name = "claude_web"
    service = "claude.ai web app"
    hosts = ("claude.ai",)
    paths = (_COMPLETION, _LEGACY)
    priority = 10

    def read(self, data, path):
        if not isinstance(data, dict):
            return None
        path = path.split("?", 1)[0]
        m = _COMPLETION.search(path)
        w = Walker()
        w.turn = 1
        if m:
            if not isinstance(data.get("prompt"), str) and not path.rstrip("/").endswith("retry_completion"):
                return None
            w.add(("prompt",), data.get("prompt"), "user")
            conv = m.group(1)
        else:
            comp = data.get("completion")
            if not isinstance(data.get("conversation_uuid"), str) or not isinstance(comp, dict | type(None)):
                return None
            if isinstance(comp, dict):
                w.add(("completion", "prompt"), comp.get("prompt"), "user")
            w.add(("text",), data.get("text"), "user")
            conv = data["conversation_uuid"]
        for i, a in enumerate(data.get("attachments") or []):
            if isinstance(a, dict):
                w.add(("attachments", i, "extracted_content"), a.get("extracted_content"), "user")
        req = ChatRequest(kind=self.name, data=data, stream=True, history=False, conversation=conv)
        req.slots, req.turns = w.slots, 1
        return req

    def deltas(self, name, obj):
        if isinstance(obj, dict) and obj.get("type") == "completion" and isinstance(obj.get("completion"), str):
            return [DeltaRef(("cl", "completion"), obj, "completion")]
        return anthropic.deltas(obj)

    def closes(self, name, obj):
        if obj == "[DONE]":
            return [()]
        if isinstance(obj, dict) and obj.get("type") == "completion":
            return [()] if obj.get("stop_reason") else None
        return anthropic.closes(obj)

    def synth(self, template, channel, text, json_text=False):
        if channel[0] == "cl":
            tpl = template if isinstance(template, dict) else {}
            return None, {"type": "completion", "completion": text, "stop_reason": None,
                          **{k: tpl[k] for k in ("model", "log_id") if k in tpl}}
        return anthropic.synth(channel, text, json_text)


DIALECTS = [ClaudeWeb()]

"""Text-completion APIs: a prompt in, a completion out.

- `openai_completions`: OpenAI's legacy Completions (`…/v1/completions`) and every API that still imitates
  it (Together, Fireworks, vLLM, llama.cpp's server, LM Studio, DeepSeek's FIM beta …): `prompt` is a
  string or a list of strings, `suffix` a string; the reply is `choices[i].text`, streamed as SSE chunks
  each carrying a `choices[i].text` fragment (closed by its `finish_reason` or `[DONE]`).
- `anthropic_complete`: Anthropic's legacy Text Completions (`…/v1/complete`): `prompt` is the
  "\\n\\nHuman: … \\n\\nAssistant:" transcript (cut into its turns as Bedrock's Claude v2 bodies are, so the
  markers are never analysed); the reply is `completion`, streamed as SSE `completion` events each carrying
  a fragment (closed by a non-null `stop_reason`, `error` or the end of the stream).

Each streamed fragment is a delta of its channel, so a surrogate split across two chunks is restored
whole (before, these fell to the generic dialect, which de-masks event by event).
"""

from __future__ import annotations

import re

from ..dialect import Dialect
from ..events import DeltaRef
from ..requests import ChatRequest, Walker
from .bedrock import joined, read_prompt


class OpenAICompletions(Dialect):
    name = "openai_completions"
    service = "OpenAI-compatible text Completions (legacy /v1/completions: Together, Fireworks, vLLM …)"
    paths = (re.compile(r"(?<!/chat)/completions/?$"),)

    def read(self, data, path):
        if not isinstance(data, dict) or "messages" in data:
            return None
        prompt = data.get("prompt")
        if not (isinstance(prompt, str) or (isinstance(prompt, list) and prompt
                                            and all(isinstance(p, str) for p in prompt))):
            return None  # token-id prompts carry no text to read
        w = Walker()
        w.turn = 1
        if isinstance(prompt, str):
            w.add(("prompt",), prompt, "user")
        else:
            for i, p in enumerate(prompt):
                w.add(("prompt", i), p, "user")
        w.add(("suffix",), data.get("suffix"), "user")
        req = ChatRequest(kind=self.name, data=data, stream=data.get("stream") is True, turns=1)
        w.metadata(req, data)
        req.slots = w.slots
        return req

    def deltas(self, name, obj):
        out: list[DeltaRef] = []
        if not isinstance(obj, dict):
            return out
        for ch in obj.get("choices") if isinstance(obj.get("choices"), list) else []:
            if isinstance(ch, dict) and isinstance(ch.get("text"), str):
                out.append(DeltaRef(("c", ch.get("index", 0)), ch, "text"))
        return out

    def closes(self, name, obj):
        if obj == "[DONE]":
            return [()]
        if not isinstance(obj, dict):
            return None
        if "error" in obj:
            return [()]
        # a chunk that carries text and its finish reason together: its own text is flushed at the end
        ended = [("c", ch.get("index", 0)) for ch in obj.get("choices") or []
                 if isinstance(ch, dict) and ch.get("finish_reason") and not ch.get("text")]
        return ended or None

    def synth(self, template, channel, text, json_text=False):
        tpl = template if isinstance(template, dict) else {}
        base = {k: v for k, v in tpl.items() if k in ("id", "object", "created", "model", "system_fingerprint")}
        return None, {**base, "choices": [{"index": channel[1], "text": text, "logprobs": None,
                                           "finish_reason": None}]}


class AnthropicComplete(Dialect):
    name = "anthropic_complete"
    service = "Anthropic Text Completions (legacy /v1/complete)"
    paths = (re.compile(r"/v1/complete/?$"),)

    def read(self, data, path):
        if not isinstance(data, dict) or not isinstance(data.get("prompt"), str) or "messages" in data:
            return None
        req = read_prompt(data, "prompt", self.name, data.get("stream") is True)
        if req is not None:
            req.history = True
        return req

    def serialise(self, chat):
        return Dialect.serialise(self, ChatRequest(kind=chat.kind, data=joined(chat.data)))

    def deltas(self, name, obj):
        if isinstance(obj, dict) and isinstance(obj.get("completion"), str) and obj.get("type", "completion") == \
                "completion":
            return [DeltaRef(("t",), obj, "completion")]
        return []

    def closes(self, name, obj):
        if obj == "[DONE]":
            return [()]
        if not isinstance(obj, dict):
            return None
        if obj.get("type") == "error" or name == "error":
            return [()]
        if obj.get("stop_reason") and not obj.get("completion"):
            return [()]
        return None

    def synth(self, template, channel, text, json_text=False):
        tpl = template if isinstance(template, dict) else {}
        base = {k: v for k, v in tpl.items() if k in ("log_id", "model", "id")}
        return "completion", {"type": "completion", "id": tpl.get("id"), "completion": text, "stop_reason": None,
                              **base}


DIALECTS = [OpenAICompletions(), AnthropicComplete()]

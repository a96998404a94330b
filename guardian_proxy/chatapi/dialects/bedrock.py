"""AWS Bedrock Runtime (`bedrock-runtime.{region}.amazonaws.com`, `bedrock-runtime-fips.…`, VPC endpoints
`….bedrock-runtime.{region}.vpce.amazonaws.com`): the Converse API and InvokeModel with each model family's
native body. Requests are SigV4-signed: after a rewrite the proxy signs them again (`guardian_proxy.sigv4`).

Paths (the SDKs URL-encode the model id, `…v1%3A0`, and an ARN's `/` as `%2F`):

- `/model/{id}/converse`, `/model/{id}/converse-stream` → `bedrock_converse`: `messages[]` of `role` +
  `content[]` blocks — `text`, `toolUse.input` (an object: its string leaves), `toolResult.content[]`
  (`text`, `json`), `document.source.text` / `.source.content[].text` / `.context`, `guardContent.text.text`,
  `citationsContent.content[].text`, `searchResult.content[].text` —, `system[]` (`text`, `guardContent`),
  `promptVariables.*.text`. Images, video, audio, document bytes, `reasoningContent` and `cachePoint` are
  not slots. The reply is JSON (`output.message.content[]`, de-masked as a whole) or an event stream
  (`application/vnd.amazon.eventstream`): `contentBlockDelta` events `{contentBlockIndex, delta: {text} |
  {toolUse: {input: "<JSON text>"}}}`, closed by `contentBlockStop` (that block) and `messageStop` /
  `metadata` / exceptions (all). `reasoningContent` deltas pass byte for byte (they are signed).
- `/model/{id}/invoke`, `/model/{id}/invoke-with-response-stream` → one dialect per model family, chosen
  by the model id (`anthropic.…`, `us.anthropic.…` inference profiles, `arn:…:foundation-model/…`):
  `bedrock_anthropic` (Anthropic Messages with `anthropic_version`, read as `dialects.anthropic` reads it;
  the legacy `prompt` "\\n\\nHuman: … \\n\\nAssistant:" with replies `completion`), `bedrock_llama`
  (`prompt` in the Llama 2 `[INST]`/`<<SYS>>` or Llama 3/4 header-token chat template; replies
  `generation`), `bedrock_titan` (`inputText`, "User: … Bot:" lines; replies `results[].outputText`,
  streamed `outputText`), `bedrock_mistral` (`prompt` in `[INST]` form, replies `outputs[].text`; or
  `messages` OpenAI-style, replies `choices[].message.content`), `bedrock_cohere` (Command R `message`,
  `chat_history[].message`, `preamble`, `documents`, `tool_results`, replies `text`; Command `prompt`,
  replies `generations[].text`), `bedrock_nova` (`messages` of Converse content blocks, `system[]`;
  streamed chunks are Converse events wrapped by name, `{"contentBlockDelta": {…}}`), and
  `bedrock_invoke` for every other model (AI21, DeepSeek, OpenAI gpt-oss, Writer, imported or provisioned
  models whose ARN names no family): the body is read by its shape. Streamed replies are event-stream
  `chunk` events whose payload `{"bytes": base64(model chunk JSON)}` the framer opens, so the model's own
  chunk is what `deltas` sees; every invoke dialect reads every family's chunk shapes.

A prompt template is cut into its messages (each a slot with its role and turn; the markup is not
analysed) and put back together by `serialise`, so history in a prompt is pseudonymised like a message list.
Only special tokens (Llama, `[INST]`, DeepSeek) and the Anthropic Human/Assistant format make a piece the
assistant's; after a plain-word marker ("Bot:" at a line's start, which a user may also type) the text is
analysed as the user's.

Taken from: botocore's bedrock-runtime service model (2023-09-30) for Converse and the event stream, the
Bedrock user guide's model-parameter pages for the native bodies, AWS's SDK code examples and litellm's
Bedrock stream decoder (installed) for the streamed chunk shapes. Uncertain: the streamed chunks of
Mistral's `messages` models (read as `choices[].message` or `.delta`) and of Cohere Command (`generations`
or bare `text`) are documented only by examples; the final chunk of several families carries text and the
stop reason together, so that event does not close its own channel (text held back then is flushed when the
stream ends).
"""

from __future__ import annotations

import json
import re
from urllib.parse import unquote

from ..dialect import Dialect
from ..events import DeltaRef
from ..eventstream import EventStreamFramer
from ..requests import ChatRequest, Slot, Walker
from . import anthropic as _anthropic

_HOST = re.compile(r"(?:^|\.)bedrock-runtime(?:-fips)?\.[a-z0-9-]+\.(?:vpce\.)?(?:amazonaws\.com(?:\.cn)?|api\.aws)$")
_PATH = re.compile(r"^/model/([^/]+)/(converse|converse-stream|invoke|invoke-with-response-stream)/?$")
_STREAMS = ("converse-stream", "invoke-with-response-stream")
#: where a prompt template's pieces wait while slots are rewritten (`serialise` joins them back)
PIECES = "\x00guardian_prompt"
_GEO = {"us", "eu", "apac", "global", "us-gov", "ca", "jp", "au", "apne1", "use1"}


def model_of(path: str) -> tuple[str, str] | None:
    """(model id, operation) of a Bedrock Runtime path, the id URL-decoded."""
    m = _PATH.match(path.split("?", 1)[0])
    return (unquote(m.group(1)), m.group(2)) if m else None


def family(model: str) -> str | None:
    """The model family a model id, inference profile or foundation-model ARN names; None when it names
    none (provisioned models, application inference profiles, imported models)."""
    m = model.lower()
    if m.startswith("arn:"):
        m = m.rsplit("/", 1)[-1] if "/" in m else ""
    parts = m.split(".")
    if len(parts) > 2 and parts[0] in _GEO:
        parts = parts[1:]
    if len(parts) < 2:
        return None
    provider, name = parts[0], parts[1]
    if provider == "amazon":
        if name.startswith("nova"):
            return "nova"
        if name.startswith(("titan-text", "titan-tg1")):
            return "titan"
        return None
    if provider == "cohere":
        return "cohere" if name.startswith("command") else None
    return {"anthropic": "anthropic", "meta": "llama", "mistral": "mistral"}.get(provider)


# ---------------------------------------------------------------------- requests: Converse content blocks


class _Blocks:
    """Slots of Converse (and Nova) bodies: system blocks, messages of content blocks."""

    def __init__(self):
        self.w = Walker()

    def system(self, blocks) -> None:
        if isinstance(blocks, str):
            self.w.add(("system",), blocks, "system")
            return
        for i, b in enumerate(blocks if isinstance(blocks, list) else []):
            if isinstance(b, dict):
                self.block(b, ("system", i), "system")

    def messages(self, msgs) -> None:
        for i, m in enumerate(msgs):
            if not isinstance(m, dict):
                continue
            role = m.get("role") if m.get("role") in ("user", "assistant") else "user"
            content = m.get("content")
            if role == "user" and not (isinstance(content, list) and content and all(
                    isinstance(b, dict) and "toolResult" in b for b in content)):
                self.w.turn += 1  # a message of tool results only is not a user turn
            if isinstance(content, str):
                self.w.add(("messages", i, "content"), content, role)
                continue
            for j, b in enumerate(content if isinstance(content, list) else []):
                if isinstance(b, dict):
                    self.block(b, ("messages", i, "content", j), role)

    def block(self, b: dict, p: tuple, role: str) -> None:
        w = self.w
        if isinstance(b.get("text"), str):
            w.add(p + ("text",), b["text"], role)
        tu = b.get("toolUse")
        if isinstance(tu, dict):
            w.strings(tu.get("input"), p + ("toolUse", "input"), role)
        tr = b.get("toolResult")
        if isinstance(tr, dict):
            for k, c in enumerate(tr.get("content") if isinstance(tr.get("content"), list) else []):
                if isinstance(c, dict):
                    self.result(c, p + ("toolResult", "content", k))
        doc = b.get("document")
        if isinstance(doc, dict):
            w.add(p + ("document", "context"), doc.get("context"), role)
            src = doc.get("source")
            if isinstance(src, dict):
                w.add(p + ("document", "source", "text"), src.get("text"), role)
                self.texts(src.get("content"), p + ("document", "source", "content"), role)
        gc = b.get("guardContent")
        if isinstance(gc, dict) and isinstance(gc.get("text"), dict):
            w.add(p + ("guardContent", "text", "text"), gc["text"].get("text"), role)
        cc = b.get("citationsContent")
        if isinstance(cc, dict):
            self.texts(cc.get("content"), p + ("citationsContent", "content"), role)
        sr = b.get("searchResult")
        if isinstance(sr, dict):
            self.texts(sr.get("content"), p + ("searchResult", "content"), "tool")

    def result(self, c: dict, p: tuple) -> None:
        self.w.add(p + ("text",), c.get("text"), "tool")
        if "json" in c:
            self.w.strings(c["json"], p + ("json",), "tool")
        doc = c.get("document")
        if isinstance(doc, dict) and isinstance(doc.get("source"), dict):
            self.w.add(p + ("document", "source", "text"), doc["source"].get("text"), "tool")
        sr = c.get("searchResult")
        if isinstance(sr, dict):
            self.texts(sr.get("content"), p + ("searchResult", "content"), "tool")

    def texts(self, items, p: tuple, role: str) -> None:
        for k, c in enumerate(items if isinstance(items, list) else []):
            if isinstance(c, dict):
                self.w.add(p + (k, "text"), c.get("text"), role)


def _request(kind: str, data: dict, w: Walker, stream: bool) -> ChatRequest:
    req = ChatRequest(kind=kind, data=data, stream=stream)
    req.slots, req.turns = w.slots, w.turn
    return req


def read_converse(data, kind: str, stream: bool) -> ChatRequest | None:
    """A Converse / ConverseStream body, or a Nova InvokeModel body (the same blocks)."""
    if not isinstance(data, dict) or not (isinstance(data.get("messages"), list) or (
            kind == "bedrock_converse" and isinstance(data.get("promptVariables"), dict))):
        return None  # (a Converse call of a managed prompt may carry only its variables)
    b = _Blocks()
    b.system(data.get("system"))
    b.messages(data.get("messages") or [])
    pv = data.get("promptVariables")
    if isinstance(pv, dict):
        for k, v in pv.items():
            if isinstance(v, dict):
                b.w.add(("promptVariables", k, "text"), v.get("text"), "user")
    return _request(kind, data, b.w, stream)


# ---------------------------------------------------------------------- requests: prompt templates

_ROLE = {"system": "system", "user": "user", "human": "user", "assistant": "assistant", "bot": "assistant",
         "ai": "assistant", "ipython": "tool", "tool": "tool", "chatbot": "assistant"}
# (pattern, role after the marker: a string, a group index naming it, or None = unchanged)
_TEMPLATES: list[tuple[re.Pattern, object]] = [
    # Llama 3.x and Llama 4 header tokens
    (re.compile(r"<\|start_header_id\|>(\w+)<\|end_header_id\|>\n*|<\|header_start\|>(\w+)<\|header_end\|>\n*"
                r"|<\|begin_of_text\|>|<\|eot_id\|>|<\|eom_id\|>|<\|eot\|>|<\|python_tag\|>"), "llama3"),
    # Llama 2 / Mistral instruction format
    (re.compile(r"\[INST\]\s*|\[/INST\]\s*|<<SYS>>\s*|<</SYS>>\s*|<s>|</s>"), "inst"),
    # Anthropic Text Completions
    (re.compile(r"\n\nHuman:\s*|\n\nAssistant:\s*|^Human:\s*"), "human"),
    # DeepSeek R1
    (re.compile(r"<｜begin▁of▁sentence｜>|<｜end▁of▁sentence｜>|<｜User｜>|<｜Assistant｜>|<think>\s*|</think>\s*"),
     "deepseek"),
    # Titan / Cohere-style transcript lines
    (re.compile(r"(?m)^(User|Bot|Human|Assistant|Chatbot):[ \t]*"), "lines"),
]


_LEFT_SPACE = frozenset({"inst", "human", "deepseek"})


def _marker_role(style: str, m: re.Match, role: str | None) -> str | None:
    s = m.group(0).strip()
    if style == "llama3":
        name = m.group(1) or m.group(2)
        return _ROLE.get(name.lower(), "user") if name else role
    if style == "inst":
        return {"[INST]": "user", "[/INST]": "assistant", "<<SYS>>": "system", "<</SYS>>": "user"}.get(s, role)
    if style == "human":
        return "assistant" if s.startswith("Assistant") else "user"
    if style == "deepseek":
        return {"<｜User｜>": "user", "<｜Assistant｜>": "assistant", "<think>": None,
                "</think>": "assistant"}.get(s, role)
    return _ROLE.get(s[:-1].lower(), "user")


def prompt_pieces(prompt: str) -> tuple[str | None, list[tuple[str, str | None]]]:
    """(template style, the prompt cut into (text, role) pieces, role None for template markup); one user
    piece and style None when no template is recognised. Text before the first marker counts as the user's
    (the system's for the Anthropic format, whose system prompt comes before the first Human turn)."""
    for pat, style in _TEMPLATES:
        marks = list(pat.finditer(prompt))
        if not marks:
            continue
        if style == "lines" and not any(m.group(1) in ("Bot", "Assistant", "Chatbot") for m in marks) \
                and not prompt.startswith(marks[0].group(0)):
            continue  # "User:" somewhere in a plain prompt is not a transcript
        out: list[tuple[str, str | None]] = []
        role: str | None = "system" if style == "human" else "user"
        pos = 0
        for m in marks:
            start = m.start()
            if style in _LEFT_SPACE:  # whitespace before a marker is the template's (patterns stay linear:
                while start > pos and prompt[start - 1].isspace():  # no leading \s* to retry at every offset)
                    start -= 1
            if start > pos:
                out.append((prompt[pos:start], role))
            if m.end() > start:
                out.append((prompt[start:m.end()], None))
            role = _marker_role(str(style), m, role)
            pos = m.end()
        if pos < len(prompt):
            out.append((prompt[pos:], role))
        return str(style), out
    return None, [(prompt, "user")]


def joined(data):
    """The body with a prompt `read_prompt` cut into pieces joined back under its own key."""
    if isinstance(data, dict) and PIECES in data:
        data = dict(data)
        held = data.pop(PIECES)
        data[held["key"]] = "".join(held["pieces"])
    return data


def read_prompt(data: dict, key: str, kind: str, stream: bool) -> ChatRequest | None:
    """A body whose conversation is one templated string at `data[key]`: each message a slot (stored in
    `data[PIECES]` until `serialise` joins them back). Markers written in plain words ("Bot:" at a line's
    start) may also be the user's own text, so what follows them is analysed as the user's: only special
    tokens (Llama, [INST], DeepSeek) and the Anthropic format make a piece the assistant's."""
    prompt = data.get(key)
    if not isinstance(prompt, str):
        return None
    style, pieces = prompt_pieces(prompt)
    w = Walker()
    roles = [r for _, r in pieces]
    for i, (text, role) in enumerate(pieces):
        if role is None:
            continue
        if role == "user" and (i == 0 or roles[i - 1] is None) and text.strip():
            w.turn += 1
        w.add((PIECES, "pieces", i), text, "user" if style == "lines" and role == "assistant" else role)
    if style is None:  # no template: the string itself is the slot
        w.slots = [Slot((key,), s.text, s.role, s.turn) for s in w.slots]
    else:
        data[PIECES] = {"key": key, "pieces": [t for t, _ in pieces]}
    return _request(kind, data, w, stream)


# ---------------------------------------------------------------------- requests: other native bodies


def read_cohere(data: dict, kind: str, stream: bool) -> ChatRequest | None:
    if not isinstance(data.get("message"), str):
        return None
    w = Walker()
    w.add(("preamble",), data.get("preamble"), "system")
    for i, m in enumerate(data.get("chat_history") if isinstance(data.get("chat_history"), list) else []):
        if not isinstance(m, dict):
            continue
        role = _ROLE.get(str(m.get("role", "user")).lower(), "user")
        if role == "user":
            w.turn += 1
        w.add(("chat_history", i, "message"), m.get("message"), role)
        if isinstance(m.get("tool_results"), list):
            w.strings(m["tool_results"], ("chat_history", i, "tool_results"), "tool")
    for i, d in enumerate(data.get("documents") if isinstance(data.get("documents"), list) else []):
        w.strings(d, ("documents", i), "user")
    for i, r in enumerate(data.get("tool_results") if isinstance(data.get("tool_results"), list) else []):
        if isinstance(r, dict):
            w.strings(r.get("outputs"), ("tool_results", i, "outputs"), "tool")
    w.turn += 1
    w.add(("message",), data["message"], "user")
    return _request(kind, data, w, stream)


def read_openai_like(data: dict, kind: str, stream: bool) -> ChatRequest | None:
    if not isinstance(data.get("messages"), list):
        return None
    w = Walker()
    w.messages(data["messages"], kind)
    return _request(kind, data, w, stream)


def _converse_like(msgs: list) -> bool:
    """Messages whose content is a list of blocks keyed by kind ({"text": …}) rather than typed parts."""
    for m in msgs:
        c = m.get("content") if isinstance(m, dict) else None
        if isinstance(c, list) and c and isinstance(c[0], dict):
            return "type" not in c[0]
    return False


def read_by_shape(data, kind: str, stream: bool, prefer: str | None = None) -> ChatRequest | None:
    """Any InvokeModel body: the family's own shape first, then whatever shape the body has."""
    if not isinstance(data, dict):
        return None
    order = [prefer] if prefer else []
    order += ["anthropic", "nova", "messages", "cohere", "titan", "prompt"]
    for shape in order:
        req = _SHAPES[shape](data, kind, stream)
        if req is not None:
            return req
    return None


def _anthropic_shape(data, kind, stream):
    if "anthropic_version" in data and isinstance(data.get("messages"), list):
        req = _anthropic.read_messages(data, kind)
        if req is not None:
            req.stream = stream
        return req
    return read_prompt(data, "prompt", kind, stream) if "max_tokens_to_sample" in data else None


def _nova_shape(data, kind, stream):
    msgs = data.get("messages")
    if isinstance(msgs, list) and ("schemaVersion" in data or _converse_like(msgs)):
        return read_converse(data, kind, stream)
    return None


_SHAPES = {
    "anthropic": _anthropic_shape,
    "nova": _nova_shape,
    "messages": read_openai_like,
    "cohere": read_cohere,
    "titan": lambda d, k, s: read_prompt(d, "inputText", k, s),
    "prompt": lambda d, k, s: read_prompt(d, "prompt", k, s),
    "llama": lambda d, k, s: read_prompt(d, "prompt", k, s),
    "mistral": lambda d, k, s: read_prompt(d, "prompt", k, s) or read_openai_like(d, k, s),
}


# ---------------------------------------------------------------------- replies


class BedrockFramer(EventStreamFramer):
    """The event-stream framer, with signed reasoning deltas passed byte for byte (obj None)."""

    def _parse_payload(self, ev) -> None:
        super()._parse_payload(ev)
        if _reasoning(ev.obj):
            ev.obj = None


def _reasoning(obj) -> bool:
    if not isinstance(obj, dict):
        return False
    for holder in (obj, obj.get("contentBlockDelta"), obj.get("contentBlockStart")):
        if isinstance(holder, dict):
            for k in ("delta", "start"):
                d = holder.get(k)
                if isinstance(d, dict) and "reasoningContent" in d:
                    return True
    return False


def block_deltas(prefix: str, obj) -> list[DeltaRef]:
    """A Converse `contentBlockDelta` payload (or Nova's, unwrapped)."""
    d = obj.get("delta") if isinstance(obj, dict) else None
    if not isinstance(d, dict):
        return []
    i = obj.get("contentBlockIndex", 0)
    if isinstance(d.get("text"), str):
        return [DeltaRef((prefix, i, "text"), d, "text")]
    tu = d.get("toolUse")
    if isinstance(tu, dict) and isinstance(tu.get("input"), str):
        return [DeltaRef((prefix, i, "tool"), tu, "input", True)]
    return []


def block_synth(channel: tuple, text: str) -> dict:
    delta = {"toolUse": {"input": text}} if channel[2] == "tool" else {"text": text}
    return {"contentBlockIndex": channel[1], "delta": delta}


def _is_exception(name: str | None, obj) -> bool:
    return bool(name) and (name.endswith("Exception") or name.endswith("Error"))


class BedrockConverse(Dialect):
    name = "bedrock_converse"
    service = "AWS Bedrock Runtime Converse API"
    hosts = ("amazonaws.com", "amazonaws.com.cn", "api.aws")
    priority = 5

    def matches(self, host, path):
        mo = model_of(path)
        return bool(_HOST.search(host)) and mo is not None and mo[1].startswith("converse")

    def read(self, data, path):
        mo = model_of(path)
        return read_converse(data, self.name, bool(mo and mo[1] in _STREAMS))

    def framer(self, content_type):
        return BedrockFramer() if "vnd.amazon.eventstream" in (content_type or "").lower() else None

    def deltas(self, name, obj):
        return block_deltas("b", obj) if name == "contentBlockDelta" else []

    def closes(self, name, obj):
        if name == "contentBlockStop" and isinstance(obj, dict):
            return [("b", obj.get("contentBlockIndex", 0))]
        if name in ("messageStop", "metadata") or _is_exception(name, obj):
            return [()]
        return None

    def synth(self, template, channel, text, json_text=False):
        return "contentBlockDelta", block_synth(channel, text)


class BedrockInvoke(Dialect):
    """InvokeModel / InvokeModelWithResponseStream for models whose id names no family we know."""

    hosts = ("amazonaws.com", "amazonaws.com.cn", "api.aws")
    priority = 5

    def __init__(self, family: str | None = None):
        """One dialect per model family (`FAMILIES`); `family` None: the models no family names."""
        self.family = family
        self.name = f"bedrock_{family}" if family else "bedrock_invoke"
        self.service = (f"AWS Bedrock InvokeModel: {FAMILIES[family]}" if family
                        else "AWS Bedrock Runtime InvokeModel (other models)")

    def matches(self, host, path):
        mo = model_of(path)
        if not _HOST.search(host) or mo is None or not mo[1].startswith("invoke"):
            return False
        fam = family(mo[0])
        return fam == self.family if self.family else fam not in FAMILIES

    def read(self, data, path):
        mo = model_of(path)
        return read_by_shape(data, self.name, bool(mo and mo[1] in _STREAMS), self.family)

    def serialise(self, chat):
        return json.dumps(joined(chat.data), ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def framer(self, content_type):
        return BedrockFramer(unwrap=True) if "vnd.amazon.eventstream" in (content_type or "").lower() else None

    # every family's chunk shapes: a chunk says by its keys which family wrote it
    def deltas(self, name, obj):
        if not isinstance(obj, dict):
            return []
        if isinstance(obj.get("type"), str):  # Anthropic Messages events
            return _anthropic.deltas(obj)
        if isinstance(obj.get("contentBlockDelta"), dict):  # Nova
            return block_deltas("n", obj["contentBlockDelta"])
        for key in ("generation", "outputText", "completion"):  # Llama, Titan, Anthropic Text Completions
            if isinstance(obj.get(key), str) and obj[key]:
                return [DeltaRef(("t", key), obj, key)]
        out: list[DeltaRef] = []
        for key, tag in (("outputs", "o"), ("generations", "g")):  # Mistral prompt models, Cohere Command
            for i, it in enumerate(obj.get(key) if isinstance(obj.get(key), list) else []):
                if isinstance(it, dict) and isinstance(it.get("text"), str) and it["text"]:
                    out.append(DeltaRef((tag, i), it, "text"))
        for ch in obj.get("choices") if isinstance(obj.get("choices"), list) else []:  # OpenAI-style, DeepSeek
            if not isinstance(ch, dict):
                continue
            i = ch.get("index", 0)
            for holder in ("delta", "message"):
                d = ch.get(holder)
                if not isinstance(d, dict):
                    continue
                if isinstance(d.get("content"), str) and d["content"]:
                    out.append(DeltaRef(("c", i, holder), d, "content"))
                for tc in d.get("tool_calls") if isinstance(d.get("tool_calls"), list) else []:
                    fn = tc.get("function") if isinstance(tc, dict) else None
                    if isinstance(fn, dict) and isinstance(fn.get("arguments"), str) and fn["arguments"]:
                        out.append(DeltaRef(("c", i, holder, "tool", tc.get("index", 0)), fn, "arguments", True))
            if isinstance(ch.get("text"), str) and ch["text"]:
                out.append(DeltaRef(("c", i, "text"), ch, "text"))
        if not out and isinstance(obj.get("text"), str) and obj["text"] and obj.get("is_finished") is not True:
            out.append(DeltaRef(("t", "text"), obj, "text"))  # Cohere Command R text-generation
        return out

    def closes(self, name, obj):
        if _is_exception(name, obj):
            return [()]
        if not isinstance(obj, dict):
            return None
        if isinstance(obj.get("type"), str):
            return _anthropic.closes(obj)
        if isinstance(obj.get("contentBlockStop"), dict):
            return [("n", obj["contentBlockStop"].get("contentBlockIndex", 0))]
        if "messageStop" in obj or "metadata" in obj:
            return [()]
        carried = {d.channel for d in self.deltas(name, obj)}  # its own text goes on: flushed at the end
        ended: list[tuple] = []
        for key, tag in (("outputs", "o"), ("choices", "c")):
            for i, it in enumerate(obj.get(key) if isinstance(obj.get(key), list) else []):
                if isinstance(it, dict) and (it.get("stop_reason") or it.get("finish_reason")):
                    ch = (tag, it.get("index", i) if tag == "c" else i)
                    if not any(c[:2] == ch for c in carried):
                        ended.append(ch)
        final = ("amazon-bedrock-invocationMetrics" in obj or obj.get("is_finished") is True
                 or bool(obj.get("stop_reason") or obj.get("completionReason") or obj.get("finish_reason")))
        if final and not carried:
            return [()]
        return ended or None

    def synth(self, template, channel, text, json_text=False):
        tag = channel[0]
        if tag == "a":
            return "chunk", _anthropic.synth(channel, text, json_text)[1]
        if tag == "n":
            return "chunk", {"contentBlockDelta": block_synth(channel, text)}
        if tag == "t":
            key = channel[1]
            if key == "text":
                return "chunk", {"is_finished": False, "event_type": "text-generation", "text": text}
            return "chunk", {key: text, ("completionReason" if key == "outputText" else "stop_reason"): None}
        if tag == "o":
            return "chunk", {"outputs": [{"text": text, "stop_reason": None}]}
        if tag == "g":
            return "chunk", {"generations": [{"text": text}]}
        i = channel[1]
        if channel[2] == "text":
            return "chunk", {"choices": [{"index": i, "text": text, "stop_reason": None}]}
        holder = channel[2]
        d: dict = {"role": "assistant"} if holder == "message" else {}
        if len(channel) > 3:
            d["tool_calls"] = [{"index": channel[4], "function": {"arguments": text}}]
        else:
            d["content"] = text
        return "chunk", {"choices": [{"index": i, holder: d, "finish_reason": None}]}


#: the InvokeModel families with a dialect of their own: family → the name docs/services.md and the log use
FAMILIES = {"anthropic": "Anthropic Claude", "llama": "Meta Llama", "titan": "Amazon Titan Text",
            "mistral": "Mistral AI", "cohere": "Cohere Command", "nova": "Amazon Nova"}

DIALECTS = [BedrockConverse(), BedrockInvoke(), *(BedrockInvoke(f) for f in FAMILIES)]

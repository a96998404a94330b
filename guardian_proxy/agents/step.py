"""Agent step detection: a chat-API request in which tools are declared and the latest messages are
tool results (an e-mail, a document, a calendar entry just read) before the model's next action.

Works on the parsed JSON of the chat-API shapes chatapi recognises that declare tools (OpenAI Chat
Completions and its imitators, OpenAI Responses, Anthropic Messages, Ollama chat, Cohere v2, Gemini
`contents`, Bedrock Converse). Stated rules: tool results that are lists of
content blocks contribute their text blocks; other block types (images, files) are ignored; a tool
result that is not a string is serialised as JSON before it is split into items.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field


@dataclass
class ToolResult:
    tool: str
    text: str
    original: str | None = None  # the text as the client sent it, when the session stage pseudonymised it (stage.py)


@dataclass
class AgentStep:
    kind: str
    instruction: str  # what the user asked (all user texts, oldest first)
    tools: list[str]  # declared tool names
    results: list[ToolResult] = field(default_factory=list)  # every tool result in the history
    latest_is_tool_result: bool = False


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, dict) and isinstance(b.get("text"), str):
                parts.append(b["text"])
            elif isinstance(b, dict) and b.get("type") == "tool_result":
                parts.append(_text(b.get("content")))
            elif isinstance(b, str):
                parts.append(b)
        return "\n".join(parts)
    if content is None:
        return ""
    return json.dumps(content, ensure_ascii=False)


def _tool_names(data: dict) -> list[str]:
    names = []
    tools = data.get("tools")
    cfg = data.get("toolConfig")
    if not isinstance(tools, list) and isinstance(cfg, dict):  # Bedrock Converse
        tools = cfg.get("tools")
    for t in tools if isinstance(tools, list) else []:
        if not isinstance(t, dict):
            continue
        decls = t.get("functionDeclarations") or t.get("function_declarations")  # Gemini
        for fn in decls if isinstance(decls, list) else [
                t.get("function") if isinstance(t.get("function"), dict) else t.get("toolSpec")
                if isinstance(t.get("toolSpec"), dict) else t]:
            name = fn.get("name") if isinstance(fn, dict) else None
            if isinstance(name, str):
                names.append(name)
    return names


def _gemini(step: AgentStep, data: dict, users: list[str]) -> str | None:
    """Gemini `contents`: functionCall parts (the model's), functionResponse parts (tool results)."""
    last = None
    for c in data.get("contents") or []:
        if not isinstance(c, dict):
            continue
        parts = [p for p in c.get("parts") or [] if isinstance(p, dict)]
        for p in parts:
            fr = p.get("functionResponse") or p.get("function_response")
            if isinstance(fr, dict):
                step.results.append(ToolResult(str(fr.get("name", "tool")), _text(fr.get("response"))))
                last = "tool"
            elif isinstance(p.get("functionCall") or p.get("function_call"), dict):
                last = "assistant"
            elif isinstance(p.get("text"), str) and c.get("role", "user") == "user":
                users.append(p["text"])
                last = "user"
            elif isinstance(p.get("text"), str):
                last = "assistant"
    return last


def _converse(step: AgentStep, data: dict, users: list[str]) -> str | None:
    """Bedrock Converse `messages[].content[]` blocks: toolUse (the model's), toolResult (tool results)."""
    last, names = None, {}
    for m in data.get("messages") or []:
        if not isinstance(m, dict):
            continue
        for b in m.get("content") or []:
            if not isinstance(b, dict):
                continue
            if isinstance(b.get("toolUse"), dict):
                names[str(b["toolUse"].get("toolUseId"))] = str(b["toolUse"].get("name", "tool"))
                last = "assistant"
            elif isinstance(b.get("toolResult"), dict):
                tr = b["toolResult"]
                text = "\n".join(x["text"] if isinstance(x.get("text"), str) else _text(x.get("json"))
                                 for x in tr.get("content") or [] if isinstance(x, dict))
                step.results.append(ToolResult(names.get(str(tr.get("toolUseId")), "tool"), text))
                last = "tool"
            elif isinstance(b.get("text"), str):
                if m.get("role") == "user":
                    users.append(b["text"])
                last = m.get("role")
    return last


def detect(kind: str, data: dict) -> AgentStep | None:
    """The agent step in a chat request, or None when no tools are declared or there are no tool results."""
    if not isinstance(data, dict):
        return None
    tools = _tool_names(data)
    if not tools:
        return None
    step = AgentStep(kind=kind, instruction="", tools=tools)
    users: list[str] = []
    call_names: dict[str, str] = {}
    last_role = None
    if kind in ("gemini", "vertex_gemini"):
        last_role = _gemini(step, data, users)
    elif kind == "bedrock_converse":
        last_role = _converse(step, data, users)
    elif kind == "openai_responses":
        items = data.get("input") if isinstance(data.get("input"), list) else []
        for it in items:
            if not isinstance(it, dict):
                continue
            t = it.get("type")
            if t == "function_call":
                call_names[str(it.get("call_id"))] = str(it.get("name", "tool"))
                last_role = "assistant"
            elif t == "function_call_output":
                step.results.append(ToolResult(call_names.get(str(it.get("call_id")), "tool"), _text(it.get("output"))))
                last_role = "tool"
            elif it.get("role") == "user":
                users.append(_text(it.get("content")))
                last_role = "user"
            elif it.get("role"):
                last_role = it.get("role")
    else:
        for m in data.get("messages") or []:
            if not isinstance(m, dict):
                continue
            role = m.get("role")
            content = m.get("content")
            for tc in m.get("tool_calls") or []:  # OpenAI / Ollama
                if isinstance(tc, dict):
                    fn = tc.get("function") or {}
                    call_names[str(tc.get("id"))] = str(fn.get("name", "tool"))
            if isinstance(content, list):  # Anthropic blocks
                for b in content:
                    if isinstance(b, dict) and b.get("type") == "tool_use":
                        call_names[str(b.get("id"))] = str(b.get("name", "tool"))
                blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
                if blocks:
                    for b in blocks:
                        step.results.append(ToolResult(call_names.get(str(b.get("tool_use_id")), "tool"),
                                                       _text(b.get("content"))))
                    last_role = "tool"
                    continue
            if role == "tool":
                name = m.get("name") or call_names.get(str(m.get("tool_call_id")), "tool")
                step.results.append(ToolResult(str(name), _text(content)))
            elif role == "user":
                users.append(_text(content))
            last_role = role
    step.instruction = "\n".join(u for u in users if u)
    step.latest_is_tool_result = last_role == "tool"
    return step if step.results else None

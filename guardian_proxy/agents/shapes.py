"""Where guidance goes into a chat request, and where tool calls sit in a chat response, per API.

Injection (modes `prompt`, `cdi`, `cdi+guard`):
    openai_chat, ollama_chat   a `system` message appended after the latest tool results (prompt: prepended)
    anthropic                  appended to the top-level `system` (string or text blocks)
    openai_responses           a `developer` input item appended (or `instructions` when `input` is a string)
Tool calls in a whole (non-streamed) response, for the guard:
    openai_chat      choices[i].message.tool_calls[j].function.arguments   (JSON text)
    ollama_chat      message.tool_calls[j].function.arguments              (object)
    anthropic        content[j] of type tool_use, .input                   (object)
    openai_responses output[j] of type function_call, .arguments           (JSON text)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

PROMPT = ("Privacy: before you act, share only what the user's task needs. Do not disclose other people's "
          "sensitive information (health, legal matters, finances, relationships, sexuality, beliefs, addresses, "
          "schedules, identifiers) to recipients who have no need to know it, and ask the user when unsure.")


def inject(kind: str, data: dict, text: str, first: bool = False) -> bool:
    """Add `text` as an instruction the model reads before its next action. Returns False if the shape is unknown."""
    if kind in ("openai_chat", "ollama_chat") and isinstance(data.get("messages"), list):
        msg = {"role": "system", "content": text}
        if first:
            data["messages"].insert(0, msg)
        else:
            data["messages"].append(msg)
        return True
    if kind == "anthropic" and isinstance(data.get("messages"), list):
        system = data.get("system")
        if isinstance(system, list):
            system.append({"type": "text", "text": text})
        elif isinstance(system, str) and system:
            data["system"] = f"{system}\n\n{text}"
        else:
            data["system"] = text
        return True
    if kind == "openai_responses":
        if isinstance(data.get("input"), list):
            item = {"role": "developer", "content": text}
            if first:
                data["input"].insert(0, item)
            else:
                data["input"].append(item)
        else:
            data["instructions"] = f"{data.get('instructions') or ''}\n\n{text}".strip()
        return True
    return False


def tool_calls(kind: str, data) -> Iterator[tuple[str, str, Callable[[str], None]]]:
    """(tool name, arguments as JSON text, setter taking new JSON text) for every tool call in a response."""
    if not isinstance(data, dict):
        return
    if kind == "openai_chat":
        for ch in data.get("choices") or []:
            msg = (ch or {}).get("message") or {}
            yield from _function_calls(msg.get("tool_calls") or [])
    elif kind == "ollama_chat":
        yield from _function_calls(((data.get("message") or {}).get("tool_calls")) or [])
    elif kind == "anthropic":
        for block in data.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                def put(new: str, b=block) -> None:
                    b["input"] = json.loads(new)
                yield str(block.get("name", "tool")), json.dumps(block.get("input") or {}, ensure_ascii=False), put
    elif kind == "openai_responses":
        for item in data.get("output") or []:
            if isinstance(item, dict) and item.get("type") == "function_call":
                def put(new: str, it=item) -> None:
                    it["arguments"] = new
                yield str(item.get("name", "tool")), str(item.get("arguments") or "{}"), put


def _function_calls(calls: list) -> Iterator[tuple[str, str, Callable[[str], None]]]:
    for tc in calls:
        fn = (tc or {}).get("function") if isinstance(tc, dict) else None
        if not isinstance(fn, dict):
            continue
        args = fn.get("arguments")
        as_text = isinstance(args, str)

        def put(new: str, f=fn, text=as_text) -> None:
            f["arguments"] = new if text else json.loads(new)
        yield str(fn.get("name", "tool")), args if as_text else json.dumps(args or {}, ensure_ascii=False), put

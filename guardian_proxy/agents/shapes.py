"""Where guidance goes into a chat request, and where tool calls sit in a chat response, per API.

Injection (modes `prompt`, `cdi`, `cdi+guard`), always in the field the API takes instructions in:
    openai_chat, ollama_chat,  appended to the leading `system`/`developer` message, or a `system` message
    cohere_v2, Bedrock         inserted first (never after the tool results: Mistral's API rejects a
    message-list bodies        trailing system message, "Expected last role User or Tool")
    anthropic (also Vertex,    appended to the top-level `system` (string or text blocks)
    Bedrock)
    openai_responses           appended to `instructions`
    gemini, vertex_gemini      a part appended to `systemInstruction`
    bedrock_converse           a block appended to `system`
    cohere_v1                  appended to `preamble`
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


#: kinds whose body is an OpenAI-style message list (a leading `system` message is the instruction field)
_MESSAGE_LISTS = frozenset({"openai_chat", "ollama_chat", "cohere_v2", "bedrock_mistral", "bedrock_llama",
                            "bedrock_invoke"})
#: kinds whose body is an Anthropic Messages body (top-level `system`)
_ANTHROPIC = frozenset({"anthropic", "vertex_anthropic", "bedrock_anthropic"})


def inject(kind: str, data: dict, text: str, first: bool = False) -> bool:
    """Add `text` as an instruction the model reads before its next action, in the field the provider's API
    takes instructions in (never a trailing `system` message after the tool results: Mistral's API answers
    400 "Expected last role User or Tool", and others drop or misplace it). Returns False if the shape is
    unknown. `first` is kept for callers; the instruction field is where every mode puts it."""
    if not isinstance(data, dict):
        return False
    if kind in _ANTHROPIC and isinstance(data.get("messages"), list):
        _append_system(data, "system", text)
        return True
    if kind in _MESSAGE_LISTS and isinstance(data.get("messages"), list):
        msgs = data["messages"]
        head = msgs[0] if msgs and isinstance(msgs[0], dict) else None
        if head is not None and head.get("role") in ("system", "developer"):
            c = head.get("content")
            if isinstance(c, list):
                c.append({"type": "text", "text": text})
            elif isinstance(c, str) and c:
                head["content"] = f"{c}\n\n{text}"
            else:
                head["content"] = text
        else:
            msgs.insert(0, {"role": "system", "content": text})
        return True
    if kind == "openai_responses":
        data["instructions"] = f"{data.get('instructions') or ''}\n\n{text}".strip()
        return True
    if kind in ("gemini", "vertex_gemini") and isinstance(data.get("contents"), list):
        key = "system_instruction" if "system_instruction" in data else "systemInstruction"
        si = data.get(key)
        if isinstance(si, str):
            data[key] = {"parts": [{"text": si}, {"text": text}]}
        elif isinstance(si, dict) and isinstance(si.get("parts"), list):
            si["parts"].append({"text": text})
        else:
            data[key] = {"parts": [{"text": text}]}
        return True
    if kind == "bedrock_converse" and isinstance(data.get("messages"), list):
        system = data.get("system")
        if isinstance(system, list):
            system.append({"text": text})
        else:
            data["system"] = [{"text": text}]
        return True
    if kind == "cohere_v1" and isinstance(data.get("message"), str):
        _append_system(data, "preamble", text)
        return True
    return False


def _append_system(data: dict, key: str, text: str) -> None:
    system = data.get(key)
    if isinstance(system, list):
        system.append({"type": "text", "text": text})
    elif isinstance(system, str) and system:
        data[key] = f"{system}\n\n{text}"
    else:
        data[key] = text


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

"""Request and response shapes of LLM chat APIs.

Recognised on any host by path suffix + body shape (a JSON object; anything else is not a chat request
and goes through the general pipeline):

    openai_chat       …/chat/completions   {"messages": [...]}           tool calls, tool results, text parts
    openai_responses  …/responses          {"input": str|[...]} and/or {"instructions": str}
    anthropic         …/messages           {"messages": [...]}  + "system"; text/tool_use/tool_result blocks
    ollama_chat       …/api/chat           {"messages": [...]}
    ollama_generate   …/api/generate       {"prompt": str} + "system"

`recognise` lists every text the user, the system prompt or a tool wrote as a `Slot` with its JSON path
(`json:$.messages[3].content`, `…content[0].text`, `…tool_calls[0].function.arguments`), so the session
stage can rewrite the whole history in place. Stated rules: content parts of unknown types are analysed
when they carry a string `text`; images, audio and files are left alone; reasoning blocks (`thinking`,
`redacted_thinking`, `reasoning` items) are never analysed or changed because providers sign them.

`events` describes streamed responses: which string of an event is a delta of which text channel,
which events close a channel, and how to make a synthetic delta event (used to flush text held back
while a surrogate might still be completing across two chunks).
"""

from .events import DeltaRef, event_closes, event_deltas, response_aliases, synth_event
from .requests import KINDS, SKIP_KEYS, ChatRequest, Slot, context_hash, kind_of, recognise, set_text

__all__ = ["KINDS", "SKIP_KEYS", "ChatRequest", "DeltaRef", "Slot", "context_hash", "event_closes", "event_deltas", "kind_of",
           "recognise", "response_aliases", "set_text", "synth_event"]

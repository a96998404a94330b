"""LLM back ends behind one small interface, shared by the likelihood slow path, the adversarial
guesser and the L4/L5 rewriting. Heavy libraries (llama_cpp, transformers) are imported lazily in
`load()`. `make_backend(settings.llm)` returns None for `backend: none`.

Interface (every back end):
    name: str
    load() -> None                                   # raises ModelLoadError naming the file
    chat(messages, max_tokens, timeout) -> str       # raises BackendError
    chat_json(messages, schema, max_tokens, timeout) -> dict   # JSON-constrained; raises BackendError
"""

from __future__ import annotations

from typing import Protocol

from ..config import LLMSettings


class LLMBackend(Protocol):
    name: str

    def load(self) -> None: ...

    def chat(self, messages: list[dict], max_tokens: int = 256, timeout: float = 20.0) -> str: ...

    def chat_json(self, messages: list[dict], schema: dict, max_tokens: int = 256, timeout: float = 20.0) -> dict: ...


def make_backend(settings: LLMSettings) -> LLMBackend | None:
    if settings.backend == "none":
        return None
    raise NotImplementedError(f"LLM back end {settings.backend!r} is not available yet")

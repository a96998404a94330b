"""L4/L5 with an LLM back end (guardian_proxy.llm, `chat`): L4 asks for a minimal-edit rewrite of the L3
text (placeholders and generalizations already in place) that removes what still identifies someone; L5
asks for a paraphrase of the L4 text that keeps the request's purpose. Long fields are sent in
paragraph-aligned chunks. The detector then re-checks the LLM's output and anything it still finds is
masked with a typed tag. A back-end failure, an empty or runaway answer falls back to the deterministic
text of the same level.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..types import Span, TextField
from .generalize import tag
from .guesser import chunks
from .operators import apply_spans

log = logging.getLogger("guardian_proxy.anonymize")

PROMPTS = {
    4: ("Rewrite the text with minimal edits so that nobody can be identified from it: remove or generalize "
        "remaining names, places, employers, dates, numbers and rare details. Keep placeholders like [PERSON_1] "
        "and everything else unchanged. Output only the rewritten text."),
    5: ("Paraphrase the text so that it keeps its purpose and meaning but contains no detail that could identify "
        "a person (no names, places, organisations, dates, numbers or rare details). Keep placeholders like "
        "[PERSON_1]. Output only the paraphrase."),
}


class LLMRewriter:
    def __init__(self, backend, detect: Callable[[list[TextField]], list[Span]] | None = None,
                 max_tokens: int = 512, timeout: float = 20.0, chunk_chars: int = 2000):
        self.backend = backend
        self.detect = detect
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.chunk_chars = chunk_chars

    def _ask(self, text: str, level: int) -> str | None:
        msgs = [{"role": "system", "content": PROMPTS[level]}, {"role": "user", "content": text}]
        try:
            out = self.backend.chat(msgs, max_tokens=self.max_tokens, timeout=self.timeout)
        except Exception as e:  # noqa: BLE001 - any back-end failure falls back to the deterministic text
            log.warning("LLM rewrite failed (%s); deterministic L%d kept", type(e).__name__, level)
            return None
        out = (out or "").strip()
        if not out or len(out) > 3 * len(text) + 200:
            return None
        return out

    def rewrite(self, base: dict[str, str], level: int) -> dict[str, str]:
        """Rewrite each field's deterministic text; fields the LLM fails on keep it."""
        out = dict(base)
        for path, text in base.items():
            if len(text.split()) < 5:
                continue
            pieces = [self._ask(p, level) for p in chunks(text, self.chunk_chars)]
            if any(p is None for p in pieces):
                continue
            out[path] = self.recheck(path, "\n".join(pieces))
        return out

    def recheck(self, path: str, text: str) -> str:
        """Anything the detector still finds in the LLM's text is masked with a typed tag."""
        if self.detect is None:
            return text
        spans = [s for s in self.detect([TextField(path=path, text=text)]) if s.entity != "NARRATIVE"]
        return apply_spans(text, spans, lambda s: tag(s.entity))

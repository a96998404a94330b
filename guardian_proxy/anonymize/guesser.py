"""The adversary: given only the rewritten text (never the original), propose values for what was hidden.

`DeterministicGuesser` reads the residue (residue.py): surviving partial masks, rare capitalised tokens,
numbers, codes, dates and contact details, each with the confidence the cue deserves; and what the text still
says of its writer (self_disclosure.py: "lawyer here", "I'm 34", "being happily single"), the attribute
an adversary reads off a rewrite that kept it (cue "self"). `LLMGuesser` asks a
back end of guardian_proxy.llm (`chat_json`) for the hidden values, chunk by chunk; any back-end failure
yields no guesses (the deterministic guesser still runs). `CombinedGuesser` pools both.
"""

from __future__ import annotations

import logging

from .. import self_disclosure
from . import residue
from .verifier import Guess

log = logging.getLogger("guardian_proxy.anonymize")

SCHEMA = {
    "type": "object",
    "properties": {
        "guesses": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"value": {"type": "string"}, "confidence": {"type": "number"},
                               "type": {"type": "string"}},
                "required": ["value", "confidence"],
            },
        }
    },
    "required": ["guesses"],
}
PROMPT = ("The text below was anonymized: personal details were masked, replaced or generalized. Act as an "
          "adversary. Guess the real values of the hidden details (names, places, dates, employers, numbers, "
          "attributes of the author) from what is left. Answer JSON: {\"guesses\": [{\"value\": ..., "
          "\"confidence\": 0..1, \"type\": ...}]}. Only guesses the text supports; at most 8.")


class DeterministicGuesser:
    name = "deterministic"

    def guess(self, text: str) -> list[Guess]:
        out = [Guess(c.value, c.confidence, c.kind) for c in residue.scan(text)]
        return out + [Guess(text[s:e], score, "self") for s, e, _, score in self_disclosure.find(text)]


def chunks(text: str, size: int) -> list[str]:
    """Paragraph-aligned pieces of at most `size` characters (a longer paragraph is cut at sentence ends)."""
    out, cur = [], ""
    for para in text.split("\n"):
        while len(para) > size:
            cut = para.rfind(". ", 0, size)
            cut = cut + 1 if cut > size // 2 else size
            out.append(para[:cut])
            para = para[cut:]
        if len(cur) + len(para) + 1 > size and cur:
            out.append(cur)
            cur = ""
        cur = f"{cur}\n{para}" if cur else para
    if cur.strip():
        out.append(cur)
    return out


class LLMGuesser:
    name = "llm"

    def __init__(self, backend, max_tokens: int = 256, timeout: float = 20.0, chunk_chars: int = 3000):
        self.backend = backend
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.chunk_chars = chunk_chars

    def guess(self, text: str) -> list[Guess]:
        out: list[Guess] = []
        for piece in chunks(text, self.chunk_chars):
            msgs = [{"role": "system", "content": PROMPT}, {"role": "user", "content": piece}]
            try:
                data = self.backend.chat_json(msgs, SCHEMA, max_tokens=self.max_tokens, timeout=self.timeout)
            except Exception as e:  # noqa: BLE001 - any back-end failure means "no LLM guesses"
                log.warning("LLM guesser failed (%s); deterministic guesses only", type(e).__name__)
                return out
            for g in (data or {}).get("guesses", [])[:8]:
                try:
                    value, conf = str(g["value"]).strip(), float(g["confidence"])
                except (KeyError, TypeError, ValueError):
                    continue
                if value:
                    out.append(Guess(value, max(0.0, min(1.0, conf)), "llm"))
        return out


class CombinedGuesser:
    def __init__(self, *guessers):
        self.guessers = [g for g in guessers if g is not None]
        self.name = "+".join(g.name for g in self.guessers)

    def guess(self, text: str) -> list[Guess]:
        return [g for guesser in self.guessers for g in guesser.guess(text)]

"""Guided JSON decoding for flat object schemas, shared by the llama.cpp and transformers back ends.

For a schema whose properties are numbers, integers, strings, booleans or enums, the object is built
token by token: keys and punctuation are written by us, each value is decoded greedily from the tokens
allowed at that point (digits for a number, with a [0, 1] range kept as a valid prefix; no quote,
backslash or control character inside a string) until the model's own best token would end the value.
The answer is therefore always well-formed JSON of the schema's shape; `jsonout.validate` still checks
it. This costs one numpy argmax per token, where llama.cpp's grammar sampler tests the grammar against
the whole vocabulary (262k tokens for Gemma 3: seconds per token on a small CPU).

A `Stepper` feeds tokens to a model and returns the next-token logits as a 1-D numpy array.
"""

from __future__ import annotations

import json
import re
import time
from typing import Protocol

import numpy as np

from ..errors import BackendError

_NUM_PREFIX = re.compile(r"-?\d*(\.\d*)?([eE][-+]?\d*)?")
_INT_PREFIX = re.compile(r"-?\d*")
_UNIT_PREFIX = re.compile(r"(0(\.\d{0,6})?|1(\.0{0,6})?)")
_NUM_CHARS = frozenset("0123456789.-+eE")


class Stepper(Protocol):
    vocab: list[str]  # decoded text of every token id
    eos: set[int]

    def feed_text(self, text: str) -> np.ndarray: ...

    def feed_token(self, token: int) -> np.ndarray: ...


def is_flat(schema: dict) -> bool:
    props = schema.get("properties")
    return (schema.get("type") == "object" and isinstance(props, dict) and bool(props)
            and all(("enum" in p) or p.get("type") in ("number", "integer", "string", "boolean")
                    for p in props.values()))


class TokenClasses:
    """Which token ids may appear inside a number and inside a string (computed once per vocabulary)."""

    def __init__(self, vocab: list[str]):
        self.number = np.array([i for i, s in enumerate(vocab) if s and set(s) <= _NUM_CHARS], dtype=np.int64)
        self.string = np.array([i for i, s in enumerate(vocab)
                                if s and '"' not in s and "\\" not in s and all(c >= " " for c in s)], dtype=np.int64)
        self.number_set = frozenset(self.number.tolist())
        self.string_set = frozenset(self.string.tolist())


def _decode_value(step: Stepper, logits: np.ndarray, allowed: np.ndarray, allowed_set: frozenset, ok,
                  max_chars: int, budget: list[int], deadline: float) -> tuple[str, np.ndarray]:
    out = ""
    while budget[0] > 0 and len(out) < max_chars and len(allowed):
        if time.monotonic() > deadline:
            raise BackendError("timeout during guided JSON decoding")
        best_any = int(np.argmax(logits))
        if out and (best_any in step.eos or best_any not in allowed_set):
            break  # the model's own choice would close the value
        sub = logits[allowed]
        top = allowed[np.argsort(-sub)[:64]]
        nxt = next((int(j) for j in top if ok(out + step.vocab[j]) and len(out + step.vocab[j]) <= max_chars), None)
        if nxt is None:
            break
        out += step.vocab[nxt]
        budget[0] -= 1
        logits = step.feed_token(nxt)
    return out, logits


def first_token_score(step: Stepper, logits: np.ndarray, text: str, tokenize) -> float:
    ids = tokenize(text)
    return float(logits[ids[0]]) if ids else float("-inf")


def guided_object(step: Stepper, classes: TokenClasses, schema: dict, logits: np.ndarray, max_tokens: int,
                  deadline: float, tokenize) -> str:
    """Build the JSON object; `logits` are those after the prompt; `tokenize(text) -> list[int]`."""
    budget = [max_tokens]
    parts: list[str] = []
    for i, (key, sub) in enumerate(schema["properties"].items()):
        prefix = ("{" if i == 0 else ", ") + json.dumps(key) + ": "
        t = sub.get("type")
        if "enum" in sub or t == "boolean":
            logits = step.feed_text(prefix)
            choices = sub["enum"] if "enum" in sub else [True, False]
            value = json.dumps(max(choices, key=lambda v: first_token_score(step, logits, json.dumps(v), tokenize)))
            step.feed_text(value)
        elif t in ("number", "integer"):
            logits = step.feed_text(prefix)
            unit = sub.get("minimum") == 0 and sub.get("maximum") == 1
            pat = _INT_PREFIX if t == "integer" else _UNIT_PREFIX if unit else _NUM_PREFIX
            raw, logits = _decode_value(step, logits, classes.number, classes.number_set,
                                        lambda s, pat=pat: bool(pat.fullmatch(s)), 24, budget, deadline)
            value = raw.rstrip(".eE+-") or "0"
        else:
            logits = step.feed_text(prefix + '"')
            raw, logits = _decode_value(step, logits, classes.string, classes.string_set, lambda s: True,
                                        int(sub.get("maxLength", 200)), budget, deadline)
            value = json.dumps(raw.strip())
            step.feed_text('"')
        parts.append(prefix + value)
        if time.monotonic() > deadline:
            raise BackendError("timeout during guided JSON decoding")
    return "".join(parts) + "}"

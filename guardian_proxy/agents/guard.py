"""The guard: inspect a tool call the model proposes and remove what leaks non-shareable items.

Every string argument is split into sentences. A sentence is removed when it (a) repeats a withheld
item the agent observed (lexical containment ≥ `MATCH` either way, at least `MIN_SHARED` shared content
words) or (b) is new text (not a copy of a shareable item: under `COPY` of its words in one) that the
norms table classifies as withheld for this recipient (a paraphrase, or something the agent made up). Keys
that address the message (`to`, `recipient`, `channel` …) are never rewritten. When nothing of
substance is left the call is reported as blocked (the caller replaces it with a refusal).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .instructor import Guidance, Instructor
from .items import Item, content_words, sentences

_SPACES = re.compile(r"[ \t]{2,}")
_BLANKS = re.compile(r"\n\s*\n+")
MATCH = 0.6
MIN_SHARED = 3
COPY = 0.8
_ADDRESS_KEYS = re.compile(r"^(to|cc|bcc|recipients?|recipient_ids?|channel|user_ids?|emails?|email_address|"
                           r"receiver|target|chat_id|conversation_id|thread_id|subject_id|id)$", re.I)


@dataclass
class GuardResult:
    arguments: str  # JSON text of the (possibly rewritten) arguments
    removed: int  # sentences removed
    kept: int
    blocked: bool
    types: list[str]


def _leaks(words: set[str], guidance: Guidance) -> bool:
    if len(words) < 2:
        return False
    for j in guidance.withhold:
        shared = len(words & j.words)
        if shared >= MIN_SHARED and (shared / max(1, len(j.words)) >= MATCH or shared / len(words) >= MATCH):
            return True
    return False


def _copies(words: set[str], guidance: Guidance) -> bool:
    return bool(words) and any(len(words & j.words) / len(words) >= COPY for j in guidance.share)


class Guard:
    def __init__(self, instructor: Instructor):
        self.instructor = instructor

    def check_text(self, text: str, guidance: Guidance) -> tuple[str, int, int, set[str]]:
        kept, removed, types = 0, 0, set()
        judged = self.instructor.judge([Item(s, "outgoing", i) for i, s in enumerate(sentences(text))],
                                       guidance.relationship)
        out = text
        for j in judged:
            if _leaks(j.words, guidance) or (j.withheld and not _copies(j.words, guidance)):
                removed += 1
                types.update(j.types or ["observed_withheld"])
                out = out.replace(j.item.text, "", 1)  # cut in place: the rest keeps its layout
            else:
                kept += 1
        if removed:
            out = _BLANKS.sub("\n", _SPACES.sub(" ", out)).strip()
        return out, removed, kept, types

    def check_call(self, tool: str, arguments: str, guidance: Guidance) -> GuardResult:
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            args = arguments  # malformed JSON arguments: treated as one text (stated rule)
        removed = kept = 0
        types: set[str] = set()

        def walk(v, key=None, depth=0):
            nonlocal removed, kept
            if depth > 32:
                return v
            if isinstance(v, dict):
                return {k: walk(x, k, depth + 1) for k, x in v.items()}
            if isinstance(v, list):
                return [walk(x, key, depth + 1) for x in v]
            if isinstance(v, str) and not (key and _ADDRESS_KEYS.match(str(key))) and content_words(v):
                new, r, k, t = self.check_text(v, guidance)
                removed += r
                kept += k
                types.update(t)
                return new if r else v
            return v

        new_args = walk(args)
        if not removed:  # nothing cut: the arguments leave exactly as the model wrote them (spacing, key order)
            return GuardResult(arguments, 0, kept, blocked=False, types=[])
        out = json.dumps(new_args, ensure_ascii=False) if not isinstance(new_args, str) else new_args
        return GuardResult(out, removed, kept, blocked=removed > 0 and kept == 0, types=sorted(types))

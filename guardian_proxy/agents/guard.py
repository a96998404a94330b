"""The guard: inspect a tool call the model proposes and withhold, item by item, what leaks non-shareable items.

Every string argument is split into items (sentences; a line of a list is one). Each item is traced to its
source among the items the agent observed: the observed item that holds the largest share of its content
words. An item that is a copy of a shareable item (≥ `COPY` of its words in one) and no closer to a
withheld one is the shareable item and goes verbatim, whatever words it shares with a withheld record (the
roster next to a friend's diagnosis). Any other item is removed when it (a) repeats a withheld item the
agent observed (lexical containment ≥ `MATCH` either way, at least `MIN_SHARED` shared content words) or
(b) is new text that the norms table classifies as withheld for this recipient (a paraphrase, or
something the agent made up). A removed item that joins several clauses (`;`, or `, and`) keeps those of
its clauses that are each a copy of a shareable item. What is cut leaves no empty list marker behind; the
arguments stay valid JSON of the same shape. Keys that address the message (`to`, `recipient`, `channel`
…) are never rewritten. When nothing of substance is left the call is reported as blocked.

Who the call goes to (`recipients`: the values of its `to`, `cc`, `bcc`, `recipient(s)`, `channel` … keys, one
recipient per address) decides what is withheld: the items that are the recipients' own information
(`Guidance.to`, by `norms.returns_to`: a customer's ticket quoted back to that customer) are shareable in it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..placeholders import EMAIL
from .instructor import Guidance, Instructor
from .items import Item, content_words, sentences
from .norms import identities

_SPACES = re.compile(r"[ \t]{2,}")
_CUT = "\x00"
#: a line left with nothing but what was cut, a list marker or punctuation goes whole (its line break too)
_EMPTIED = re.compile(r"(?m)^[ \t]*(?:(?:\d{1,3}[.)]|[-*\u2022+>]|#{1,6})[ \t]*)?(?:\x00[ \t,;:.]*)+\n?")
# a match that begins with white space begins where its run begins, never inside it (linear on long white space)
_CLAUSES = re.compile(r"(?<!\s)\s+;\s*|;\s*|(?<!\s)\s+(?:and also|as well as)\s+|,\s+(?:and|but|while|plus)\s+")
_BLANKS = re.compile(r"\n\s*\n+")
MATCH = 0.6
MIN_SHARED = 3
COPY = 0.8
_ADDRESS_KEYS = re.compile(r"^(to|cc|bcc|recipients?|recipient_ids?|channel|user_ids?|emails?|email_address|"
                           r"receiver|target|chat_id|conversation_id|thread_id|subject_id|id)$", re.I)
#: the keys that name who receives the message (not `id`, `thread_id`, `subject_id`: they name a thing; not a bare
#: `email`: a call that files something under a customer's address does not send it to them)
_RECIPIENT_KEYS = re.compile(r"^(to|cc|bcc|recipients?|recipient_ids?|channel|user_ids?|receiver|target|chat_id|"
                             r"conversation_id|(?:to|recipient|receiver)_(?:emails?|addresse?s?|names?))$", re.I)


@dataclass
class GuardResult:
    arguments: str  # JSON text of the (possibly rewritten) arguments
    removed: int  # sentences removed
    kept: int
    blocked: bool
    types: list[str]


def _leaks(words: set[str], guidance: Guidance, holds_only: bool = False) -> bool:
    """The item repeats a withheld item: it holds ≥ `MATCH` of one's content words or (unless `holds_only`) ≥ `MATCH`
    of its own words are in one, with at least `MIN_SHARED` shared; or it is one, however short (a subject line)."""
    if words and any(words == j.words for j in guidance.withhold):
        return True
    if len(words) < 2:
        return False
    for j in guidance.withhold:
        shared = len(words & j.words)
        if shared >= MIN_SHARED and (shared / max(1, len(j.words)) >= MATCH
                                     or (not holds_only and shared / len(words) >= MATCH)):
            return True
    return False


def _cover(words: set[str], judged) -> float:
    """The largest share of `words` found in one of the judged items."""
    return max((len(words & j.words) / len(words) for j in judged), default=0.0) if words else 0.0


def _copies(words: set[str], guidance: Guidance) -> bool:
    return _cover(words, guidance.share) >= COPY


def _shareable_copy(words: set[str], guidance: Guidance) -> bool:
    """The item is a shareable item the agent observed (its source), not closer to a withheld one."""
    share = _cover(words, guidance.share)
    return len(words) >= 2 and share >= COPY and share > _cover(words, guidance.withhold)


def _strings(v, out: list[str], depth: int = 0) -> list[str]:
    if depth <= 8:
        if isinstance(v, str) and v.strip():
            out.append(v)
        elif isinstance(v, dict):
            for x in v.values():
                _strings(x, out, depth + 1)
        elif isinstance(v, list):
            for x in v:
                _strings(x, out, depth + 1)
    return out


def _named(value) -> list[frozenset[str]]:
    """The recipients one address value names: a string holding several addresses ("a@x, b@y") is one per address;
    a list, one per element; an object ({"email": …, "name": …}), one."""
    if isinstance(value, list):
        return [r for v in value for r in _named(v)]
    if isinstance(value, dict):
        return [frozenset().union(*(identities(t) for t in _strings(value, [])))]
    if not isinstance(value, str) or not value.strip():
        return []
    if len(EMAIL.findall(value)) > 1:
        return [identities(part) for part in re.split(r"[,;]", value) if part.strip()]
    return [identities(value)]


def recipients(args, depth: int = 0) -> list[frozenset[str]]:
    """Whom a tool call's arguments address: the `norms.identities` of each recipient its address keys name."""
    out: list[frozenset[str]] = []
    if depth > 16:
        return out
    if isinstance(args, dict):
        for k, v in args.items():
            if _RECIPIENT_KEYS.match(str(k)):
                out.extend(_named(v))
            elif isinstance(v, dict | list):
                out.extend(recipients(v, depth + 1))
    elif isinstance(args, list):
        for v in args:
            out.extend(recipients(v, depth + 1))
    return out


class Guard:
    def __init__(self, instructor: Instructor):
        self.instructor = instructor

    def _withheld(self, words: set[str], judged_types: list[str], guidance: Guidance) -> bool:
        if _shareable_copy(words, guidance):  # its source is shareable: only a withheld item it holds stops it
            return _leaks(words, guidance, holds_only=True)
        return _leaks(words, guidance) or (bool(judged_types) and not _copies(words, guidance))

    def check_text(self, text: str, guidance: Guidance) -> tuple[str, int, int, set[str]]:
        kept, removed, types = 0, 0, set()
        judged = self.instructor.judge([Item(s, "outgoing", i) for i, s in enumerate(sentences(text))],
                                       guidance.relationship)
        out = text
        for j in judged:
            if not self._withheld(j.words, j.types, guidance):
                kept += 1
                continue
            removed += 1
            types.update(j.types or ["observed_withheld"])
            out = out.replace(j.item.text, self._clauses_kept(j.item.text, guidance) or _CUT, 1)  # in place
        if removed:
            out = _SPACES.sub(" ", _EMPTIED.sub("", out).replace(_CUT, ""))
            out = _BLANKS.sub("\n\n", out).strip()
        return out, removed, kept, types

    @staticmethod
    def _clauses_kept(sentence: str, guidance: Guidance) -> str:
        """The clauses of a removed sentence that are each a copy of a shareable item ("" when none is)."""
        parts = [p for p in _CLAUSES.split(sentence) if p and p.strip()]
        if len(parts) < 2:
            return ""
        keep = [p.strip().rstrip(".") for p in parts if _shareable_copy(content_words(p), guidance)
                and not _leaks(content_words(p), guidance)]
        return ("; ".join(keep) + ".") if keep else ""

    def check_call(self, tool: str, arguments: str, guidance: Guidance) -> GuardResult:
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            args = arguments  # malformed JSON arguments: treated as one text (stated rule)
        removed = kept = 0
        types: set[str] = set()
        guidance = guidance.to(recipients(args))  # what is theirs goes back to them

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

"""De-masking: surrogates in a model's reply → the real values, in whole strings and in streamed text.

Matching is word-bounded and longest-first. Full surrogates match case-insensitively and the real value
is rendered in the case the model used (ALEX SMITH → JOHN DOE, alex smith → john doe); name parts
("Smith" alone, "Mr. Smith's") match only as written or upper-cased, so an ordinary word is never taken
for a surrogate. Possessives follow from the word boundary ("Alex Smith's" → "John Doe's"). In JSON text
(tool-call arguments) the real value is JSON-escaped. A string that is no known surrogate is never
guessed at: it passes unchanged.

Streams: `Channel.feed` returns what can be shown now and holds back the shortest tail that could still
grow into a surrogate (at most the longest surrogate's length), so a surrogate split across two chunks is
still replaced; `flush` releases the tail when the channel ends.
"""

from __future__ import annotations

import json
import re


def _render(real: str, seen: str, surrogate: str) -> str:
    letters = [c for c in seen if c.isalpha()]
    if letters and seen.isupper() and not surrogate.isupper():
        return real.upper()
    if letters and seen.islower() and not surrogate.islower():
        return real.lower()
    return real


#: a JSON key that names a person's age
_AGE_KEY = re.compile(r"^(?:age|\w*_age|\w*[a-z]Age)$", re.I)
_AGE_MEMBER = re.compile(r'("(?:age|\w*_age|\w*[a-z]Age)"\s*:\s*)(\d{1,3})(?![\d.])', re.I)


class Demasker:
    def __init__(self, pairs: list[tuple[str, str, bool]], ages: dict[int, int] | None = None):
        """pairs: (surrogate, real, case_insensitive); ages: the stand-in age → the real one, for a bare number
        under an age key of the reply's JSON (a tool call's `"age": 39`), which no text pair can match."""
        self.ages = dict(ages or {})
        self.ci: dict[str, tuple[str, str]] = {}
        self.cs: dict[str, tuple[str, str]] = {}
        for sur, real, ci in pairs:
            if not sur or sur == real:
                continue
            if ci:
                self.ci.setdefault(sur.lower(), (sur, real))
            else:
                self.cs.setdefault(sur, (sur, real))
                self.cs.setdefault(sur.upper(), (sur, real))
        alts = [(s, True) for s in self.ci] + [(s, False) for s in self.cs]
        alts.sort(key=lambda a: -len(a[0]))
        self.maxlen = max((len(s) for s, _ in alts), default=0)
        self.prefixes = {s.lower()[:n] for s, _ in alts for n in range(1, len(s) + 1)}
        body = "|".join(f"(?i:{re.escape(s)})" if ci else re.escape(s) for s, ci in alts)
        self.rx = re.compile(rf"(?<!\w)(?:{body})(?!\w)") if alts else None

    def __bool__(self) -> bool:
        return self.rx is not None

    def _real(self, seen: str, json_text: bool) -> str:
        hit = self.cs.get(seen) or self.ci.get(seen.lower())
        if hit is None:
            return seen
        out = _render(hit[1], seen, hit[0])
        return json.dumps(out, ensure_ascii=False)[1:-1] if json_text else out

    def age(self, key: str, value) -> int | None:
        """The real age for a stand-in age number held under an age key (`age`, `user_age`, `personAge`), or None."""
        if self.ages and isinstance(value, int) and not isinstance(value, bool) and _AGE_KEY.search(key):
            return self.ages.get(value)
        return None

    def full(self, text: str, json_text: bool = False, ctx: str = "") -> str:
        """`text` with every surrogate replaced; `ctx` is the text just before it (word-boundary context)."""
        if self.rx is None or not text:
            return text
        if json_text and self.ages and not ctx:  # tool-call arguments as a JSON text: `"age": 39`
            text = _AGE_MEMBER.sub(lambda m: m.group(1) + str(self.ages.get(int(m.group(2)), m.group(2))), text)
        if not ctx:
            return self.rx.sub(lambda m: self._real(m.group(0), json_text), text)
        scan, out, pos = ctx + text, [], len(ctx)
        for m in self.rx.finditer(scan, len(ctx)):
            out += [scan[pos:m.start()], self._real(m.group(0), json_text)]
            pos = m.end()
        out.append(scan[pos:])
        return "".join(out)

    def channel(self, json_text: bool = False) -> Channel:
        return Channel(self, json_text)


class Channel:
    """One streamed text (a choice's content, a content block, a tool call's arguments)."""

    def __init__(self, dm: Demasker, json_text: bool):
        self.dm = dm
        self.json_text = json_text
        self.held = ""
        self.prev = ""  # last character already released (word-boundary context)

    def feed(self, delta: str) -> str:
        dm = self.dm
        buf = self.held + delta
        if dm.rx is None or not buf:
            self.held = ""
            return buf
        scan = self.prev + buf
        off = len(self.prev)
        hold = self._hold(scan, off)
        out: list[str] = []
        pos = off
        for m in dm.rx.finditer(scan, off):
            if m.start() >= hold:  # it may still grow into a longer surrogate or a longer word
                break
            out += [scan[pos:m.start()], dm._real(m.group(0), self.json_text)]
            pos = m.end()
            if pos > hold:
                hold = self._hold(scan, pos)
        out.append(scan[pos:hold])
        self.held = scan[hold:]
        released = "".join(out)
        if released:
            self.prev = released[-1]
        return released

    def _hold(self, scan: str, start: int) -> int:
        """The earliest position from which the rest could still be the start of a surrogate."""
        for p in range(max(start, len(scan) - self.dm.maxlen), len(scan)):
            if scan[p:].lower() in self.dm.prefixes:
                return p
        return len(scan)

    def flush(self) -> str:
        if not self.held:
            return ""
        text = self.dm.full(self.held, self.json_text, self.prev)
        self.held = ""
        return text

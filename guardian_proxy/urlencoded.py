"""URL-encoded values written inside a text: a query string or a form body pasted into a prompt, a webhook's payload
("From=%2B447946218357&Body=Hi+its+Nadia+Sharif+…"), a link in a message. A value is the same value whatever
encoding carried it, so detection reads such text decoded (`view`): each decoded character keeps the offset where
its encoding began, so that a value found in the view is located in the text as sent. A stand-in written back into an
encoded value is encoded the same way (`encode`), so the string stays a valid query or form body.

Only the values of a run of `key=value` pairs are decoded, and only those that hold an encoding ('+' or '%XX'): a run
is two or more pairs joined by '&', or one pair after '?'. Keys are left as they are (they name fields, not people).
Every pattern is bounded and possessive (linear on the security suite's 100 KB probe)."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from functools import lru_cache
from urllib.parse import quote_plus

#: one key=value pair of a query or form body; the value's characters exclude '&' and '=' so pairs never overlap
_PAIR = re.compile(r"([\w.~*\[\]-]{1,64}+)=([\w.~%+*!'(),:;/@$\[\]-]{0,8192}+)")
#: a run of pairs: "a=1&b=2" or "?q=1"
_RUN = re.compile(r"(?<![\w.~%+*=&\[\]-])(\??)[\w.~*\[\]-]{1,64}+=[\w.~%+*!'(),:;/@$\[\]-]{0,8192}+"
                  r"(?:&(?:amp;)?[\w.~*\[\]-]{1,64}+=[\w.~%+*!'(),:;/@$\[\]-]{0,8192}+){0,512}+")
_ENCODED = re.compile(r"\+|%[0-9A-Fa-f]{2}")


@lru_cache(maxsize=64)
def encoded_values(text: str) -> tuple[tuple[int, int], ...]:
    """The spans of the values in `text` that a query or form encoding wrote ('+' for a space, '%XX' for a byte)."""
    if "=" not in text or not _ENCODED.search(text):
        return ()
    out = []
    for run in _RUN.finditer(text):
        if not run.group(1) and "&" not in run.group(0) and not (run.start() and text[run.start() - 1] == "?"):
            continue  # one "a=b" alone is an assignment, not a query
        for m in _PAIR.finditer(run.group(0)):
            if _ENCODED.search(m.group(2)):
                out.append((run.start() + m.start(2), run.start() + m.end(2)))
    return tuple(out)


def _utf8_len(lead: int) -> int:
    return 2 if 0xC0 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else 4 if 0xF0 <= lead < 0xF8 else 1


def _decode(raw: str, base: int, chars: list[str], offsets: list[int]) -> None:
    """Append the decoded characters of `raw` (at `base` in the text) and where each one's encoding begins."""
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "+":
            chars.append(" ")
            offsets.append(base + i)
            i += 1
            continue
        if c != "%" or not _ENCODED.fullmatch(raw[i:i + 3]):
            chars.append(c)
            offsets.append(base + i)
            i += 1
            continue
        starts, buf = [], bytearray()
        while i + 3 <= len(raw) and raw[i] == "%" and _ENCODED.fullmatch(raw[i:i + 3]):
            starts.append(i)
            buf.append(int(raw[i + 1:i + 3], 16))
            i += 3
        k = 0
        while k < len(buf):
            n = _utf8_len(buf[k])
            try:
                ch = bytes(buf[k:k + n]).decode("utf-8")
            except UnicodeDecodeError:
                ch, n = "\ufffd", 1
            chars.append(ch)
            offsets.append(base + starts[k])
            k += n


@lru_cache(maxsize=64)
def view(text: str) -> tuple[str, tuple[int, ...]] | None:
    """`text` with its encoded values decoded, and for each character of it (and its end) the offset in `text`
    where that character's encoding begins; None when nothing in `text` is encoded. A span (s, e) of the view is
    `text[offsets[s]:offsets[e]]`. The last value of a run is followed by a line's end in the view (its decoded
    spaces would join it to the words after it); the break takes the offset of the character after the value."""
    spans = encoded_values(text)
    if not spans:
        return None
    chars: list[str] = []
    offsets: list[int] = []
    pos = 0
    for a, b in spans:
        chars.append(text[pos:a])  # outside a value: each character as it is
        offsets.extend(range(pos, a))
        _decode(text[a:b], a, chars, offsets)
        if b < len(text) and text[b] != "&":  # the run ends: a line's end keeps the value apart from the prose after it
            chars.append("\n")
            offsets.append(b)
        pos = b
    chars.append(text[pos:])
    offsets.extend(range(pos, len(text)))
    offsets.append(len(text))
    return "".join(chars), tuple(offsets)


def in_view(offsets: tuple[int, ...], start: int, end: int) -> tuple[int, int] | None:
    """Where `start`..`end` of the text as sent stands in its view (`view`'s offsets), or None when it does not begin
    and end on a character's boundary there; the break after a run's last value is no part of it."""
    a, b = bisect_right(offsets, start) - 1, bisect_left(offsets, end)
    return (a, b) if a >= 0 and b < len(offsets) and offsets[a] == start and offsets[b] == end else None


def inside(text: str, start: int, end: int) -> bool:
    """Whether `start`..`end` lies within one encoded value of `text`."""
    return any(a <= start and end <= b for a, b in encoded_values(text))


def encode(value: str) -> str:
    """A stand-in as a form encoding writes it ("Chris Hernandez" → "Chris+Hernandez")."""
    return quote_plus(value, safe="")

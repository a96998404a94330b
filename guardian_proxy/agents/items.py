"""Tool results → information items (sentences with the record they came from), and the lexical
containment test the guard uses to recognise an item inside an outgoing message.

Stated rules: a tool result that is JSON is walked; string values under identifier-like keys (`id`,
`*_id`, timestamps, URLs) are not information items; every other string is split into sentences. A
tool result that is not JSON is split into sentences as text. A text that is a *listing* (an inbox
printed as text, search hits one after another) is cut into blocks first (`blocks`), one per source: a
rule line (`---`, `===`) or a repeated field (a second `From:`, `Subject:`, `Title:`, also after a list marker:
`2. From: …`) starts a new block, and each block is a source of its own (its record path ends in `§<n>`).
Blank lines, list items and headings alone do not: the bullet points of one note and the paragraphs of one
letter are parts of one source, judged together. Binary-looking or huge results are cut
at `MAX_CHARS` (the rest is not analysed, and the guard treats unseen content conservatively).

Who a record is from or about (`Item.parties`, `parties_of`): the string values of a JSON object's keys that name its
sender or its data subject (`from`, `sender`, `author`, `requester`, `customer`, `client`, `patient`, `contact`,
`name`, `email` …, also with a `_name`/`_email`/`_address` tail or in camelCase; an object under such a key gives its
strings), for every string inside that object, nested ones included; in a listing, the `From: …`, `Customer: …` lines
of a block, for that block. The norms decide what that means (`norms.returns_to`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

MAX_CHARS = 200_000
_ABBREV = re.compile(r"\b(Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|Inc|Ltd|Co|vs|etc|e\.g|i\.e|No|Mt|Ave|Rd|Blvd|Apt)\.", re.I)
#: a sentence ends at . ! ? followed by a space or the end; a dot inside a word (an e-mail address, a host name,
#: a URL, 3.5) does not end one
_SENT = re.compile(r"(?:[^.!?\n]|[.!?](?=\S))+(?:[.!?]+(?=\s|$)|\n|$)")
_WORD = re.compile(r"[a-z0-9][a-z0-9'+\-]*", re.I)
_MARK = re.compile(r"^\s{0,3}(?:\d{1,3}[.)]|[-*\u2022+]|#{1,6})\s+(?=\S)")
_RULE = re.compile(r"^\s*(?:[-=*_~]\s*){3,}$")
_FIELD = re.compile(r"^([A-Za-z][\w'. -]{0,30}?)\s*:\s+\S")
_SKIP_KEY = re.compile(r"(^|_)(id|ids|uuid|time|timestamp|date|url|link|href|token|hash)$", re.I)
#: keys that name who sent a record or whom it is about (after camelCase → snake_case)
_PARTY_KEY = re.compile(r"^(?:from|sender|author|requester|reporter|submitter|customer|client|patient|member|contact|"
                        r"name|full_name|display_name|reply_to|email|email_address)"
                        r"(?:_(?:name|full_name|email|email_address|address))?$", re.I)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
STOP = frozenset("""a an the and or but if of at by for with about against between into through during before after
above below to from up down in out on off over under again further then once here there when where why how all any
both each few more most other some such no nor not only own same so than too very can will just don should now is are
was were be been being have has had having do does did doing i me my we our you your he him his she her it its they
them their what which who whom this that these those am would could also as""".split())


@dataclass
class Item:
    text: str
    record: str  # where it came from: "<tool>#<n>:<json path>"
    index: int  # position among the items of its record (for pronoun carry-over)
    parties: tuple[str, ...] = ()  # who the record is from or about, as the text names them (`parties_of`)


def content_words(text: str) -> set[str]:
    return {w.lower().strip("'") for w in _WORD.findall(text) if len(w) > 2 and w.lower() not in STOP}


def containment(item: str | set[str], text_words: set[str]) -> float:
    """Share of the item's content words that appear in the text (0..1)."""
    words = content_words(item) if isinstance(item, str) else item
    if not words:
        return 0.0
    return len(words & text_words) / len(words)


def sentences(text: str) -> list[str]:
    """Sentences of a text; abbreviations (Mr., Dr., St., Inc. …) and dots inside e-mail addresses, host names,
    URLs and numbers do not end one."""
    masked = _ABBREV.sub(lambda m: m.group(0)[:-1] + "\x00", text)
    return [s.strip().replace("\x00", ".") for s in _SENT.findall(masked) if s.strip() and len(content_words(s)) >= 1]


def blocks(text: str) -> list[str]:
    """The blocks of a listing (see the module's stated rules); a text with no listing is one block."""
    out: list[str] = []
    cur: list[str] = []
    keys: set[str] = set()

    def flush():
        if any(x.strip() for x in cur):
            out.append("\n".join(cur).strip())
        cur.clear()
        keys.clear()

    for line in text.splitlines():
        if _RULE.match(line):
            flush()
            continue
        mark = _MARK.match(line)
        field = _FIELD.match(line[mark.end():] if mark else line.lstrip())
        key = field.group(1).strip().lower() if field else None
        if cur and any(x.strip() for x in cur) and key is not None and key in keys:
            flush()
        if key is not None:
            keys.add(key)
        cur.append(line)
    flush()
    return out or [text]


def party_key(key) -> bool:
    """The key names a record's sender or its data subject (`from`, `customerEmail`, `patient_name` …)."""
    return bool(_PARTY_KEY.match(_CAMEL.sub("_", str(key)).lower()))


def _strings(value, out: list[str], depth: int = 0) -> None:
    if depth > 4:
        return
    if isinstance(value, str) and value.strip():
        out.append(" ".join(value.split())[:200])
    elif isinstance(value, dict):
        for v in value.values():
            _strings(v, out, depth + 1)
    elif isinstance(value, list):
        for v in value[:20]:
            _strings(v, out, depth + 1)


def _walk(value, path: str, out: list[tuple[str, str, tuple[str, ...]]], depth: int = 0,
          parties: tuple[str, ...] = ()) -> None:
    if depth > 32:
        return
    if isinstance(value, dict):
        own: list[str] = []
        for k, v in value.items():
            if party_key(k):
                _strings(v, own)
        inner = tuple(dict.fromkeys((*parties, *own)))
        for k, v in value.items():
            if isinstance(v, str) and _SKIP_KEY.search(str(k)):
                continue
            _walk(v, f"{path}.{k}", out, depth + 1, inner)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _walk(v, f"{path}[{i}]", out, depth + 1, parties)
    elif isinstance(value, str) and value.strip():
        if value.strip()[:1] in "{[":
            try:
                _walk(json.loads(value), path, out, depth + 1, parties)
                return
            except ValueError:
                pass
        out.append((path, value, parties))


def _block_parties(block: str) -> tuple[str, ...]:
    """The `From: …` (`Sender:`, `Customer:`, `Name:` …) lines of a block of a listing."""
    out: list[str] = []
    for line in block.splitlines():
        mark = _MARK.match(line)
        line = line[mark.end():] if mark else line.strip()
        key, colon, value = line.partition(":")
        if colon and value.strip() and len(key) <= 30 and party_key(key.strip().replace(" ", "_")):
            out.append(" ".join(value.split())[:200])
    return tuple(dict.fromkeys(out))


def _sources(tool: str, result: str, split: bool) -> list[tuple[str, str, tuple[str, ...]]]:
    """(record path, text, parties) of each source of a tool result: a JSON leaf, or a block of a listing."""
    result = result[:MAX_CHARS]
    leaves: list[tuple[str, str, tuple[str, ...]]] = []
    try:
        _walk(json.loads(result), "$", leaves)
    except (ValueError, RecursionError):
        leaves = [("$", result, ())]
    out = []
    for path, text, parties in leaves:
        bs = blocks(text) if split and "\n" in text else [text]
        for b, block in enumerate(bs):
            where = f"{tool}:{path}§{b}" if len(bs) > 1 else f"{tool}:{path}"
            # a block of a listing names its own sender (`From: …`); a listing not cut into blocks names several
            out.append((where, block, (_block_parties(block) if len(bs) > 1 or split and "\n" in block else ())
                        or parties))
    return out


def parties_of(tool: str, result: str, split: bool = True) -> dict[str, tuple[str, ...]]:
    """Record path (`Item.record`) -> who that source is from or about (see the module's stated rules)."""
    return {where: parties for where, _, parties in _sources(tool, result, split) if parties}


def items_of(tool: str, result: str, split: bool = True) -> list[Item]:
    """The information items of a tool result (`split=False`: a listing is not cut into blocks)."""
    out: list[Item] = []
    for where, block, parties in _sources(tool, result, split):
        for i, s in enumerate(sentences(block)):
            out.append(Item(text=s, record=where, index=i, parties=parties))
    return out

"""A policy document (HTML, Markdown or plain text) → normalised plain text cut into blocks.

HTML loses scripts, styles, navigation, headers, footers, forms and hidden parts; Markdown loses its
markup (links keep their text). Blocks are headings, list items and paragraphs, each with its offsets
in `Document.text`, the normalised text every statement offset refers to. Enormous input is cut at
`MAX_INPUT_CHARS` (raw) and `MAX_TEXT_CHARS` (normalised) and flagged `truncated`.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

MAX_INPUT_CHARS = 3_000_000
MAX_TEXT_CHARS = 400_000

_SKIP_TAGS = {"script", "style", "noscript", "template", "svg", "nav", "header", "footer", "aside", "form",
              "button", "select", "iframe", "canvas", "object", "dialog", "menu"}
_SKIP_ROLES = {"navigation", "banner", "contentinfo", "menu", "menubar", "search", "dialog", "alertdialog"}
_BLOCK_TAGS = {"p", "div", "section", "article", "main", "li", "dt", "dd", "tr", "table", "ul", "ol", "dl",
               "blockquote", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "br", "hr", "td", "th", "body", "summary",
               "details", "figure", "figcaption", "address"}
_VOID = {"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source", "track", "wbr"}
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}

_ENGLISH = frozenset("the and of to you your we our is are with for that this be by or on not may will from as "
                     "which it use information about have has can any such other these those when if".split())


@dataclass
class Block:
    kind: str  # heading | item | para
    text: str
    start: int = 0
    end: int = 0


@dataclass
class Document:
    text: str = ""
    blocks: list[Block] = field(default_factory=list)
    title: str | None = None
    format: str = "text"  # html | markdown | text
    flags: list[str] = field(default_factory=list)  # truncated, non_english, empty, html_fallback


def _clean(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


class _HTMLText(HTMLParser):
    def __init__(self, structural_skip: bool = True):
        super().__init__(convert_charrefs=True)
        self.structural_skip = structural_skip
        self.blocks: list[Block] = []
        self.buf: list[str] = []
        self.kind: list[str] = []  # stack of open block kinds
        self.skip: list[str] = []  # stack of open skipped tags
        self.title: str | None = None
        self._in_title = False

    def _flush(self) -> None:
        text = _clean("".join(self.buf))
        self.buf = []
        if text:
            kind = self.kind[-1] if self.kind else "para"
            self.blocks.append(Block(kind, text))

    def handle_starttag(self, tag, attrs):
        if tag == "title":
            self._in_title = True
            return
        a = dict(attrs)
        hidden = "hidden" in a or (a.get("aria-hidden") == "true")
        if tag in ("script", "style", "template", "svg") or (self.structural_skip and (
                tag in _SKIP_TAGS or (a.get("role") or "").lower() in _SKIP_ROLES or hidden)):
            if tag not in _VOID:
                self.skip.append(tag)
            return
        if self.skip:
            return
        if tag in _BLOCK_TAGS:
            self._flush()
            if tag not in _VOID:
                self.kind.append("heading" if tag in _HEADINGS else "item" if tag in ("li", "dt", "dd") else
                                 self.kind[-1] if self.kind and tag in ("p", "div", "td", "th", "span") else "para")
                if len(self.kind) > 256:
                    del self.kind[:128]
        elif tag in ("td", "th"):
            self.buf.append(" ")

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
            return
        if self.skip:
            if tag in self.skip:
                while self.skip and self.skip.pop() != tag:
                    pass
            return
        if tag in _BLOCK_TAGS and tag not in _VOID:
            self._flush()
            if self.kind:
                self.kind.pop()

    def handle_data(self, data):
        if self._in_title:
            self.title = _clean((self.title or "") + " " + data) or None
        elif not self.skip:
            self.buf.append(data)

    def close(self):
        super().close()
        self._flush()


def _html_blocks(raw: str) -> tuple[list[Block], str | None, list[str]]:
    p = _HTMLText()
    p.feed(raw)
    p.close()
    flags: list[str] = []
    blocks = p.blocks
    size = sum(len(b.text) for b in blocks)
    if size < 500:  # an unclosed <nav>/<header> can swallow the page: retry skipping only scripts/styles
        q = _HTMLText(structural_skip=False)
        q.feed(raw)
        q.close()
        if sum(len(b.text) for b in q.blocks) > 4 * max(size, 1):
            blocks, flags = q.blocks, ["html_fallback"]
    return blocks, p.title, flags


_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_MD_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_MD_ITEM = re.compile(r"^\s*(?:[*+\-\u2022]|\d{1,3}[.)]|\(?[a-z]\))\s+(.*)$")
_MD_RULE = re.compile(r"^\s*(?:[-*_]\s*){3,}$")
# each class excludes the character that opens the next match, so a failed attempt stops there: linear on
# hostile input ("[[[[…", "<a<a<a…"); with [^\]]* / [^>]* a 100 KB page took a minute (tests/test_security.py)
_MD_IMAGE = re.compile(r"!\[[^\]\[]*\]\([^()]*\)")
_MD_LINK = re.compile(r"\[([^\]\[]*)\]\([^()]*\)")
_MD_AUTOLINK = re.compile(r"<(?:https?|mailto):[^<>]*>")
_MD_TAG = re.compile(r"</?[a-zA-Z][^<>]*>")
_MD_EMPH = re.compile(r"(\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w))")


def _md_inline(s: str) -> str:
    s = _MD_IMAGE.sub("", s)
    s = _MD_LINK.sub(r"\1", s)
    s = _MD_AUTOLINK.sub("", s)
    s = _MD_TAG.sub(" ", s)
    s = _MD_EMPH.sub("", s).replace("`", "")
    return _clean(html.unescape(s))


def _looks_heading(line: str) -> bool:
    words = line.split()
    return 0 < len(words) <= 10 and len(line) <= 90 and not re.search(r"[.;,:]$", line) and (
        line.isupper() or line.istitle() or len(words) <= 6)


def _text_blocks(raw: str) -> list[Block]:
    """Markdown or plain text: headings (ATX, setext, short title-like lines), list items, paragraphs."""
    blocks: list[Block] = []
    para: list[str] = []
    in_code = False

    def flush():
        if para:
            text = _md_inline(" ".join(para))
            if text:
                kind = "heading" if len(para) == 1 and _looks_heading(text) else "para"
                blocks.append(Block(kind, text))
            para.clear()

    for line in raw.splitlines():
        if line.strip().startswith("```"):
            in_code = not in_code
            flush()
            continue
        if in_code:
            continue
        if not line.strip() or _MD_RULE.match(line) and not (para and _MD_SETEXT.match(line)):
            flush()
            continue
        if para and _MD_SETEXT.match(line) and len(para) == 1:
            text = _md_inline(para[0])
            para.clear()
            if text:
                blocks.append(Block("heading", text))
            continue
        m = _MD_HEADING.match(line)
        if m:
            flush()
            if text := _md_inline(m.group(1)):
                blocks.append(Block("heading", text))
            continue
        m = _MD_ITEM.match(line)
        if m:
            flush()
            if text := _md_inline(m.group(1)):
                blocks.append(Block("item", text))
            continue
        if line.lstrip().startswith("|"):
            flush()
            cells = [c for c in (_md_inline(c) for c in line.strip().strip("|").split("|")) if c and not set(c) <= set("-: ")]
            if cells:
                blocks.append(Block("para", "; ".join(cells)))
            continue
        if blocks and blocks[-1].kind == "item" and not para and line.startswith((" ", "\t")):
            blocks[-1].text = _clean(blocks[-1].text + " " + _md_inline(line))  # continuation of a list item
            continue
        para.append(line.strip())
    flush()
    return blocks


def detect_format(content: str, content_type: str | None = None, name: str | None = None) -> str:
    ct = (content_type or "").lower()
    if "html" in ct or "xml" in ct:
        return "html"
    if "markdown" in ct or (name or "").lower().endswith((".md", ".markdown")):
        return "markdown"
    if (name or "").lower().endswith((".html", ".htm")):
        return "html"
    head = content[:4000].lower()
    if re.search(r"<(?:!doctype html|html|body|div|p|h[1-6]|ul|li|span|article|section)\b", head):
        return "html"
    return "markdown" if re.search(r"^\s{0,3}#{1,6}\s|\]\(https?://", content[:20000], re.M) else "text"


def english_ratio(text: str) -> float:
    words = re.findall(r"[a-zA-Z\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff\u0590-\u06ff\u3040-\u9fff]+", text[:30000].lower())
    if not words:
        return 0.0
    return sum(w in _ENGLISH for w in words) / len(words)


def to_text(content: str | bytes, content_type: str | None = None, name: str | None = None) -> Document:
    """Parse a document. Never raises on bad input: problems become `Document.flags`."""
    if isinstance(content, bytes):
        content = content.decode("utf-8", "replace")
    flags: list[str] = []
    if len(content) > MAX_INPUT_CHARS:
        content = content[:MAX_INPUT_CHARS]
        flags.append("truncated")
    fmt = detect_format(content, content_type, name)
    title = None
    if fmt == "html":
        blocks, title, extra = _html_blocks(content)
        flags += extra
    else:
        blocks = _text_blocks(content)
    parts: list[str] = []
    pos = 0
    kept: list[Block] = []
    for b in blocks:
        if pos + len(b.text) > MAX_TEXT_CHARS:
            if "truncated" not in flags:
                flags.append("truncated")
            break
        b.start, b.end = pos, pos + len(b.text)
        parts.append(b.text)
        kept.append(b)
        pos = b.end + 2
    text = "\n\n".join(parts)
    if len(text.strip()) < 40:
        flags.append("empty")
    elif english_ratio(text) < 0.12:
        flags.append("non_english")
    if title is None and kept and kept[0].kind == "heading":
        title = kept[0].text
    return Document(text=text, blocks=kept, title=title, format=fmt, flags=flags)


# --------------------------------------------------------------------------- privacy-page heuristics

_POLICY_URL = re.compile(r"privacy|datenschutz|privacidad|privacidade|confidentialit|riservatezza|privacybeleid|"
                         r"data[-_]?(?:policy|protection)|cookie[-_]?(?:policy|notice|statement)|personal[-_]?data", re.I)
_MAYBE_URL = re.compile(r"/(?:legal|policies|policy|terms|notices?|gdpr|ccpa)\b", re.I)
_POLICY_TITLE = re.compile(r"\b(?:privacy (?:policy|notice|statement|center|centre)|data (?:policy|protection)|"
                           r"cookie (?:policy|notice)|datenschutz\w*|politique de confidentialit|privacidad)\b", re.I)
_POLICY_TEXT = re.compile(r"\bpersonal (?:data|information)\b|\bprivacy\b|\bcookies?\b", re.I)


def policy_url_kind(url: str) -> str | None:
    """'policy' when the URL's path names a privacy page, 'maybe' when it is a legal page whose title decides.
    The query string is ignored (consent parameters such as `?gdpr=1` ride on every kind of page)."""
    try:
        path = unquote(urlsplit(url).path)
    except ValueError:
        return None
    return "policy" if _POLICY_URL.search(path) else "maybe" if _MAYBE_URL.search(path) else None


def is_policy_page(url: str, title: str | None, text: str = "privacy") -> bool:
    """URL or title says privacy page, and the text speaks of personal data, privacy or cookies."""
    kind = policy_url_kind(url)
    named = kind == "policy" or bool(kind and title and _POLICY_TITLE.search(title))
    return named and bool(_POLICY_TEXT.search(text))

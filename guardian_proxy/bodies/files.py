"""Files people send to AI services: what kind they are, their text, and a rewrite in their own format.

    kind_of(filename, content_type, data) -> "text" | "pdf" | "docx" | None
    read_text(kind, data, max_chars) -> FileText            (raises FileUnreadable)
    rewrite(kind, data, replacements) -> bytes | None       (None: this kind cannot be rewritten, i.e. PDF)

The kind comes from the bytes: ``%PDF-`` near the start is a PDF, a zip with ``word/document.xml`` is a
DOCX, known binary magic (images, archives, audio/video, executables, legacy OLE Office files, other
zips such as XLSX/PPTX/ODT) is None; anything else is text when it decodes as text (BOM → UTF-8/16/32,
UTF-16 without a BOM by its NUL pattern, then strict UTF-8, cp1252, latin-1) with no binary control
characters. The name and content type only help: a ``.pdf`` holding plain text is text, a ``.txt``
holding a PDF is a PDF.

`FileText.text` is what a detector should scan; `FileText.blocks` says where each piece came from
(a page, a DOCX paragraph and its runs, a metadata field, a form field, a hyperlink target), blocks
joined by ``"\\n"``. Offsets are stable: the text read with a smaller ``max_chars`` is a prefix of the
text read with a larger one, and `rewrite` always walks the whole file, so spans found in any
`read_text(kind, data, n).text` can be handed back as they are:

    ft = read_text(kind, data, 200_000)
    spans = detect(ft.text)                               # [(start, end, replacement), ...]
    new = rewrite(kind, data, spans)                      # same format, replacements applied

or with a function applied to each unit (the whole decoded text of a text file; each paragraph,
metadata field and link target of a DOCX), the changes mapped back to runs by a character diff:

    new = rewrite(kind, data, lambda text: pseudonymise(text))

DOCX: the text of a value split across runs goes into the first run (its formatting is kept), the
other runs lose the characters it covered; tracked deletions (``w:delText``) and field codes
(``w:instrText``) are read and rewritten too, as are headers, footers, footnotes, endnotes,
comments, the core properties (author, last modified by, title, ...) and external hyperlink targets
(``mailto:``). Not read: docProps/app.xml (company, manager), embedded objects and images.
PDF: page text (pages and characters capped), document info (author, title, subject, keywords) and
filled form-field values; flags ``no_text`` (a scan: nothing extractable) and ``images``. A PDF is
never rewritten (`rewrite` returns None): the caller applies its stated rule.

Bounds: DOCX archives are checked from the zip's central directory before anything is inflated
(entry count, total uncompressed size, size of each XML part) so a zip bomb is refused at once;
zipfile itself never inflates an entry past its declared size. PDF streams are decoded under
pypdf's `apply_configuration` limits; pages beyond `max_pages` are not read (flag ``pages_capped``).

Files embedded in JSON (`embedded_files`): OpenAI ``input_file.file_data`` and Chat Completions
``file.file_data`` (a ``data:`` URL, or bare base64), Anthropic ``document.source``
(``{type: base64, media_type, data}`` or ``{type: text, media_type: text/plain, data}``), Gemini
``inlineData``/``inline_data`` (``{mimeType, data}``), Bedrock Converse ``document``
(``{format, name, source: {bytes}}``). Shapes taken from the SDK types in .venv (openai
ResponseInputFileParam / FileFile, anthropic Base64PDFSourceParam / PlainTextSourceParam, google-genai
Blob and its camelCase converters, botocore bedrock-runtime DocumentBlock).

Files in multipart bodies: `multipart_files(parsed)` lists the file parts `bodies.parse_body` did not
read as text (a PDF, a DOCX, a UTF-16 text file ...) with their bytes; `replace_file_parts` puts new
bytes back and updates the ParsedBody in place, so a later `bodies.write_back` of text fields composes.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import difflib
import io
import re
import zipfile
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field

from .model import ParsedBody

TEXT, PDF, DOCX = "text", "pdf", "docx"


class ReplacementError(ValueError):
    """Replacements outside the text or overlapping (a caller's mistake, not the file's)."""


class FileUnreadable(Exception):
    """The file cannot be read within the limits: encrypted, corrupt, a zip bomb, not what it claims."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class FileLimits:
    max_chars: int = 1_000_000  # text returned by read_text (rewrite always walks the whole file)
    max_pages: int = 300  # PDF pages read
    max_entries: int = 2_000  # DOCX zip entries
    max_unzipped_bytes: int = 64 * 1024 * 1024  # DOCX: all entries together, uncompressed
    max_part_bytes: int = 12 * 1024 * 1024  # DOCX: one XML part (document.xml ...), uncompressed
    max_stream_bytes: int = 16 * 1024 * 1024  # PDF: one decoded stream
    max_embedded_bytes: int = 32 * 1024 * 1024  # base64 payload decoded from JSON


@dataclass
class Block:
    """Where a piece of `FileText.text` came from: ``text[start:end]``."""

    start: int
    end: int
    where: str  # "text", "page 3", "word/document.xml p12", "meta:author", "field:SSN", "link:word/document.xml:rId4"
    runs: list[tuple[int, int]] = field(default_factory=list)  # DOCX: the w:t pieces (offsets in text)


@dataclass
class FileText:
    kind: str
    text: str
    blocks: list[Block] = field(default_factory=list)
    truncated: bool = False
    encoding: str | None = None  # text files: the codec the bytes were read with ("utf-16-le" ...)
    bom: bool = False
    pages: int | None = None  # PDF: pages in the file
    flags: list[str] = field(default_factory=list)  # truncated, pages_capped, no_text, images, encrypted ...


# --------------------------------------------------------------------------- kind

_TEXT_EXT = frozenset("""
txt text md markdown mdown rst adoc org tex log csv tsv tab json jsonl ndjson geojson yaml yml toml ini cfg conf
env properties xml xsd xsl svg html htm xhtml rtf srt vtt sub ics vcf eml mbox sql graphql gql ipynb
py pyi js mjs cjs ts tsx jsx java kt kts scala groovy gradle c h cc cpp cxx hpp hh cs go rs rb php pl pm lua r
swift m mm dart sh bash zsh fish ps1 bat cmd vb vbs css scss sass less vue svelte astro hs ex exs erl clj
elm ml fs jl nim zig sol tf hcl dockerfile makefile cmake mk diff patch
""".split())
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/x-yaml", "application/yaml",
               "application/javascript", "application/x-javascript", "application/ecmascript", "application/sql",
               "application/x-sh", "application/x-ndjson", "application/csv", "application/rtf",
               "application/x-tex", "application/toml", "application/x-python", "image/svg+xml",
               "message/rfc822")
#: magic of formats this module does not read (None)
_BINARY_MAGIC = (
    b"\x89PNG", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"BM", b"II*\x00", b"MM\x00*", b"\x00\x00\x01\x00",
    b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"7z\xbc\xaf\x27\x1c", b"Rar!\x1a\x07", b"\x28\xb5\x2f\xfd",
    b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", b"ID3", b"OggS", b"fLaC", b"\x1aE\xdf\xa3", b"\x7fELF", b"MZ",
    b"\xca\xfe\xba\xbe", b"\xcf\xfa\xed\xfe", b"\x00asm", b"wOFF", b"wOF2", b"SQLite format 3\x00",
    b"PK\x05\x06", b"PK\x07\x08", b"8BPS", b"\x00\x00\x00\x0cjP  ",
)
_BOMS = ((b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\xef\xbb\xbf", "utf-8"),
         (b"\xfe\xff", "utf-16-be"), (b"\xff\xfe", "utf-16-le"))
_CTRL = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]")  # \x1b (ANSI colours in logs) is allowed
_XML_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _ext(filename: str | None) -> str:
    if not filename:
        return ""
    base = filename.replace("\\", "/").rsplit("/", 1)[-1].lower()
    if base in ("dockerfile", "makefile", "readme", "license", "changelog"):
        return base if base in _TEXT_EXT else "txt"
    return base.rsplit(".", 1)[-1] if "." in base else ""


def _pdf_at(data: bytes) -> bool:
    """``%PDF-`` at the start, or within the first 1024 bytes (readers allow junk before it) of a file
    that ends like a PDF (so a text that quotes the header is not taken for one)."""
    if data.lstrip(b"\xef\xbb\xbf \t\r\n")[:5] == b"%PDF-":
        return True
    return data[:1024].find(b"%PDF-") >= 0 and b"%%EOF" in data[-2048:]


def _zip_names(data: bytes) -> list[str] | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return zf.namelist()
    except Exception:  # BadZipFile, NotImplementedError (odd versions), OSError, ValueError ...
        return None


def known_binary(data: bytes) -> bool:
    """The bytes start like a file of a known binary format (image, audio, video, archive, font, executable,
    database, PDF, ZIP-based office file): a file being sent, not bytes of unknown meaning."""
    return data.startswith(_BINARY_MAGIC) or data.startswith((b"PK\x03\x04", b"%PDF-")) \
        or (data[:4] == b"RIFF" and data[8:12] in (b"WEBP", b"WAVE", b"AVI ")) or data[4:8] == b"ftyp"


def kind_of(filename: str | None, content_type: str | None, data: bytes) -> str | None:
    """"text", "pdf", "docx", or None (images, archives, other binary, other office formats)."""
    if _pdf_at(data):
        return PDF
    if data.startswith(b"PK\x03\x04"):
        names = _zip_names(data)
        if names is None:  # no central directory (truncated): a DOCX by its entry names, read_text refuses it
            return DOCX if b"word/document.xml" in data or b"[Content_Types].xml" in data[:256] else None
        return DOCX if "word/document.xml" in names else None
    if data.startswith(_BINARY_MAGIC) or (data[:4] == b"RIFF" and data[8:12] in (b"WEBP", b"WAVE", b"AVI ")) \
            or data[4:8] == b"ftyp":
        return None
    if not data:
        return TEXT if _hinted_text(filename, content_type) else None
    return TEXT if _decode(data, _hinted_text(filename, content_type)) is not None else None


def _hinted_text(filename: str | None, content_type: str | None) -> bool:
    ctype = (content_type or "").split(";")[0].strip().lower()
    return _ext(filename) in _TEXT_EXT or ctype.startswith(_TEXT_TYPES) or ctype.endswith(("+json", "+xml"))


# --------------------------------------------------------------------------- text files


def _decode(data: bytes, hinted: bool = True) -> tuple[str, bytes, str] | None:
    """(text, BOM bytes, codec) or None when the bytes do not look like text."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom):].decode(codec)
            except UnicodeDecodeError:
                return None
            return (text, bom, codec) if not _binaryish(text) else None
    sample = data[:8192]
    if len(sample) >= 4 and sample.count(b"\x00") * 3 > len(sample):  # UTF-16 without a BOM: NULs in one lane
        odd, even = sample[1::2].count(0), sample[0::2].count(0)
        codec = "utf-16-le" if odd > 3 * max(even, 1) else "utf-16-be" if even > 3 * max(odd, 1) else None
        if codec:
            try:
                text = data[: len(data) // 2 * 2].decode(codec)
            except UnicodeDecodeError:
                return None
            if len(data) % 2 == 0 and not _binaryish(text):
                return text, b"", codec
        return None
    for codec in ("utf-8", "cp1252", "latin-1"):
        if codec == "latin-1" and not hinted:
            return None
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            continue
        return (text, b"", codec) if not _binaryish(text) else None
    return None


def _binaryish(text: str) -> bool:
    sample = text[:8192]
    return len(_CTRL.findall(sample)) > max(2, len(sample) // 200)


def _read_plain(data: bytes, limits: FileLimits) -> FileText:
    dec = _decode(data)
    if dec is None:
        raise FileUnreadable("not text in any encoding tried")
    text, bom, codec = dec
    ft = FileText(TEXT, text, encoding=codec, bom=bool(bom))
    if len(text) > limits.max_chars:
        ft.text, ft.truncated = text[: limits.max_chars], True
        ft.flags.append("truncated")
    ft.blocks = [Block(0, len(ft.text), "text")]
    return ft


def _rewrite_plain(data: bytes, replacements) -> bytes:
    dec = _decode(data)
    if dec is None:
        raise FileUnreadable("not text in any encoding tried")
    text, bom, codec = dec
    new = replacements(text) if callable(replacements) else _splice(text, _checked(replacements, len(text)))
    if new == text:
        return data
    return bom + new.encode(codec, "replace")


def _checked(repl, length: int) -> list[tuple[int, int, str]]:
    out = sorted((int(s), int(e), str(t)) for s, e, t in repl)
    last = 0
    for s, e, _ in out:
        if not 0 <= s <= e <= length:
            raise ReplacementError(f"replacement {s}:{e} outside the text (0:{length})")
        if s < last:
            raise ReplacementError(f"overlapping replacements at {s}")
        last = e
    return out


def _splice(text: str, repl: list[tuple[int, int, str]]) -> str:
    out, pos = [], 0
    for s, e, t in repl:
        out += [text[pos:s], t]
        pos = e
    out.append(text[pos:])
    return "".join(out)


def diff(old: str, new: str) -> list[tuple[int, int, str]]:
    """Local edits turning `old` into `new`; edits separated by a short non-blank run are merged so a
    replaced value lands in one piece (it goes into one run)."""
    if old == new:
        return []
    p = 0
    while p < min(len(old), len(new)) and old[p] == new[p]:
        p += 1
    s = 0
    while s < min(len(old), len(new)) - p and old[-1 - s] == new[-1 - s]:
        s += 1
    a, b = old[p: len(old) - s], new[p: len(new) - s]
    if len(a) * len(b) > 4_000_000:  # too big to diff finely: one edit
        return [(p, len(old) - s, b)]
    ops: list[tuple[int, int, int, int]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        gap = a[ops[-1][1]:i1] if ops else ""
        if ops and len(gap) < 4 and not any(c.isspace() for c in gap):
            ops[-1] = (ops[-1][0], i2, ops[-1][2], j2)
        else:
            ops.append((i1, i2, j1, j2))
    return [(p + i1, p + i2, b[j1:j2]) for i1, i2, j1, j2 in ops]


# --------------------------------------------------------------------------- PDF


def _pdf_config(limits: FileLimits):
    try:
        from pypdf import apply_configuration
    except ImportError:  # older pypdf: its own defaults apply
        return nullcontext()
    n = limits.max_stream_bytes
    return apply_configuration(zlib_maximum_output_length=n, lzw_maximum_output_length=n,
                               run_length_maximum_output_length=n, array_based_stream_maximum_output_length=n,
                               brotli_maximum_output_length=n, maximum_declared_stream_length=n,
                               image_maximum_buffer_size=n)


def _read_pdf(data: bytes, limits: FileLimits) -> FileText:
    import logging

    from pypdf import PdfReader

    # pypdf logs every recoverable defect, quoting bits of the file (names, strings): those must not reach
    # the proxy's log. Set once, for the process (a save/restore around each read would race between threads).
    logging.getLogger("pypdf").setLevel(logging.CRITICAL)
    with _pdf_config(limits):
        return _pdf_text(PdfReader, data, limits)


def _pdf_text(PdfReader, data: bytes, limits: FileLimits) -> FileText:
    if not _pdf_at(data):
        raise FileUnreadable("not a PDF (no %PDF- header)")
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
    except Exception as e:
        raise FileUnreadable(f"corrupt PDF ({type(e).__name__})") from None
    ft = FileText(PDF, "")
    if reader.is_encrypted:
        try:
            ok = reader.decrypt("")
        except Exception as e:
            raise FileUnreadable(f"encrypted PDF ({type(e).__name__})") from None
        if not ok:
            raise FileUnreadable("encrypted PDF: a password is needed to read it")
        ft.flags.append("encrypted")  # empty user password: anyone, the service included, can read it
    try:
        ft.pages = len(reader.pages)
    except Exception as e:
        raise FileUnreadable(f"corrupt PDF: no readable page tree ({type(e).__name__})") from None
    out = _Out(limits.max_chars)
    try:
        info = reader.metadata or {}
        for key in ("/Author", "/Title", "/Subject", "/Keywords"):
            v = info.get(key)
            if isinstance(v, str) and v.strip():
                out.add(str(v), f"meta:{key[1:].lower()}")
    except Exception:
        ft.flags.append("unreadable_metadata")
    try:
        for name, value in (reader.get_form_text_fields() or {}).items():
            if isinstance(value, str) and value.strip():
                out.add(value, f"field:{name}")
    except Exception:
        ft.flags.append("unreadable_form")
    failed = read = 0
    first_error = ""
    images = False
    for i in range(min(ft.pages, limits.max_pages)):
        if out.full:
            break
        try:
            page = reader.pages[i]
            images = images or _has_images(page)
            text = page.extract_text() or ""
        except Exception as e:  # pypdf's LimitReachedError for a stream over the limits, broken operators ...
            failed += 1
            first_error = first_error or type(e).__name__
            continue
        read += 1
        out.add(text, f"page {i + 1}")
    if ft.pages and failed == min(ft.pages, limits.max_pages) and not out.blocks:
        raise FileUnreadable(f"corrupt PDF: no page could be read ({first_error})")
    if failed:
        ft.flags.append("unreadable_pages")
    if ft.pages > limits.max_pages:
        ft.flags.append("pages_capped")
    if images:
        ft.flags.append("images")
    ft.text, ft.blocks, ft.truncated = out.text(), out.blocks, out.full
    if not any(b.where.startswith("page") and ft.text[b.start:b.end].strip() for b in ft.blocks):
        ft.flags.append("no_text")
    if ft.truncated:
        ft.flags.append("truncated")
    return ft


def _has_images(page) -> bool:
    try:
        xo = (page.get("/Resources") or {}).get_object().get("/XObject")
        if xo is None:
            return False
        return any(v.get_object().get("/Subtype") == "/Image" for v in xo.get_object().values())
    except Exception:
        return False


class _Out:
    """Blocks joined by newlines, cut at max_chars."""

    def __init__(self, max_chars: int):
        self.max, self.parts, self.blocks, self.pos, self.full = max_chars, [], [], 0, False

    def add(self, text: str, where: str, runs: list[tuple[int, int]] | None = None) -> None:
        if self.full:
            return
        start = self.pos + (1 if self.blocks else 0)
        if start > self.max:
            self.full = True
            return
        if self.blocks:
            self.parts.append("\n")
        if start + len(text) > self.max:
            text, self.full = text[: self.max - start], True
        self.parts.append(text)
        end = start + len(text)
        self.blocks.append(Block(start, end, where, [(start + a, start + min(b, len(text))) for a, b in runs or ()
                                                     if a < len(text)]))
        self.pos = end

    def text(self) -> str:
        return "".join(self.parts)


# --------------------------------------------------------------------------- DOCX

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_P, _R = _W + "p", _W + "r"
_TEXT_TAGS = (_W + "t", _W + "delText", _W + "instrText")
_CHAR_TAGS = {_W + "tab": "\t", _W + "br": "\n", _W + "cr": "\n", _W + "noBreakHyphen": "-"}
_XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
_CORE_FIELDS = ("author", "last_modified_by", "title", "subject", "keywords", "comments", "category")


def _check_zip(data: bytes, limits: FileLimits) -> list[str]:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except Exception as e:
        raise FileUnreadable(f"corrupt DOCX: not a zip ({type(e).__name__})") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > limits.max_entries:
            raise FileUnreadable(f"DOCX has {len(infos)} zip entries (limit {limits.max_entries})")
        total = 0
        for zi in infos:
            total += zi.file_size
            if zi.filename.endswith((".xml", ".rels")) and zi.file_size > limits.max_part_bytes:
                raise FileUnreadable(f"DOCX part {zi.filename} is {zi.file_size} bytes uncompressed "
                                     f"(limit {limits.max_part_bytes}): refused as a possible zip bomb")
            if zi.flag_bits & 0x1:
                raise FileUnreadable("encrypted zip entry in DOCX")
        if total > limits.max_unzipped_bytes:
            raise FileUnreadable(f"DOCX is {total} bytes uncompressed (limit {limits.max_unzipped_bytes}): "
                                 "refused as a possible zip bomb")
        names = [zi.filename for zi in infos]
    if "word/document.xml" not in names:
        raise FileUnreadable("not a DOCX (no word/document.xml)")
    return names


def _open_docx(data: bytes, limits: FileLimits):
    names = _check_zip(data, limits)
    import docx

    try:
        return docx.Document(io.BytesIO(data)), names
    except Exception as e:
        raise FileUnreadable(f"corrupt DOCX ({type(e).__name__})") from None


class _Seg:
    """One piece of a unit's text; writable pieces write back through `commit`."""

    __slots__ = ("start", "end", "text", "el", "setter")

    def __init__(self, start: int, text: str, el=None, setter=None):
        self.start, self.end, self.text, self.el, self.setter = start, start + len(text), text, el, setter

    @property
    def writable(self) -> bool:
        return self.el is not None or self.setter is not None

    def commit(self, new: str) -> None:
        new = _XML_BAD.sub("", new)
        if self.el is not None:
            self.el.text = new
            if new != new.strip() or "  " in new:
                self.el.set(_XML_SPACE, "preserve")
        else:
            self.setter(new)


class _Unit:
    __slots__ = ("where", "segs", "text")

    def __init__(self, where: str, segs: list[_Seg]):
        self.where, self.segs = where, segs
        self.text = "".join(s.text for s in segs)


def _paragraph(p, where: str) -> _Unit:
    segs: list[_Seg] = []
    pos = 0
    for el in p.iter(*_TEXT_TAGS, *_CHAR_TAGS):
        if el.getparent() is None or el.getparent().tag != _R or next(el.iterancestors(_P), None) is not p:
            continue  # tab stops in w:pPr, or a nested paragraph's text (a text box): its own unit
        if el.tag in _CHAR_TAGS:
            seg = _Seg(pos, _CHAR_TAGS[el.tag])
        else:
            seg = _Seg(pos, el.text or "", el=el)
        segs.append(seg)
        pos = seg.end
    return _Unit(where, segs)


def _docx_units(doc, names: list[str]) -> tuple[list[_Unit], list[str], list[Callable[[], None]]]:
    """Every unit in reading order, flags, and the finishers that store generic parts' XML back."""
    from docx.opc.constants import CONTENT_TYPE as CT
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.opc.oxml import parse_xml, serialize_part_xml

    units: list[_Unit] = []
    finish: list[Callable[[], None]] = []
    flags: list[str] = []
    parts = list(doc.part.package.iter_parts())
    core = next((p for p in parts if p.content_type == CT.OPC_CORE_PROPERTIES), None)
    if core is not None:  # only when present: python-docx would invent one with its own author
        props = core.core_properties
        for name in _CORE_FIELDS:
            value = getattr(props, name, None)
            if isinstance(value, str) and value:
                def setter(new, props=props, name=name):
                    setattr(props, name, new[:255])
                units.append(_Unit(f"meta:{name}", [_Seg(0, value, setter=setter)]))
    wanted = {CT.WML_DOCUMENT_MAIN: 0, CT.WML_HEADER: 1, CT.WML_FOOTER: 2, CT.WML_FOOTNOTES: 3,
              CT.WML_ENDNOTES: 4, CT.WML_COMMENTS: 5}
    text_parts = sorted((p for p in parts if p.content_type in wanted),
                        key=lambda p: (wanted[p.content_type], str(p.partname)))
    for part in text_parts:
        pname = str(part.partname).lstrip("/")
        element = getattr(part, "element", None)
        if element is None:  # a part python-docx keeps as bytes (footnotes, endnotes)
            try:
                element = parse_xml(part.blob)
            except Exception:
                flags.append("unreadable_part")
                continue

            def store(part=part, element=element):
                part._blob = serialize_part_xml(element)
            finish.append(store)
        for i, p in enumerate(element.iter(_P)):
            units.append(_paragraph(p, f"{pname} p{i}"))
        for rid, rel in sorted(part.rels.items()):
            if rel.is_external and rel.reltype == RT.HYPERLINK and rel.target_ref:
                def set_target(new, rel=rel):
                    rel._target = new
                units.append(_Unit(f"link:{pname}:{rid}", [_Seg(0, rel.target_ref, setter=set_target)]))
    if any(n.startswith("word/media/") for n in names):
        flags.append("images")
    if any(n.startswith("word/embeddings/") for n in names):
        flags.append("embedded_objects")
    return units, flags, finish


def _read_docx(data: bytes, limits: FileLimits) -> FileText:
    doc, names = _open_docx(data, limits)
    units, flags, _ = _docx_units(doc, names)
    out = _Out(limits.max_chars)
    for u in units:
        out.add(u.text, u.where, [(s.start, s.end) for s in u.segs if s.el is not None])
        if out.full:
            break
    ft = FileText(DOCX, out.text(), out.blocks, truncated=out.full, flags=flags)
    if ft.truncated:
        ft.flags.append("truncated")
    return ft


def _rewrite_docx(data: bytes, replacements, limits: FileLimits) -> bytes:
    doc, names = _open_docx(data, limits)
    units, _, finish = _docx_units(doc, names)
    edits: list[list[tuple[int, int, str]]] = [[] for _ in units]
    if callable(replacements):
        for i, u in enumerate(units):
            new = replacements(u.text)
            if new != u.text:
                edits[i] = diff(u.text, new)
    else:
        starts, pos = [], 0
        for u in units:
            starts.append(pos)
            pos += len(u.text) + 1
        repl = _checked(replacements, max(pos - 1, 0))
        for s, e, new in repl:
            i = max(bisect.bisect_right(starts, s) - 1, 0)
            us = starts[i]
            edits[i].append((s - us, min(e, us + len(units[i].text)) - us, new))
            i += 1
            while i < len(units) and starts[i] < e:  # a span across paragraphs: the rest is removed
                le = min(e, starts[i] + len(units[i].text)) - starts[i]
                if le > 0:
                    edits[i].append((0, le, ""))
                i += 1
    changed = False
    for u, ed in zip(units, edits, strict=True):
        if ed:
            _apply_unit(u, ed)
            changed = True
    if not changed:
        return data
    for f in finish:
        f()
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def _apply_unit(u: _Unit, edits: list[tuple[int, int, str]]) -> None:
    per: dict[int, list[tuple[int, int, str]]] = {}
    writable = [i for i, s in enumerate(u.segs) if s.writable]
    if not writable:
        return
    for ls, le, new in edits:
        hit = [i for i in writable if u.segs[i].start < le and u.segs[i].end > ls] if le > ls else \
            [next((i for i in writable if u.segs[i].start <= ls <= u.segs[i].end), writable[-1])]
        if not hit:  # only tabs/breaks covered: insert next to them
            hit = [next((i for i in writable if u.segs[i].start >= le), writable[-1])]
        for n, i in enumerate(hit):
            s = u.segs[i]
            a, b = min(max(ls - s.start, 0), len(s.text)), min(max(le - s.start, 0), len(s.text))
            per.setdefault(i, []).append((a, b, new if n == 0 else ""))
    for i, lst in per.items():
        s = u.segs[i]
        text = s.text
        for a, b, new in sorted(lst, key=lambda x: (x[0], x[1]), reverse=True):
            text = text[:a] + new + text[b:]
        s.commit(text)


# --------------------------------------------------------------------------- interface


def read_text(kind: str, data: bytes, max_chars: int | None = None, limits: FileLimits | None = None) -> FileText:
    """The text of a file of the given kind (from `kind_of`). Raises FileUnreadable, nothing else."""
    limits = limits or FileLimits()
    if max_chars is not None:
        limits = FileLimits(**{**limits.__dict__, "max_chars": max_chars})
    reader = {TEXT: _read_plain, PDF: _read_pdf, DOCX: _read_docx}.get(kind)
    if reader is None:
        raise FileUnreadable(f"no reader for {kind!r}")
    try:
        return reader(data, limits)
    except FileUnreadable:
        raise
    except Exception as e:  # a defect the libraries did not expect: unreadable, never a crash
        raise FileUnreadable(f"unreadable {kind} ({type(e).__name__})") from None


def rewrite(kind: str, data: bytes, replacements, limits: FileLimits | None = None) -> bytes | None:
    """The file with the replacements applied, in its own format; None for a PDF (not rewritable).

    `replacements` is either a list of (start, end, new) in the coordinates of `read_text(kind, data).text`
    (non-overlapping; any max_chars), or a function text → new text applied to each unit (see the module
    docstring). Returns `data` itself when nothing changed. Raises FileUnreadable, and ReplacementError
    (a ValueError) for replacements outside the text or overlapping."""
    limits = limits or FileLimits()
    if kind == PDF:
        return None
    if kind not in (TEXT, DOCX):
        raise FileUnreadable(f"no writer for {kind!r}")
    try:
        return _rewrite_plain(data, replacements) if kind == TEXT else _rewrite_docx(data, replacements, limits)
    except (FileUnreadable, ReplacementError):
        raise
    except Exception as e:
        raise FileUnreadable(f"cannot rewrite {kind} ({type(e).__name__})") from None


# --------------------------------------------------------------------------- base64 and data URLs

_DATA_URL = re.compile(r"\Adata:([^,;]*)((?:;[^,;=]+=[^,;]*)*)(;base64)?,", re.I)
_B64_JUNK = re.compile(r"\s+")


def b64decode(s: str, max_bytes: int | None = None) -> bytes | None:
    """Standard or URL-safe base64 (padding optional, whitespace ignored); None when it is not base64."""
    s = _B64_JUNK.sub("", s)
    if max_bytes is not None and len(s) // 4 * 3 > max_bytes + 3:
        return None
    if "-" in s or "_" in s:
        s = s.replace("-", "+").replace("_", "/")
    s += "=" * (-len(s) % 4)
    try:
        return base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        return None


def b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def from_data_url(s: str, max_bytes: int | None = None) -> tuple[str, bytes] | None:
    """``data:<type>[;params][;base64],<payload>`` → (content type, bytes); None for anything else."""
    if not isinstance(s, str):
        return None
    m = _DATA_URL.match(s[:512])
    if not m:
        return None
    ctype = m.group(1).strip().lower() or "text/plain"
    payload = s[m.end():]
    if m.group(3):
        data = b64decode(payload, max_bytes)
        return None if data is None else (ctype, data)
    from urllib.parse import unquote_to_bytes

    data = unquote_to_bytes(payload)
    return None if max_bytes is not None and len(data) > max_bytes else (ctype, data)


def to_data_url(content_type: str, data: bytes) -> str:
    return f"data:{content_type};base64,{b64encode(data)}"


_BEDROCK_TYPES = {"pdf": "application/pdf", "csv": "text/csv", "html": "text/html", "txt": "text/plain",
                  "md": "text/markdown", "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml."
                  "document", "doc": "application/msword", "xls": "application/vnd.ms-excel",
                  "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}


@dataclass
class EmbeddedFile:
    """A file inside a JSON request body; `replace` writes new bytes back in the same style."""

    holder: dict  # the JSON object that holds the payload
    key: str  # its key there
    style: str  # "data_url" | "base64" | "text" (Anthropic plain-text source: the text itself)
    content_type: str | None
    filename: str | None
    data: bytes
    api: str  # openai | anthropic | gemini | bedrock
    path: tuple  # JSON path of the payload from the root (bodies.json_path renders it)

    def encode(self, new: bytes) -> str:
        if self.style == "data_url":
            return to_data_url(self.content_type or "application/octet-stream", new)
        if self.style == "text":
            return new.decode("utf-8", "replace")
        return b64encode(new)

    def replace(self, new: bytes) -> None:
        self.holder[self.key] = self.encode(new)
        self.data = new


def _payload(s, max_bytes: int) -> tuple[str, str | None, bytes] | None:
    """(style, content type from a data URL, bytes) of a file_data-like string."""
    if not isinstance(s, str) or not s:
        return None
    if s[:5].lower() == "data:":
        got = from_data_url(s, max_bytes)
        return None if got is None else ("data_url", got[0], got[1])
    data = b64decode(s, max_bytes)
    return None if data is None else ("base64", None, data)


def embedded_files(obj, max_bytes: int | None = None) -> list[EmbeddedFile]:
    """Files embedded in a parsed JSON request body (OpenAI, Anthropic, Gemini, Bedrock Converse shapes)."""
    limit = max_bytes if max_bytes is not None else FileLimits().max_embedded_bytes
    out: list[EmbeddedFile] = []
    stack: list[tuple[object, tuple]] = [(obj, ())]
    seen = 0
    while stack:
        node, path = stack.pop()
        seen += 1
        if seen > 1_000_000:
            break
        if isinstance(node, list):
            stack.extend((v, path + (i,)) for i, v in reversed(list(enumerate(node))))
            continue
        if not isinstance(node, dict):
            continue
        found = _one_file(node, path, limit)
        if found is not None:
            out.append(found)
        stack.extend((v, path + (k,)) for k, v in reversed(list(node.items())) if isinstance(v, (dict, list)))
    return out


def _one_file(node: dict, path: tuple, limit: int) -> EmbeddedFile | None:
    # OpenAI Responses input_file / Chat Completions file.file (file_data next to filename)
    if isinstance(node.get("file_data"), str):
        got = _payload(node["file_data"], limit)
        if got:
            style, ctype, data = got
            name = node.get("filename") if isinstance(node.get("filename"), str) else None
            return EmbeddedFile(node, "file_data", style, ctype, name, data, "openai", path + ("file_data",))
    # Anthropic document/image source
    if node.get("type") in ("base64", "text") and isinstance(node.get("data"), str) \
            and isinstance(node.get("media_type"), str):
        ctype = node["media_type"].lower()
        if node["type"] == "text":
            return EmbeddedFile(node, "data", "text", ctype, None, node["data"].encode("utf-8"), "anthropic",
                                path + ("data",))
        got = _payload(node["data"], limit)
        if got:
            return EmbeddedFile(node, "data", got[0], got[1] or ctype, None, got[2], "anthropic", path + ("data",))
    # Gemini inlineData / inline_data
    for key, mkey in (("inlineData", "mimeType"), ("inline_data", "mime_type")):
        blob = node.get(key)
        if isinstance(blob, dict) and isinstance(blob.get("data"), str):
            got = _payload(blob["data"], limit)
            if got:
                name = blob.get("displayName") or blob.get("display_name")
                ctype = blob.get(mkey) if isinstance(blob.get(mkey), str) else got[1]
                return EmbeddedFile(blob, "data", got[0], ctype, name if isinstance(name, str) else None, got[2],
                                    "gemini", path + (key, "data"))
    # Bedrock Converse document block
    doc = node.get("document")
    if isinstance(doc, dict) and isinstance(doc.get("source"), dict) and isinstance(doc["source"].get("bytes"), str):
        got = _payload(doc["source"]["bytes"], limit)
        if got:
            fmt = doc.get("format") if isinstance(doc.get("format"), str) else ""
            name = doc.get("name") if isinstance(doc.get("name"), str) else None
            return EmbeddedFile(doc["source"], "bytes", got[0], _BEDROCK_TYPES.get(fmt.lower(), got[1]), name,
                                got[2], "bedrock", path + ("document", "source", "bytes"))
    return None


# --------------------------------------------------------------------------- multipart file parts


@dataclass
class FilePartRef:
    index: int  # position in the multipart chunk list
    name: str
    filename: str | None
    content_type: str
    data: bytes


def multipart_files(parsed: ParsedBody) -> list[FilePartRef]:
    """The parts of a multipart body that `parse_body` did not read as text fields, with their bytes."""
    from .multipart import Multipart, Part

    mp = parsed.data
    if not isinstance(mp, Multipart):
        return []
    return [FilePartRef(i, ch.name, ch.filename, ch.ctype, ch.body) for i, ch in enumerate(mp.chunks)
            if isinstance(ch, Part) and ch.text is None]


def replace_file_parts(parsed: ParsedBody, new: dict[int, bytes]) -> bytes:
    """The decoded multipart body with those parts' bytes replaced (their Content-Length header updated,
    the boundary unchanged). Updates `parsed` in place, so `bodies.write_back(parsed, texts)` afterwards
    keeps the new files. Raises BodyError when new bytes contain the boundary."""
    from ..errors import BodyError
    from .multipart import _CLEN, Multipart, Part

    mp = parsed.data
    if not isinstance(mp, Multipart):
        raise BodyError("not a multipart body")
    for i, body in new.items():
        ch = mp.chunks[i]
        if not isinstance(ch, Part):
            raise BodyError(f"chunk {i} is not a part")
        if mp.boundary in body:
            raise BodyError("a replacement file contains the multipart boundary")
        size = str(len(body)).encode()
        ch.head = _CLEN.sub(lambda m, size=size: m.group(1) + size, ch.head)
        ch.body = body
    out = b"".join(ch if isinstance(ch, bytes) else ch.head + ch.body for ch in mp.chunks)
    parsed.decoded = out
    return out


__all__ = ["DOCX", "PDF", "TEXT", "Block", "EmbeddedFile", "FileLimits", "FilePartRef", "FileText",
           "FileUnreadable", "ReplacementError", "b64decode", "b64encode", "diff", "embedded_files", "from_data_url", "kind_of",
           "multipart_files", "read_text", "replace_file_parts", "rewrite", "to_data_url"]

"""guardian_proxy.bodies.files: file kinds, text, rewrites, embedded and multipart files.

Fixtures come from scripts/make_file_fixtures.py (tests/fixtures/files/); every one carries the same
made-up person, so a rewrite can be checked to leave nothing of them behind.
"""

from __future__ import annotations

import importlib.util
import io
import json
import re
import time
import zipfile
import zlib
from pathlib import Path

import pytest

from guardian_proxy import bodies
from guardian_proxy.bodies import files as F

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "tests" / "fixtures" / "files"
NAME, EMAIL, SSN = "Maria Jensen", "maria.jensen@example.org", "536-22-1987"
NEW = {NAME: "Nora Quist", EMAIL: "nora.quist@example.com", SSN: "[BLOCKED]"}
VALUES = re.compile("|".join(re.escape(v) for v in NEW))
LEAKS = ("Maria", "Jensen", "maria.jensen", SSN)


def fixture(name: str) -> bytes:
    return (FIX / name).read_bytes()


def spans(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), NEW[m.group()]) for m in VALUES.finditer(text)]


def no_leak(text: str) -> None:
    for v in LEAKS:
        assert v not in text, v


def _script():
    spec = importlib.util.spec_from_file_location("make_file_fixtures", ROOT / "scripts" / "make_file_fixtures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# --------------------------------------------------------------------------- fixtures


def test_fixture_script_reproduces_the_files(tmp_path):
    mod = _script()
    sizes = mod.build(tmp_path)
    assert set(sizes) == {p.name for p in FIX.iterdir()}
    for name in sizes:
        assert (tmp_path / name).stat().st_size < 20_000
        if name not in mod.UNSTABLE:
            assert (tmp_path / name).read_bytes() == fixture(name), name


# --------------------------------------------------------------------------- kind


@pytest.mark.parametrize("name,kind", [
    ("contact.txt", "text"), ("contacts.csv", "text"), ("record.json", "text"), ("notes.md", "text"),
    ("utf16le_bom.txt", "text"), ("utf16be_bom.txt", "text"), ("utf16le_nobom.txt", "text"),
    ("cp1252.txt", "text"), ("main.py", "text"), ("letter.pdf", "pdf"), ("form.pdf", "pdf"),
    ("scan.pdf", "pdf"), ("encrypted.pdf", "pdf"), ("corrupt.pdf", "pdf"), ("letter.docx", "docx"),
    ("bomb.docx", "docx"), ("corrupt.docx", "docx"), ("image.png", None), ("archive.zip", None),
])
def test_kind_of_fixtures(name, kind):
    assert F.kind_of(name, None, fixture(name)) == kind


def test_kind_of_trusts_bytes_not_names():
    assert F.kind_of("notes.txt", "text/plain", fixture("letter.pdf")) == "pdf"
    assert F.kind_of("report.pdf", "application/pdf", fixture("contact.txt")) == "text"
    assert F.kind_of("photo.txt", "text/plain", fixture("image.png")) is None
    assert F.kind_of("letter.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                     fixture("archive.zip")) is None
    assert F.kind_of(None, None, fixture("letter.docx")) == "docx"
    assert F.kind_of(None, "application/octet-stream", bytes(range(256)) * 4) is None
    assert F.kind_of("a.bin", None, b"\x00\x01\x02\x03binary\x00\x00\xff\xfe\x10\x11" * 50) is None
    assert F.kind_of(None, None, b"plain words, no name") == "text"
    # a text that quotes the PDF header is still text
    assert F.kind_of("how-to.md", None, b"# PDFs\n\nEvery PDF starts with %PDF-1.7 and more.\n") == "text"


# --------------------------------------------------------------------------- text files


@pytest.mark.parametrize("name,encoding,bom", [
    ("contact.txt", "utf-8", False), ("contacts.csv", "utf-8", False), ("record.json", "utf-8", False),
    ("notes.md", "utf-8", True), ("utf16le_bom.txt", "utf-16-le", True), ("utf16be_bom.txt", "utf-16-be", True),
    ("utf16le_nobom.txt", "utf-16-le", False), ("main.py", "utf-8", False),
])
def test_text_round_trip(name, encoding, bom):
    data = fixture(name)
    ft = F.read_text("text", data, 100_000)
    assert (ft.encoding, ft.bom) == (encoding, bom)
    assert NAME in ft.text and EMAIL in ft.text
    assert not ft.text.startswith("\ufeff")
    new = F.rewrite("text", data, spans(ft.text))
    again = F.read_text("text", new)
    assert (again.encoding, again.bom) == (encoding, bom)
    assert "Nora Quist" in again.text and "nora.quist@example.com" in again.text
    no_leak(again.text)
    assert again.text == VALUES.sub(lambda m: NEW[m.group()], ft.text)  # nothing else changed
    prefix = {"utf-8": b"\xef\xbb\xbf", "utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}[encoding]
    assert new.startswith(prefix) == bom


def test_text_keeps_crlf_and_callable_form():
    data = fixture("contact.txt")
    new = F.rewrite("text", data, lambda t: VALUES.sub(lambda m: NEW[m.group()], t))
    assert new == b"Name: Nora Quist\r\nE-mail: nora.quist@example.com\r\nSSN: [BLOCKED]\r\n"


def test_text_cp1252_fallback():
    data = fixture("cp1252.txt")
    ft = F.read_text("text", data)
    assert ft.encoding == "cp1252" and ft.text.startswith("Søren Ærø") and "\u2013" in ft.text
    new = F.rewrite("text", data, spans(ft.text))
    assert new.decode("cp1252") == "Søren Ærø wrote to Nora Quist \u2013 nora.quist@example.com\n"
    # a replacement the encoding cannot hold degrades to "?" instead of failing
    i = ft.text.index(NAME)
    assert F.rewrite("text", data, [(i, i + len(NAME), "李雷")]).decode("cp1252").count("??") == 1


def test_unchanged_text_is_returned_as_is():
    data = fixture("notes.md")
    assert F.rewrite("text", data, []) is data
    assert F.rewrite("text", data, lambda t: t) is data


def test_text_truncation_and_bad_replacements():
    data = fixture("contacts.csv")
    ft = F.read_text("text", data, 20)
    assert ft.truncated and "truncated" in ft.flags and len(ft.text) == 20
    full = F.read_text("text", data).text
    assert full.startswith(ft.text)
    with pytest.raises(ValueError):
        F.rewrite("text", data, [(0, 5, "a"), (3, 8, "b")])
    with pytest.raises(ValueError):
        F.rewrite("text", data, [(0, len(full) + 1, "a")])


def test_binary_is_not_text():
    with pytest.raises(F.FileUnreadable):
        F.read_text("text", b"\x00\x01\x02\x03\x04\x05\x06\x07" * 64)


# --------------------------------------------------------------------------- PDF


def test_pdf_pages_and_metadata():
    ft = F.read_text("pdf", fixture("letter.pdf"))
    assert ft.pages == 2 and not ft.flags
    wheres = [b.where for b in ft.blocks]
    assert wheres == ["meta:author", "meta:title", "page 1", "page 2"]
    page1 = next(b for b in ft.blocks if b.where == "page 1")
    assert f"Patient: {NAME}" in ft.text[page1.start:page1.end] and EMAIL in ft.text[page1.start:page1.end]
    page2 = next(b for b in ft.blocks if b.where == "page 2")  # a FlateDecode stream
    assert SSN in ft.text[page2.start:page2.end]
    assert ft.text[ft.blocks[0].start:ft.blocks[0].end] == NAME
    assert F.rewrite("pdf", fixture("letter.pdf"), spans(ft.text)) is None  # never rewritten


def test_pdf_form_fields_scans_and_caps():
    form = F.read_text("pdf", fixture("form.pdf"))
    field = next(b for b in form.blocks if b.where == "field:ssn")
    assert form.text[field.start:field.end] == SSN
    scan = F.read_text("pdf", fixture("scan.pdf"))
    assert scan.text == "" and {"no_text", "images"} <= set(scan.flags)
    capped = F.read_text("pdf", fixture("letter.pdf"), limits=F.FileLimits(max_pages=1))
    assert "pages_capped" in capped.flags and SSN not in capped.text and NAME in capped.text
    short = F.read_text("pdf", fixture("letter.pdf"), 30)
    assert short.truncated and len(short.text) <= 30
    assert F.read_text("pdf", fixture("letter.pdf")).text.startswith(short.text)


def test_pdf_encrypted_and_corrupt():
    t = time.monotonic()
    with pytest.raises(F.FileUnreadable, match="password"):
        F.read_text("pdf", fixture("encrypted.pdf"))
    with pytest.raises(F.FileUnreadable, match="corrupt"):
        F.read_text("pdf", fixture("corrupt.pdf"))
    with pytest.raises(F.FileUnreadable):
        F.read_text("pdf", fixture("letter.pdf")[:600])
    with pytest.raises(F.FileUnreadable):
        F.read_text("pdf", fixture("contact.txt"))
    assert time.monotonic() - t < 5
    # an empty user password opens it for anyone (the service too): read, and say so
    owner = F.read_text("pdf", fixture("owner_only.pdf"))
    assert "encrypted" in owner.flags and SSN in owner.text


def test_pdf_stream_bomb_is_bounded():
    mod = _script()
    content = b"BT /F1 12 Tf 72 720 Td (%s) Tj ET\n" % NAME.encode() + b" " * (24 * 1024 * 1024)
    z = zlib.compress(content, 9)
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> " \
           b"/Contents 4 0 R >>"
    pdf = mod.pdf([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [5 0 R] /Count 1 >>", mod._FONT,
                   b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(z) + z + b"\nendstream", page])
    t = time.monotonic()
    with pytest.raises(F.FileUnreadable, match="LimitReached"):
        F.read_text("pdf", pdf)
    assert time.monotonic() - t < 2
    assert NAME in F.read_text("pdf", pdf, limits=F.FileLimits(max_stream_bytes=32 * 1024 * 1024)).text


# --------------------------------------------------------------------------- DOCX


def _zip_text(data: bytes) -> str:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return "\n".join(zf.read(n).decode("utf-8", "replace") for n in zf.namelist())


def test_docx_text_covers_body_tables_headers_meta_links():
    ft = F.read_text("docx", fixture("letter.docx"))
    lines = ft.text.split("\n")
    assert f"Patient: {NAME}, reachable at {EMAIL}." in lines  # the split name reads whole
    assert [NAME, EMAIL, SSN] == lines[lines.index("SSN") + 1: lines.index("SSN") + 4]  # table row
    assert f"Confidential: {NAME}" in lines and f"Contact {EMAIL}" in lines  # header and footer
    assert f"mailto:{EMAIL}" in lines  # the hyperlink target
    by = {b.where: ft.text[b.start:b.end] for b in ft.blocks}
    assert by["meta:author"] == NAME and by["meta:last_modified_by"] == NAME
    para = next(b for b in ft.blocks if ft.text[b.start:b.end].startswith("Patient"))
    assert [ft.text[a:b] for a, b in para.runs] == ["Patient: ", "Maria Jen", "sen", f", reachable at {EMAIL}."]
    assert not ft.flags


def test_docx_round_trip_keeps_first_run_formatting():
    import docx

    data = fixture("letter.docx")
    ft = F.read_text("docx", data)
    new = F.rewrite("docx", data, spans(ft.text))
    again = F.read_text("docx", new)
    no_leak(again.text)
    no_leak(_zip_text(new))  # nowhere in the package: parts, core properties, relationships
    assert again.text == VALUES.sub(lambda m: NEW[m.group()], ft.text)
    d = docx.Document(io.BytesIO(new))
    p = next(p for p in d.paragraphs if p.text.startswith("Patient"))
    assert p.text == "Patient: Nora Quist, reachable at nora.quist@example.com."
    run = next(r for r in p.runs if "Nora" in r.text)
    assert run.text == "Nora Quist" and run.bold and str(run.font.color.rgb) == "C00000" and not run.italic
    assert d.paragraphs[0].runs[0].bold and d.paragraphs[0].text == "Referral"  # untouched paragraph
    assert d.tables[0].cell(1, 2).text == "[BLOCKED]" and d.tables[0].cell(0, 0).text == "Name"
    assert d.sections[0].header.paragraphs[0].text == "Confidential: Nora Quist"
    assert d.core_properties.author == "Nora Quist"


def test_docx_callable_and_truncated_offsets():
    data = fixture("letter.docx")
    new = F.rewrite("docx", data, lambda t: VALUES.sub(lambda m: NEW[m.group()], t))
    no_leak(_zip_text(new))
    import docx

    p = next(p for p in docx.Document(io.BytesIO(new)).paragraphs if p.text.startswith("Patient"))
    assert next(r for r in p.runs if "Nora" in r.text).text == "Nora Quist"
    # spans found in a truncated read map back the same way
    short = F.read_text("docx", data, 70)
    assert short.truncated and F.read_text("docx", data).text.startswith(short.text)
    partial = F.rewrite("docx", data, spans(short.text))
    text = F.read_text("docx", partial).text
    assert text.startswith("Nora Quist\nNora Quist\nNotes\nReferral\nPatient: Nora Quist")
    assert SSN in text  # beyond the truncated read: untouched


def test_docx_value_inside_a_run_and_spaces():
    data = fixture("letter.docx")
    ft = F.read_text("docx", data)
    i = ft.text.index("reachable at ")
    new = F.rewrite("docx", data, [(i + len("reachable"), i + len("reachable at "), "  ")])
    assert "Nora" not in F.read_text("docx", new).text
    assert f"reachable  {EMAIL}." in F.read_text("docx", new).text  # spaces kept (xml:space)
    assert F.rewrite("docx", data, []) is data


def test_docx_zip_bomb_refused_quickly():
    data = fixture("bomb.docx")
    assert len(data) < 20_000
    t = time.monotonic()
    with pytest.raises(F.FileUnreadable, match="zip bomb"):
        F.read_text("docx", data)
    with pytest.raises(F.FileUnreadable, match="zip bomb"):
        F.rewrite("docx", data, [(0, 1, "x")])
    assert time.monotonic() - t < 0.5
    with pytest.raises(F.FileUnreadable, match="uncompressed"):
        F.read_text("docx", fixture("letter.docx"), limits=F.FileLimits(max_unzipped_bytes=1000))
    with pytest.raises(F.FileUnreadable, match="entries"):
        F.read_text("docx", fixture("letter.docx"), limits=F.FileLimits(max_entries=3))


def test_docx_corrupt_and_not_docx():
    with pytest.raises(F.FileUnreadable, match="corrupt"):
        F.read_text("docx", fixture("corrupt.docx"))
    with pytest.raises(F.FileUnreadable, match="no word/document.xml"):
        F.read_text("docx", fixture("archive.zip"))
    with pytest.raises(F.FileUnreadable):
        F.rewrite("docx", fixture("letter.pdf"), [])


# --------------------------------------------------------------------------- embedded in JSON


def test_data_urls_and_base64():
    pdf = fixture("letter.pdf")
    assert F.from_data_url(F.to_data_url("application/pdf", pdf)) == ("application/pdf", pdf)
    assert F.from_data_url("data:text/plain;charset=utf-8,Maria%20Jensen") == ("text/plain", b"Maria Jensen")
    assert F.from_data_url("data:;base64,aGk=") == ("text/plain", b"hi")
    assert F.from_data_url("https://example.org/a.pdf") is None
    assert F.from_data_url("data:application/pdf;base64,@@@") is None
    assert F.from_data_url(F.to_data_url("application/pdf", pdf), max_bytes=100) is None
    assert F.b64decode("aGk") == b"hi" and F.b64decode("-_8") == b"\xfb\xff" and F.b64decode("a b\nc=") is not None


def test_embedded_files_in_the_three_apis_and_bedrock():
    pdf, doc = fixture("letter.pdf"), fixture("letter.docx")
    body = {
        "input": [{"role": "user", "content": [
            {"type": "input_file", "filename": "letter.pdf", "file_data": F.to_data_url("application/pdf", pdf)},
            {"type": "input_text", "text": "summarise"}]}],
        "messages": [{"role": "user", "content": [
            {"type": "file", "file": {"filename": "letter.docx", "file_data": F.b64encode(doc)}},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                            "data": F.b64encode(pdf)}},
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": NAME}}]}],
        "contents": [{"role": "user", "parts": [{"text": "hi"},
                                                {"inlineData": {"mimeType": "application/pdf", "data": F.b64encode(pdf)}}]}],
        "bedrock": [{"document": {"format": "docx", "name": "letter", "source": {"bytes": F.b64encode(doc)}}}],
    }
    found = F.embedded_files(json.loads(json.dumps(body)))
    got = [(e.api, e.style, e.content_type, e.filename, bodies.json_path(e.path)) for e in found]
    assert got == [
        ("openai", "data_url", "application/pdf", "letter.pdf", "$.input[0].content[0].file_data"),
        ("openai", "base64", None, "letter.docx", "$.messages[0].content[0].file.file_data"),
        ("anthropic", "base64", "application/pdf", None, "$.messages[0].content[1].source.data"),
        ("anthropic", "text", "text/plain", None, "$.messages[0].content[2].source.data"),
        ("gemini", "base64", "application/pdf", None, "$.contents[0].parts[1].inlineData.data"),
        ("bedrock", "base64", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "letter",
         "$.bedrock[0].document.source.bytes"),
    ]
    assert found[0].data == pdf and found[1].data == doc and found[3].data == NAME.encode()
    assert [F.kind_of(e.filename, e.content_type, e.data) for e in found] == ["pdf", "docx", "pdf", "text", "pdf",
                                                                              "docx"]


def test_embedded_file_replace_keeps_style():
    doc = fixture("letter.docx")
    body = {"input": [{"type": "input_file", "filename": "l.docx",
                       "file_data": F.to_data_url("application/vnd.openxmlformats-officedocument.wordprocessingml."
                                                  "document", doc)}],
            "contents": [{"parts": [{"inline_data": {"mime_type": "text/plain", "data": F.b64encode(
                fixture("contact.txt"))}}]}],
            "source": {"type": "text", "media_type": "text/plain", "data": f"Dear {NAME}"}}
    for e in F.embedded_files(body):
        kind = F.kind_of(e.filename, e.content_type, e.data)
        e.replace(F.rewrite(kind, e.data, spans(F.read_text(kind, e.data).text)))
    assert body["input"][0]["file_data"].startswith("data:application/vnd.openxmlformats-officedocument.")
    doc2 = F.from_data_url(body["input"][0]["file_data"])[1]
    no_leak(_zip_text(doc2))
    txt = F.b64decode(body["contents"][0]["parts"][0]["inline_data"]["data"])
    assert txt == b"Name: Nora Quist\r\nE-mail: nora.quist@example.com\r\nSSN: [BLOCKED]\r\n"
    assert body["source"]["data"] == "Dear Nora Quist"


# --------------------------------------------------------------------------- multipart


def _multipart(boundary: str, parts: list[tuple[str, str | None, str, bytes]]) -> bytes:
    out = b""
    for name, filename, ctype, data in parts:
        disp = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        out += f"--{boundary}\r\nContent-Disposition: {disp}\r\nContent-Type: {ctype}\r\n".encode()
        if filename == "letter.docx":
            out += f"Content-Length: {len(data)}\r\n".encode()
        out += b"\r\n" + data + b"\r\n"
    return out + f"--{boundary}--\r\n".encode()


def test_multipart_file_parts_round_trip():
    boundary = "----guardianXYZ"
    doc, u16 = fixture("letter.docx"), fixture("utf16le_bom.txt")
    body = _multipart(boundary, [("purpose", None, "text/plain", b"assistants"),
                                 ("file", "letter.docx", "application/vnd.openxmlformats-officedocument."
                                  "wordprocessingml.document", doc),
                                 ("notes", "notes.txt", "text/plain", u16)])
    pb = bodies.parse_body(body, f"multipart/form-data; boundary={boundary}", None, bodies.BodyLimits())
    refs = F.multipart_files(pb)
    assert [(r.name, r.filename) for r in refs] == [("file", "letter.docx"), ("notes", "notes.txt")]
    assert refs[0].data == doc and refs[1].data == u16  # the UTF-16 file was not readable as a form field
    new = {}
    for r in refs:
        kind = F.kind_of(r.filename, r.content_type, r.data)
        new[r.index] = F.rewrite(kind, r.data, spans(F.read_text(kind, r.data).text))
    F.replace_file_parts(pb, new)
    out = bodies.write_back(pb, {"form:purpose": "batch"})  # text fields compose with the new files
    again = bodies.parse_body(out, f"multipart/form-data; boundary={boundary}", None, bodies.BodyLimits())
    assert {f.path: f.text for f in again.fields}["form:purpose"] == "batch"
    r2 = F.multipart_files(again)
    no_leak(_zip_text(r2[0].data))
    assert F.read_text("text", r2[1].data).text.startswith("Kontakt: Nora Quist <nora.quist@example.com>")
    assert f"Content-Length: {len(r2[0].data)}\r\n".encode() in out
    assert F.multipart_files(bodies.parse_body(b'{"a": 1}', "application/json", None, bodies.BodyLimits())) == []

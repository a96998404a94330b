"""Write the small sample files tests/unit/bodies/test_files.py reads (tests/fixtures/files/).

    .venv/bin/python scripts/make_file_fixtures.py [OUTDIR]

Every file carries the same made-up person (Maria Jensen, maria.jensen@example.org, SSN 536-22-1987) so
a test can check that a rewrite leaves nothing of them. PDFs are written by hand (a text content stream
in Helvetica, xref offsets computed here); DOCX files are made with python-docx from a minimal base
package and re-zipped with fixed timestamps, so every file but the encrypted PDFs (pypdf salts them)
comes out byte for byte the same on each run. Each file stays under 20 kB.
"""

from __future__ import annotations

import io
import json
import struct
import sys
import zipfile
import zlib
from pathlib import Path

NAME, EMAIL, SSN = "Maria Jensen", "maria.jensen@example.org", "536-22-1987"
OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "files"
_FIXED = (1980, 1, 1, 0, 0, 0)

# --------------------------------------------------------------------------- text


def text_files() -> dict[str, bytes]:
    return {
        "contact.txt": f"Name: {NAME}\r\nE-mail: {EMAIL}\r\nSSN: {SSN}\r\n".encode(),
        "contacts.csv": f"name,email,ssn\n{NAME},{EMAIL},{SSN}\nJohn Roe,john.roe@example.net,\n".encode(),
        "record.json": json.dumps({"patient": {"name": NAME, "email": EMAIL, "ssn": SSN}, "visits": 3}).encode()
        + b"\n",
        "notes.md": f"\ufeff# Notes for Zoë\n\nMet **{NAME}** ({EMAIL}) today; SSN on file: {SSN}.\n".encode(),
        "utf16le_bom.txt": b"\xff\xfe" + f"Kontakt: {NAME} <{EMAIL}>\nSSN {SSN}\n".encode("utf-16-le"),
        "utf16be_bom.txt": b"\xfe\xff" + f"Kontakt: {NAME} <{EMAIL}>\nSSN {SSN}\n".encode("utf-16-be"),
        "utf16le_nobom.txt": f"Kontakt: {NAME} <{EMAIL}>\nSSN {SSN}\n".encode("utf-16-le"),
        "cp1252.txt": f"Søren Ærø wrote to {NAME} \u2013 {EMAIL}\n".encode("cp1252"),
        "main.py": f'OWNER = "{NAME}"\nCONTACT = "{EMAIL}"  # ask before mailing\n'.encode(),
    }


# --------------------------------------------------------------------------- binary that is not read


def png() -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    raw = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def plain_zip() -> bytes:
    return _zip([("readme.txt", f"{NAME}\n".encode()), ("data/list.csv", f"{EMAIL}\n".encode())])


# --------------------------------------------------------------------------- PDF


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf(objects: list[bytes], info: int | None = None) -> bytes:
    """A PDF whose object n is objects[n-1]; object 1 is the catalog."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    trailer = b"<< /Size %d /Root 1 0 R" % (len(objects) + 1) + (b" /Info %d 0 R" % info if info else b"") + b" >>"
    out += b"trailer\n" + trailer + b"\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def _stream(content: bytes, compress: bool = False) -> bytes:
    if compress:
        content = zlib.compress(content)
        return b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content + b"\nendstream"
    return b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"


def _lines(lines: list[str]) -> bytes:
    body = "BT /F1 12 Tf 72 720 Td 16 TL " + " ".join(f"({_esc(line)}) Tj T*" for line in lines) + " ET"
    return body.encode("cp1252")


_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"


def letter_pdf() -> bytes:
    page = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            b"/Contents %d 0 R >>")
    return pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R 5 0 R] /Count 2 >>",
        _FONT,
        page % 6,
        page % 7,
        _stream(_lines(["Referral letter", f"Patient: {NAME}", f"E-mail: {EMAIL}"])),
        _stream(_lines([f"SSN {SSN}, seen on 2 March 2024.", "Kind regards, Dr. Ole Berg"]), compress=True),
        b"<< /Author (%s) /Title (Referral for %s) /Producer (guardian-proxy fixtures) >>"
        % (_esc(NAME).encode(), _esc(NAME).encode()),
    ], info=8)


def form_pdf() -> bytes:
    return pdf([
        b"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [6 0 R] /NeedAppearances true >> >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        _FONT,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
        b"/Contents 5 0 R /Annots [6 0 R] >>",
        _stream(_lines(["Application form", "Social security number:"])),
        b"<< /Type /Annot /Subtype /Widget /FT /Tx /T (ssn) /V (%s) /Rect [72 600 300 620] /P 4 0 R /F 4 >>"
        % SSN.encode(),
    ])


def scan_pdf() -> bytes:
    img = zlib.compress(bytes(range(0, 256, 16)) * 16)
    return pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im1 5 0 R >> >> "
        b"/Contents 4 0 R >>",
        _stream(b"q 400 0 0 400 100 200 cm /Im1 Do Q"),
        b"<< /Type /XObject /Subtype /Image /Width 16 /Height 16 /ColorSpace /DeviceGray /BitsPerComponent 8 "
        b"/Filter /FlateDecode /Length %d >>\nstream\n" % len(img) + img + b"\nendstream",
    ])


def encrypted_pdf(user: str, owner: str) -> bytes:
    from pypdf import PdfReader, PdfWriter

    w = PdfWriter(clone_from=PdfReader(io.BytesIO(letter_pdf())))
    w.encrypt(user_password=user, owner_password=owner, algorithm="AES-128")
    buf = io.BytesIO()
    w.write(buf)
    return buf.getvalue()


def corrupt_pdf() -> bytes:
    good = letter_pdf()
    return good[:40] + bytes((b * 7 + 3) % 256 for b in good[40:400]) + b"\n%%EOF\n"


# --------------------------------------------------------------------------- DOCX

_CT = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>
</Types>"""
_RELS = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>
<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>
</Relationships>"""
_W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_DOC = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="{_W_NS}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">
<w:body><w:sectPr><w:pgSz w:w="12240" w:h="15840"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="720" w:footer="720" w:gutter="0"/></w:sectPr></w:body></w:document>"""
_CORE = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<dc:title>Notes</dc:title><dc:creator>{name}</dc:creator><cp:lastModifiedBy>{name}</cp:lastModifiedBy>
<dcterms:created xsi:type="dcterms:W3CDTF">2024-03-02T10:00:00Z</dcterms:created>
</cp:coreProperties>"""


def _zip(entries: list[tuple[str, bytes]], level: int = 9) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as zf:
        for name, body in entries:
            zf.writestr(zipfile.ZipInfo(name, _FIXED), body, zipfile.ZIP_DEFLATED, level)
    return buf.getvalue()


def _normalised(data: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return _zip([(zi.filename, zf.read(zi)) for zi in zf.infolist()])


def base_docx() -> bytes:
    return _zip([("[Content_Types].xml", _CT.encode()), ("_rels/.rels", _RELS.encode()),
                 ("word/document.xml", _DOC.encode()), ("docProps/core.xml", _CORE.format(name=NAME).encode())])


def letter_docx() -> bytes:
    import docx
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn
    from docx.shared import Pt, RGBColor

    d = docx.Document(io.BytesIO(base_docx()))
    title = d.add_paragraph().add_run("Referral")
    title.bold, title.font.size = True, Pt(16)
    p = d.add_paragraph("Patient: ")
    r1 = p.add_run("Maria Jen")  # the name split across two runs with different formatting
    r1.bold, r1.font.color.rgb = True, RGBColor(0xC0, 0x00, 0x00)
    r2 = p.add_run("sen")
    r2.italic = True
    p.add_run(f", reachable at {EMAIL}.")
    table = d.add_table(rows=2, cols=3)
    for cell, text in zip(table.rows[0].cells, ("Name", "E-mail", "SSN"), strict=True):
        cell.text = text
    for cell, text in zip(table.rows[1].cells, (NAME, EMAIL, SSN), strict=True):
        cell.text = text
    link_p = d.add_paragraph("Write to ")
    rid = d.part.relate_to(f"mailto:{EMAIL}", RT.HYPERLINK, is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), rid)
    run = OxmlElement("w:r")
    t = OxmlElement("w:t")
    t.text = "her"
    run.append(t)
    link.append(run)
    link_p._p.append(link)
    sec = d.sections[0]
    sec.header.paragraphs[0].text = f"Confidential: {NAME}"
    sec.footer.paragraphs[0].text = f"Contact {EMAIL}"
    buf = io.BytesIO()
    d.save(buf)
    return _normalised(buf.getvalue())


def bomb_docx(size: int = 16 * 1024 * 1024) -> bytes:
    """A DOCX whose document.xml inflates to `size` bytes (16 MiB) from about 16 kB on disk."""
    head = f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="{_W_NS}"><w:body><w:p>' \
           '<w:r><w:t xml:space="preserve">'.encode()
    tail = b"</w:t></w:r></w:p></w:body></w:document>"
    doc = head + b" " * (size - len(head) - len(tail)) + tail
    return _zip([("[Content_Types].xml", _CT.replace(
        '<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.'
        'core-properties+xml"/>\n', "").encode()),
        ("_rels/.rels", _RELS.encode()), ("word/document.xml", doc)])


# --------------------------------------------------------------------------- all


def build(out: Path = OUT) -> dict[str, int]:
    files = dict(text_files())
    files.update({
        "image.png": png(),
        "archive.zip": plain_zip(),
        "letter.pdf": letter_pdf(),
        "form.pdf": form_pdf(),
        "scan.pdf": scan_pdf(),
        "encrypted.pdf": encrypted_pdf("secret", "owner"),
        "owner_only.pdf": encrypted_pdf("", "owner"),
        "corrupt.pdf": corrupt_pdf(),
        "letter.docx": letter_docx(),
        "bomb.docx": bomb_docx(),
    })
    files["corrupt.docx"] = files["letter.docx"][:1500]
    out.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        assert len(data) < 20_000, (name, len(data))
        (out / name).write_bytes(data)
    return {name: len(data) for name, data in files.items()}


#: files whose bytes differ on each run (pypdf salts the encryption)
UNSTABLE = frozenset({"encrypted.pdf", "owner_only.pdf"})

if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    for n, size in build(target).items():
        print(f"{size:7d}  {target / n}")

"""Files sent to AI services (stage 7): their text is decided like the prompt.

A chat request's embedded files (OpenAI `input_file`/`file.file_data`, Anthropic `document` sources,
Gemini `inlineData`, Bedrock `document` bytes) and a raw upload to an AI service (the body is the file:
the web apps' upload URLs) become `Attachment`s; their text is one more user slot of the conversation, so
its values get the conversation's surrogates and SSN/card/bank account numbers become [BLOCKED].

Stated rules:
- plain-text files (txt, md, csv, json, code …) and DOCX are rewritten in place, in their own encoding and
  format (`bodies.files.rewrite`);
- a PDF cannot be rewritten: when its text carries a value the conversation would replace, the request is
  blocked (`file-not-rewritable`, the reason names the file and what it carries); a PDF without one passes;
- a file that cannot be read (encrypted, broken, over the bounds) passes when it is a kind the services
  read themselves and the text around it decides the request; its flag is logged (`files_unread`);
- images, audio and other binary files are not read (their text, if any, is not seen).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from ..bodies import files as F

log = logging.getLogger("guardian_proxy")
MAX_CHARS = 400_000  # text read per file


@dataclass
class Attachment:
    kind: str  # text | pdf | docx
    name: str | None
    data: bytes
    text: str
    put: Callable[[bytes], None]  # writes new bytes back into the request
    new_text: str | None = None  # set by the session stage when the text was rewritten

    @property
    def writable(self) -> bool:
        return self.kind in (F.TEXT, F.DOCX)

    def label(self) -> str:
        return f"{self.kind.upper()} file{f' {self.name!r}' if self.name else ''}"

    def commit(self) -> bool:
        """Write the rewritten text back into the file; False when this kind cannot be rewritten."""
        if self.new_text is None or self.new_text == self.text:
            return True
        if not self.writable:
            return False
        new = F.rewrite(self.kind, self.data, F.diff(self.text, self.new_text))
        if new is None:
            return False
        self.put(new)
        return True


def _read(kind: str | None, data: bytes) -> str | None:
    if kind is None:
        return None
    try:
        return F.read_text(kind, data, MAX_CHARS).text
    except F.FileUnreadable as e:
        log.info("guardian: a %s file sent to an AI service was not read (%s)", kind, e)
        return None


def embedded(data) -> tuple[list[Attachment], int]:
    """The readable files embedded in a parsed chat body, and how many could not be read."""
    out, unread = [], 0
    for ef in F.embedded_files(data):
        kind = F.kind_of(ef.filename, ef.content_type, ef.data)
        text = _read(kind, ef.data)
        if text is None:
            unread += kind is not None
            continue
        out.append(Attachment(kind, ef.filename, ef.data, text, ef.replace))
    return out, unread


def multipart(parsed) -> list[Attachment]:
    """The readable file parts of a multipart upload; new bytes go back into `parsed` (bodies.write_back)."""
    out = []
    for ref in F.multipart_files(parsed):
        kind = F.kind_of(ref.filename, ref.content_type, ref.data)
        text = _read(kind, ref.data)
        if text is not None:
            out.append(Attachment(kind, ref.filename, ref.data, text,
                                  lambda b, i=ref.index: F.replace_file_parts(parsed, {i: b})))
    return out


def upload(body: bytes, content_type: str | None, name: str | None, put: Callable[[bytes], None]) -> Attachment | None:
    """A raw file upload (the body is the file), or None when it is no file this module reads."""
    kind = F.kind_of(name, content_type, body)
    text = _read(kind, body)
    return Attachment(kind, name, body, text, put) if text is not None else None

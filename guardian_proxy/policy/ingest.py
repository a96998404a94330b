"""Ingestion: one policy document → statements in the user store, with a report of what happened.

Never raises on bad input. Empty documents and non-English ones are not stored (the stage only
understands English); enormous ones are cut (`documents.MAX_INPUT_CHARS`, `MAX_TEXT_CHARS`, at most
`segment.MAX_STATEMENTS` statements) and flagged `truncated`.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from .documents import to_text
from .segment import Segmenter
from .store import PolicyStore


@dataclass
class IngestReport:
    domain: str
    statements: int = 0
    stored: bool = False
    flags: list[str] = field(default_factory=list)  # empty, non_english, truncated, html_fallback, not_policy ...
    chars: int = 0
    title: str | None = None
    format: str | None = None

    @property
    def message(self) -> str:
        what = f"{self.statements} statements from {self.chars} characters ({self.format})"
        if not self.stored:
            why = ", ".join(self.flags) or "nothing to store"
            return f"{self.domain}: not stored ({why}); {what}"
        notes = f"; {', '.join(self.flags)}" if self.flags else ""
        return f"{self.domain}: stored {what}{notes}"

    def log_record(self) -> dict:
        return {"ts": round(time.time(), 3), **asdict(self)}


def ingest(store: PolicyStore, segmenter: Segmenter, domain: str, content: str | bytes, *,
           content_type: str | None = None, origin: str | None = None, name: str | None = None,
           kind: str = "added", require_policy: str | None = None) -> IngestReport:
    """Segment a document and store it for `domain`. `require_policy` (a URL) makes the document pass the
    privacy-page heuristics first (URL, then title): pages that are not policies are reported `not_policy`."""
    from .documents import is_policy_page

    doc = to_text(content, content_type, origin)
    report = IngestReport(domain=domain, flags=list(doc.flags), chars=len(doc.text), title=doc.title,
                         format=doc.format)
    if require_policy is not None and not is_policy_page(require_policy, doc.title, doc.text):
        report.flags.append("not_policy")
        return report
    if "empty" in doc.flags or "non_english" in doc.flags:
        return report
    title = name or doc.title or origin or domain
    statements = segmenter.segment(doc, domain, source=title)
    report.statements = len(statements)
    if len(statements) >= 3000 and "truncated" not in report.flags:
        report.flags.append("truncated")
    if not statements:
        report.flags.append("no_statements")
        return report
    document = {"title": title, "origin": origin or title, "kind": kind, "chars": len(doc.text),
                "format": doc.format, "flags": list(doc.flags), "added": round(time.time())}
    store.add(domain, statements, document)
    report.stored = True
    return report

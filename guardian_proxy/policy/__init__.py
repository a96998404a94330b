"""Stage 2: Action → policy evidence (top-8 statements) and a transparency level.

    documents     HTML / Markdown / text → normalised text in blocks; privacy-page heuristics
    lexicon       rules: sentence → practice, data categories, recipients, purposes, condition, retention
    segment       spaCy sentences + lexicon + heading/lead-in context → Statements
    store         shipped corpus (policies/) + user store (<state_dir>/policies)
    retrieval     hybrid α·field overlap + (1−α)·BM25Plus, top 8
    transparency  full / partial / vague / none per domain and action
    ingest        one document → user store, with a report
    evidence      the stage the Gateway calls (retrieve, add, learn)
"""

from .evidence import EvidenceStage
from .ingest import IngestReport
from .segment import Segmenter
from .store import PolicyStore

__all__ = ["EvidenceStage", "IngestReport", "PolicyStore", "Segmenter"]

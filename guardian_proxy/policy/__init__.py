"""Stage 2: Action → policy evidence (top-8 statements) and a transparency level."""

from .evidence import EvidenceStage

__all__ = ["EvidenceStage"]

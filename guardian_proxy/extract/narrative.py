"""Quasi-identifiers in free text (dates, ages, organisations/employers, case numbers, amounts …)
that Presidio's defaults miss. Called by the Detector with the spaCy Doc it already computed.

Returns (start, end, entity, score) tuples; entity labels come from `types.ENTITIES`.
"""

from __future__ import annotations


def detect_quasi(text: str, doc) -> list[tuple[int, int, str, float]]:
    return []

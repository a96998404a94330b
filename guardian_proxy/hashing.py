"""Signed hashed features: a text's grams → (bucket ids, ±weights), the feature vector of the project's small
linear readers (the likelihood's statement reader, the session's message reader). crc32 of each distinct gram,
2^bits buckets, the sign from bit 31, optionally scaled by a per-bucket idf, L2-normalised."""

from __future__ import annotations

import zlib
from collections.abc import Iterable

import numpy as np


def signed_buckets(grams: Iterable[str], bits: int, idf: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    hs = sorted({zlib.crc32(g.encode()) for g in grams})
    if not hs:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    h = np.array(hs, dtype=np.uint64)
    ids = (h & np.uint64((1 << bits) - 1)).astype(np.int64)
    w = np.where((h >> np.uint64(31)) & np.uint64(1), -1.0, 1.0).astype(np.float32)
    if idf is not None:
        w *= idf[ids]
    return ids, w / np.float32(max(1e-6, float(np.sqrt(np.dot(w, w)))))

"""Stage 1: request → Action (six-tuple) with located sensitive spans."""

from .extractor import Extractor

__all__ = ["Extractor"]

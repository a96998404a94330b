"""Stage 6: rewrite the located spans at a level L1–L5 and write them back into the request."""

from .transformer import Transformer

__all__ = ["Transformer"]

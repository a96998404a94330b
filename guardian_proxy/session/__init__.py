"""Stage 7: conversations with AI services — session registry, cumulative exposure (CPE), consistent
pseudonyms, retroactive rewriting, the encrypted vault and de-masking of responses (CAMP)."""

from .stage import SessionStage

__all__ = ["SessionStage"]

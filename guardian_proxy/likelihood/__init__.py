"""Stage 3: (Action, Evidence) → violation likelihood L."""

from .fixed import FixedLikelihood

__all__ = ["FixedLikelihood"]

"""A fixed likelihood (path `fixed`): used for the context sweep and when configured."""

from __future__ import annotations

from ..types import Action, Evidence, Likelihood


class FixedLikelihood:
    def __init__(self, value: float = 0.7):
        self.value = value

    def estimate(self, action: Action, evidence: Evidence) -> Likelihood:
        return Likelihood(value=self.value, path="fixed", reason="fixed likelihood")

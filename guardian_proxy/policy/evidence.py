"""Evidence stage. Until a policy store is loaded, every domain has transparency `none`."""

from __future__ import annotations

from ..types import Action, Evidence


class EvidenceStage:
    def retrieve(self, action: Action) -> Evidence:
        return Evidence(statements=[], transparency="none")

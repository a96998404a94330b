"""Overrides from the dashboard's buttons, through the shared persistent store (guardian_proxy.overrides).

The store is `<state_dir>/overrides.yaml`; the running Gateway re-reads it when it changes, so a click
applies to the next request and survives restarts. Numbers are those of `guardian-proxy overrides`
(config entries first, then the store's; the last matching entry wins).
"""

from __future__ import annotations

from ..config import Override, Settings
from ..overrides import OverrideStore, normalize_domain


class DashboardOverrides:
    def __init__(self, settings: Settings, store: OverrideStore | None = None):
        self.store = store if store is not None else OverrideStore.for_settings(settings)

    @property
    def path(self):
        return self.store.path

    def entries(self) -> list[dict]:
        return [dict(o.model_dump(exclude_none=True), number=n, source=src) for n, src, o in self.store.listing()]

    def add(self, action: str, domain: str, category: str | None = None) -> Override:
        """Always allow / always deny a domain, or one category for a domain."""
        o = Override(action=action, domain=normalize_domain(domain) or None, category=category or None)
        self.store.add(o)
        return o

    def remove(self, number: int) -> Override:
        return self.store.remove(number)

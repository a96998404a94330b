"""Overrides from the dashboard's buttons and the block page, through the shared persistent store
(OverrideStore, overrides/store.py).

The store is the configured back end (`<state_dir>/overrides.yaml`, or the fleet's Redis with state.backend
redis); every process and gateway re-reads it when it changes, so a click applies to the next request (on
the other gateways of a fleet within a second). The shared store not answering: the list shown is the last
good one, and an add or remove is refused with a ValueError saying why (a 400 / 409 answer, never a 500).
Each rule has a stable id (`remove` takes it; a number, as old pages send, is the position in
`guardian-proxy overrides` order). A rule lasts forever, `once`, for a duration ('1h') or until `restart` —
the dashboard runs inside the proxy, so "until restart" is this process's run.
"""

from __future__ import annotations

from ..config import Override, Settings
from ..state import StateUnavailable
from .store import OverrideStore
from .targets import normalize_domain
from .terms import this_run, with_term

TERMS_HELP = "for: forever | once | restart | a duration such as 30m, 1h, 2d"


class DashboardOverrides:
    def __init__(self, settings: Settings, store: OverrideStore | None = None):
        self.store = store if store is not None else OverrideStore.for_settings(settings)

    @property
    def path(self):
        return self.store.path

    def entries(self) -> list[dict]:
        """Each rule with id, source, state, term, created, expires, matched, last_matched (and `number`)."""
        return [dict(r, number=r["n"]) for r in self.store.rows(strict=False)]

    def add(self, action: str, domain: str, category: str | None = None, term: str | None = None,
            app: str | None = None) -> Override:
        """Allow / deny a domain, or one category for a domain, for a term (None: forever); `app`: only what that
        program sends (the Apps tab's buttons; procinfo.app_matches_rule)."""
        o = Override(action=action, domain=normalize_domain(domain) or None, category=category or None,
                     app=app or None)
        try:
            return self.store.add_rule(with_term(o, term, run=this_run()))
        except StateUnavailable as e:
            raise ValueError(f"not saved: {e}") from None

    def remove(self, key: int | str) -> Override:
        """Remove by id (a str) or, for old pages, by number (an int)."""
        try:
            return self.store.remove(key)
        except StateUnavailable as e:
            raise ValueError(f"not removed: {e}") from None

"""User overrides: rules a person sets (`guardian-proxy allow|deny|level`, the dashboard, the block page) that
replace the gateway's decision for the requests they match.

    store.py     OverrideStore: the config's rules plus the stored ones, ids, counts, once rules spent once
    terms.py     how long a rule lasts (forever, once, for a time, until restart) and whether it applies now
    targets.py   what a rule may name: a domain, an owner the recipient tables know
    match.py     which rule applies to a request, and what it makes of the decision
    edits.py     the dashboard's and block page's edits

Where the rules are stored (local files or the fleet's Redis) is guardian_proxy/state/overrides.py: this
package opens its back end with guardian_proxy.state.open_overrides and never imports one.
"""

from __future__ import annotations

from ..config import Override
from ..state.overrides import COUNTS_NAME, FILE_NAME
from .edits import TERMS_HELP, DashboardOverrides
from .match import apply_override, describe_override, find_override, is_preflight
from .store import Active, OverrideStore
from .targets import check_owner, known_owners, normalize_domain
from .terms import parse_duration, term_of, this_run, with_term

__all__ = ["COUNTS_NAME", "FILE_NAME", "TERMS_HELP", "Active", "DashboardOverrides", "Override", "OverrideStore",
           "apply_override", "check_owner", "describe_override", "find_override", "is_preflight", "known_owners",
           "normalize_domain", "parse_duration", "term_of", "this_run", "with_term"]

"""Norms of the flow: is this request the service's own function, started by the user?

Contextual integrity judges a flow by the norms of its context, not by the text of a policy alone. A password
to the site's own sign-in, a card number to the merchant's payment processor during checkout, a message to the
mail service the user is writing in: these are what the user asked for, and a policy that never mentions
passwords is not evidence that sending one is a violation. The same data to someone the user did not address
(an analytics identify call, an ad pixel, session replay, a broker) follows no norm, whatever the policy says.

`FlowNorms.match(action)` returns the first norm of factor_tables/norms.yaml that the action follows, or None.
The pipeline then uses the norm's L instead of the evidential estimate (Likelihood path `norm`); Sd, Mtr, Mp,
Mb and MT are applied as always, so R, the tiers and the explanation stay AMRSF's. The rules, in plain words:

  - the recipient class (and, for identity providers and payment processors, the destination's role) is one
    the norm names; trackers, ad networks, brokers, social networks and AI services never follow a norm
  - the request was made by the user or by the page for the user (basis `user` or `default`), never a
    background beacon, pixel or prefetch
  - no tracking purpose (analytics, advertising, profiling) was declared by the endpoint, unless it also names a
    function (`/billing_requests/…/collect_bank_account` is a payment)
  - every personal-data category in it is one the function needs (where the norm lists them)
  - for a service a page embeds (maps, address search, support widgets), the request came from a page
  - for the user's own account elsewhere, the request is signed in to its destination (flag `signed_in`) and no
    page made it (a CLI or script: from a page, an Authorization header is as often the site's key for an SDK)
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import FactorTables
from .types import TRACKER_CLASSES, Action

TRACKING_PURPOSES = frozenset({"analytics", "advertising", "profiling"})
FUNCTIONAL_PURPOSES = frozenset({"authentication", "payment", "functionality", "security"})
NEVER = frozenset(TRACKER_CLASSES) | {"ai_service"}  # recipients no norm ever covers


@dataclass(frozen=True)
class NormMatch:
    name: str
    L: float
    says: str


class FlowNorms:
    def __init__(self, tables: FactorTables):
        self.norms = tables.norms

    def match(self, action: Action) -> NormMatch | None:
        if action.recipient in NEVER or "cname_cloaked" in action.flags:
            return None
        if TRACKING_PURPOSES & set(action.purposes) and not FUNCTIONAL_PURPOSES & set(action.purposes):
            return None  # an endpoint that only measures (a path that names a function as well is the function)
        cats = set(action.personal())
        for name, n in self.norms.items():
            if action.recipient not in n.recipients or action.basis not in n.bases:
                continue
            if n.roles and action.role not in n.roles:
                continue
            if action.role and not n.roles and action.recipient != "first_party":
                continue  # a processor with a role is judged by its role's norm alone (what that function needs)
            if n.purposes_any and not set(n.purposes_any) & set(action.purposes):
                continue
            if n.categories and not cats <= set(n.categories):
                continue
            if n.from_page and action.site is None:
                continue
            if n.signed_in and "signed_in" not in action.flags:
                continue
            if n.without_page and action.site is not None:
                continue
            return NormMatch(name, n.L, n.says)
        return None

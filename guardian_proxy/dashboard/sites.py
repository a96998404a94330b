"""The per-site view: the recent decisions grouped by the page that made them (the Privacy Badger question,
"on shop.example, these 14 third parties got this").

A decision's site is the registrable domain of its initiating page (Origin, then Referer: Action.site). A
destination of another registrable domain is a third party of that site; requests to the site's own domain are
counted as its own. Third parties are grouped by registrable domain (their hosts listed), each with what it
received: categories that went as is (allowed), rewritten (transformed) and stopped (blocked). Decisions with no
known page (apps, command-line tools, the browser itself) form one group, `site` None. Sites with the most third
parties come first.

CORS preflights (OPTIONS: the browser asking whether it may send, carrying no data of the page) are counted apart
(`preflights`, per site and per third party) and not as requests: a third party that only got preflights is not
listed as one that got requests.
"""

from __future__ import annotations

from collections import Counter

from ..domains import registrable_domain
from .stats import ACTIONS

_RECEIVED = {"allow": "as_is", "transform": "rewritten", "deny": "blocked"}


def group_by_site(summaries) -> list[dict]:
    sites: dict = {}
    for s in summaries:
        site = s.get("site") or None
        g = sites.setdefault(site, {"site": site, "requests": 0, "own": 0, "third": {}, "preflights": 0,
                                    "preflight_hosts": Counter(), "actions": Counter(), "last_ts": 0.0})
        if (s.get("method") or "").upper() == "OPTIONS":
            g["preflights"] += 1
            g["preflight_hosts"][registrable_domain(s.get("host") or "?")] += 1
            g["last_ts"] = max(g["last_ts"], float(s.get("ts") or 0.0))
            continue
        g["requests"] += 1
        g["actions"][s.get("action")] += 1
        g["last_ts"] = max(g["last_ts"], float(s.get("ts") or 0.0))
        host = s.get("host") or "?"
        dom = registrable_domain(host)
        if site is not None and dom == site:
            g["own"] += 1
            continue
        t = g["third"].get(dom)
        if t is None:
            t = g["third"][dom] = {"domain": dom, "hosts": [], "recipient": None, "requests": 0,
                                   "actions": Counter(), "as_is": Counter(), "rewritten": Counter(),
                                   "blocked": Counter(), "max_R": None}
        if host not in t["hosts"]:
            t["hosts"].append(host)
        t["recipient"] = s.get("recipient") or t["recipient"]
        t["requests"] += 1
        t["actions"][s.get("action")] += 1
        cats = {c: int(n) for c, n in (s.get("categories") or {}).items() if isinstance(n, int | float) and n > 0}
        if s.get("action") in _RECEIVED:
            t[_RECEIVED[s["action"]]].update(cats)
        r = s.get("R")
        if isinstance(r, int | float):
            t["max_R"] = r if t["max_R"] is None else max(t["max_R"], r)
    out = []
    for g in sites.values():
        third = sorted(g["third"].values(), key=lambda t: (-t["requests"], t["domain"]))
        for t in third:
            t["preflights"] = g["preflight_hosts"].get(t["domain"], 0)
            for k in ("as_is", "rewritten", "blocked"):
                t[k] = dict(t[k])
            t["actions"] = {a: t["actions"].get(a, 0) for a in ACTIONS}
        out.append({"site": g["site"], "requests": g["requests"], "own_requests": g["own"],
                    "preflights": g["preflights"],
                    "third_parties": len(third), "actions": {a: g["actions"].get(a, 0) for a in ACTIONS},
                    "last_ts": g["last_ts"], "third": third})
    return sorted(out, key=lambda g: (g["site"] is None, -g["third_parties"], -g["requests"], g["site"] or ""))

"""The per-app view: decisions grouped by the program that sent them (the Little Snitch question, "what did
python3 agent.py send, and to whom"), shared by the dashboard's Apps tab (`/api/apps`) and `guardian-proxy stats
--by app`.

A decision's program is the decision log's `app` field (guardian_proxy/procinfo.py `App.record()`): a program
found on this machine is grouped by its shown name (`curl`, `python3 agent.py`, `chromium`: every process of it
together); one that cannot be known is grouped by why, in procinfo's words — another machine (`remote`; a
container on its own network is one), or this machine without the program (`unknown`: no permission, a
container sharing the network, a UDP client, …). A record without the field (a log written before the proxy
recorded it, `guardian-proxy check`) is counted as "not recorded".

Per program: its requests, how many carried personal data (query.carries_data: the live table's switch), the
actions, the pages it sent for (the Sites view's key: a browser's), the recipients and destinations (registrable
domains, their hosts listed) it talked to, and the data types that left — as is (allowed) or rewritten (stand-ins
left in their place) — or were stopped (blocked), as counts per category: never a value. Each group carries the
live table's filter that shows its decisions (`app:…`, query.py) and the name an override takes to name it
(`rule_app`: `guardian-proxy allow DOMAIN --app NAME`, the dashboard's per-app buttons). CORS preflights are
counted apart, as in the Sites view.
"""

from __future__ import annotations

import re
from collections import Counter

from ..domains import registrable_domain
from ..logmask import mask_host
from .query import carries_data
from .stats import ACTIONS

#: procinfo's reasons a program on this machine cannot be known, in words
WHY = {
    "no-permission": "no permission to see its process (another user's program, or one in a container)",
    "not-found": "no process this proxy can see holds the connection (a container sharing the network)",
    "udp": "a UDP client (DNS, HTTP/3, WireGuard): only TCP connections are looked up",
    "gone": "the program closed the connection or exited before it was looked up",
    "scan-limit": "the look-up ended at its bound before finding it",
    "unsupported": "not looked up on this system (Linux only)",
    "timeout": "the look-up had not finished when the request was decided",
    "error": "the look-up failed",
}
REMOTE = "another machine (or a container on its own network)"
NOT_RECORDED = "not recorded (a log line written without the sending program)"
MAX_APPS = 500  # programs counted apart; the rest are counted under "other programs"
MAX_DESTINATIONS = 50  # destinations listed per program (all are counted)
_RECEIVED = {"allow": "as_is", "transform": "rewritten", "deny": "blocked"}


def filter_term(name: str) -> str:
    """The live table's term for a program (query.py): `app:curl`, `app:"python3 agent.py"` (shlex reads it)."""
    if re.fullmatch(r"[\w.+-]+", name):
        return f"app:{name}"
    return 'app:"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def identity(app) -> dict:
    """How a decision's `app` field is shown and grouped: {key, app, label, known, kind, filter, rule_app}.
    `known`: a program was found; `filter`: the live table's term for its group (None: none selects it);
    `rule_app`: the name an override takes to name it (None: a rule cannot name it)."""
    if not isinstance(app, dict) or not app.get("name"):
        return {"key": "", "app": None, "label": NOT_RECORDED, "known": False, "kind": None, "filter": None,
                "rule_app": None}
    name = str(app["name"])
    if app.get("pid") is not None:
        return {"key": f"app:{name}", "app": name, "label": name, "known": True, "kind": app.get("kind"),
                "filter": filter_term(name), "rule_app": name}
    if name == "remote":
        return {"key": "remote", "app": "remote", "label": REMOTE, "known": False, "kind": None,
                "filter": "app:remote", "rule_app": "remote"}
    why = str(app.get("why") or "")
    label = "this machine, program not known" + (f": {WHY.get(why, why)}" if why else "")
    return {"key": f"unknown:{why}", "app": name, "why": why or None, "label": label, "known": False, "kind": None,
            "filter": filter_term(name), "rule_app": name}


def _key(app) -> str:
    """identity(app)["key"], without making the rest."""
    if not isinstance(app, dict) or not app.get("name"):
        return ""
    name = str(app["name"])
    if app.get("pid") is not None:
        return f"app:{name}"
    return "remote" if name == "remote" else f"unknown:{app.get('why') or ''}"


def sender(app) -> str | None:
    """The program's shown name when it was found on this machine, else None (words never name an unknown one)."""
    return str(app["name"]) if isinstance(app, dict) and app.get("name") and app.get("pid") is not None else None


class _Group:
    __slots__ = ("who", "requests", "preflights", "with_data", "actions", "sites", "recipients", "destinations",
                 "as_is", "rewritten", "blocked", "exes", "pids", "last_ts")

    def __init__(self, who: dict):
        self.who = who
        self.requests = self.preflights = self.with_data = 0
        self.actions: Counter = Counter()
        self.sites: Counter = Counter()
        self.recipients: Counter = Counter()
        self.destinations: dict[str, dict] = {}
        self.as_is: Counter = Counter()
        self.rewritten: Counter = Counter()
        self.blocked: Counter = Counter()
        self.exes: Counter = Counter()
        self.pids: set = set()
        self.last_ts = 0.0


class Apps:
    """Incremental: `add(record)` per decision (a log record or a dashboard summary), `to_list()` for a snapshot."""

    def __init__(self, max_apps: int = MAX_APPS):
        self.max_apps = max_apps
        self.groups: dict[str, _Group] = {}

    def add(self, rec: dict) -> None:
        app = rec.get("app")
        g = self.groups.get(_key(app))
        if g is None:
            who = identity(app)
            if len(self.groups) >= self.max_apps:
                who = {"key": "other", "app": None, "label": "other programs", "known": False, "kind": None,
                       "filter": None, "rule_app": None}
                g = self.groups.get("other")
            if g is None:
                g = self.groups[who["key"]] = _Group(who)
        ts = float(rec.get("ts") or 0.0)
        g.last_ts = max(g.last_ts, ts)
        if isinstance(app, dict) and app.get("pid") is not None:
            if app.get("exe"):
                g.exes[str(app["exe"])] += 1
            if len(g.pids) < 1000:
                g.pids.add(app["pid"])
        if (rec.get("method") or "").upper() == "OPTIONS":
            g.preflights += 1
            return
        action = rec.get("action") or "?"
        g.requests += 1
        g.actions[action] += 1
        if carries_data(rec):
            g.with_data += 1
        if rec.get("site"):
            g.sites[str(rec["site"])] += 1
        if rec.get("recipient"):
            g.recipients[str(rec["recipient"])] += 1
        host = mask_host(rec.get("host") or "?")
        dom = registrable_domain(host)
        d = g.destinations.get(dom)
        if d is None:
            d = g.destinations[dom] = {"domain": dom, "hosts": [], "recipient": None, "requests": 0,
                                       "actions": Counter(), "as_is": Counter(), "rewritten": Counter(),
                                       "blocked": Counter(), "last_ts": 0.0}
        if host not in d["hosts"] and len(d["hosts"]) < 20:
            d["hosts"].append(host)
        d["recipient"] = rec.get("recipient") or d["recipient"]
        d["requests"] += 1
        d["actions"][action] += 1
        d["last_ts"] = max(d["last_ts"], ts)
        if action in _RECEIVED:
            cats = {c: int(n) for c, n in (rec.get("categories") or {}).items()
                    if isinstance(n, int | float) and n > 0}
            d[_RECEIVED[action]].update(cats)
            getattr(g, _RECEIVED[action]).update(cats)

    def to_list(self, destinations: int = MAX_DESTINATIONS) -> list[dict]:
        """Programs found first, then the unknown ones; the busiest first. Per program at most `destinations`
        destinations (the busiest; `more_destinations` counts the rest)."""
        out = []
        for g in self.groups.values():
            dests = sorted(g.destinations.values(), key=lambda d: (-d["requests"], d["domain"]))
            out.append({
                **{k: v for k, v in g.who.items() if k != "key"},
                "exe": g.exes.most_common(1)[0][0] if g.exes else None,
                "processes": len(g.pids),
                "requests": g.requests, "with_data": g.with_data, "preflights": g.preflights,
                "actions": {a: g.actions.get(a, 0) for a in ACTIONS},
                "sites": dict(g.sites.most_common()), "recipients": dict(g.recipients.most_common()),
                "as_is": dict(g.as_is), "rewritten": dict(g.rewritten), "blocked": dict(g.blocked),
                "destinations": [{**d, "actions": {a: d["actions"].get(a, 0) for a in ACTIONS},
                                  "as_is": dict(d["as_is"]), "rewritten": dict(d["rewritten"]),
                                  "blocked": dict(d["blocked"])} for d in dests[:destinations]],
                "more_destinations": max(0, len(dests) - destinations),
                "last_ts": g.last_ts,
            })
        return sorted(out, key=lambda a: (not a["known"], a["app"] is None, -a["requests"], a["label"]))


def group_by_app(records, destinations: int = MAX_DESTINATIONS) -> list[dict]:
    apps = Apps()
    for rec in records:
        apps.add(rec)
    return apps.to_list(destinations)

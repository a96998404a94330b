"""Aggregates over decision-log records, shared by `guardian-proxy stats` and the live dashboard.

Only log-safe fields are read (action, host, categories as counts, recipient, R, ts, latency), so the
aggregates hold no personal values either; a host passes the log's masking function again (a log written by
an earlier version may hold a value spelled into a host name). "Received" means what left the machine: categories of
allowed requests went as is, those of transformed requests went rewritten, denied ones never left.

Records of a fleet's feed carry `gateway` (the gateway that decided them): the actions are also counted per
gateway (`gateways`; empty for a single gateway's log).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from ..logmask import mask_host

ACTIONS = ("allow", "transform", "deny")
HIST_BINS = 10
BUCKET_S = 60  # decisions over time: one bucket a minute
MAX_BUCKETS = 24 * 60
MAX_GATEWAYS = 1000  # gateways counted apart; the rest are counted under "other"


class Destination:
    __slots__ = ("host", "recipient", "actions", "as_is", "rewritten", "blocked", "max_r", "last_ts")

    def __init__(self, host: str):
        self.host = host
        self.recipient = None
        self.actions: Counter = Counter()
        self.as_is: Counter = Counter()  # category → values sent unchanged
        self.rewritten: Counter = Counter()  # category → values sent rewritten
        self.blocked: Counter = Counter()  # category → values stopped
        self.max_r: float | None = None
        self.last_ts = 0.0

    @property
    def requests(self) -> int:
        return sum(self.actions.values())

    def to_dict(self) -> dict:
        return {"host": self.host, "recipient": self.recipient, "requests": self.requests,
                "actions": {a: self.actions.get(a, 0) for a in ACTIONS}, "as_is": dict(self.as_is),
                "rewritten": dict(self.rewritten), "blocked": dict(self.blocked), "max_R": self.max_r,
                "last_ts": self.last_ts}


class Stats:
    """Incremental: `add(record)` per decision, `to_dict()` for a snapshot."""

    def __init__(self) -> None:
        self.total = 0
        self.actions: Counter = Counter()
        self.destinations: dict[str, Destination] = {}
        self.categories: dict[str, Counter] = defaultdict(Counter)  # category → {action: decisions}
        self.recipients: Counter = Counter()
        self.hist = [0] * HIST_BINS
        self.hist_by_action = {a: [0] * HIST_BINS for a in ACTIONS}  # the bars, coloured by what was decided
        self.scored = 0
        self.buckets: dict[int, Counter] = {}
        self.overrides = 0
        self.latencies: list[float] = []
        self.first_ts: float | None = None
        self.last_ts: float | None = None
        self.gateways: dict[str, Counter] = {}  # gateway id → {action: decisions} (fleet records only)

    def add(self, rec: dict) -> None:
        action = rec.get("action") or "?"
        host = mask_host(rec.get("host") or "?")
        ts = float(rec.get("ts") or 0.0)
        cats = {c: int(n) for c, n in (rec.get("categories") or {}).items() if isinstance(n, int | float) and n > 0}
        self.total += 1
        self.actions[action] += 1
        d = self.destinations.get(host)
        if d is None:
            d = self.destinations[host] = Destination(host)
        d.recipient = rec.get("recipient") or d.recipient
        d.actions[action] += 1
        target = {"allow": d.as_is, "transform": d.rewritten, "deny": d.blocked}.get(action)
        if target is not None:
            target.update(cats)
        for c in cats:
            self.categories[c][action] += 1
        if rec.get("recipient"):
            self.recipients[rec["recipient"]] += 1
        r = rec.get("R")
        if isinstance(r, int | float):
            self.scored += 1
            b = min(HIST_BINS - 1, max(0, int(r * HIST_BINS)))
            self.hist[b] += 1
            if action in self.hist_by_action:
                self.hist_by_action[action][b] += 1
            d.max_r = r if d.max_r is None else max(d.max_r, r)
        if rec.get("override"):
            self.overrides += 1
        gw = rec.get("gateway")
        if gw:
            gw = str(gw) if str(gw) in self.gateways or len(self.gateways) < MAX_GATEWAYS else "other"
            self.gateways.setdefault(gw, Counter())[action] += 1
        if isinstance(rec.get("latency_ms"), int | float):
            self.latencies.append(float(rec["latency_ms"]))
            if len(self.latencies) > 20000:
                del self.latencies[:10000]
        b = int(ts // BUCKET_S)
        self.buckets.setdefault(b, Counter())[action] += 1
        if len(self.buckets) > MAX_BUCKETS:
            for old in sorted(self.buckets)[: len(self.buckets) - MAX_BUCKETS]:
                del self.buckets[old]
        d.last_ts = max(d.last_ts, ts)
        self.first_ts = ts if self.first_ts is None else min(self.first_ts, ts)
        self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)

    def top_destinations(self, n: int = 10) -> list[Destination]:
        return sorted(self.destinations.values(), key=lambda d: (-d.requests, d.host))[:n]

    def top_blocked(self, n: int = 10) -> list[Destination]:
        hit = [d for d in self.destinations.values() if d.actions.get("deny")]
        return sorted(hit, key=lambda d: (-d.actions["deny"], d.host))[:n]

    def top_gateways(self) -> list[tuple[str, Counter]]:
        return sorted(self.gateways.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))

    def latency(self) -> dict:
        if not self.latencies:
            return {"p50": None, "p95": None}
        xs = sorted(self.latencies)
        return {"p50": round(xs[len(xs) // 2], 2), "p95": round(xs[min(len(xs) - 1, int(len(xs) * 0.95))], 2)}

    def to_dict(self, top: int = 10) -> dict:
        return {
            "total": self.total,
            "actions": {a: self.actions.get(a, 0) for a in ACTIONS},
            "destinations": [d.to_dict() for d in self.top_destinations(top)],
            "blocked": [{"host": d.host, "count": d.actions["deny"], "categories": dict(d.blocked)}
                        for d in self.top_blocked(top)],
            "categories": {c: {a: n.get(a, 0) for a in ACTIONS} for c, n in sorted(self.categories.items())},
            "recipients": dict(self.recipients),
            "risk_histogram": {"bins": HIST_BINS, "counts": list(self.hist), "scored": self.scored,
                               "by_action": {a: list(c) for a, c in self.hist_by_action.items()}},
            "timeline": {"bucket_s": BUCKET_S,
                         "buckets": [[b * BUCKET_S, {a: c.get(a, 0) for a in ACTIONS}]
                                     for b, c in sorted(self.buckets.items())]},
            "overrides": self.overrides,
            "latency_ms": self.latency(),
            "first_ts": self.first_ts,
            "last_ts": self.last_ts,
            "gateways": {gw: {"total": sum(c.values()), **{a: c.get(a, 0) for a in ACTIONS}}
                         for gw, c in self.top_gateways()},
        }


def summarize(records) -> Stats:
    s = Stats()
    for rec in records:
        s.add(rec)
    return s

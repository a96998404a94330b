"""`guardian-proxy stats`: what left the machine, to whom, and what was stopped (a compact rich table).

On a terminal the tables fit its width; piped or redirected they are never wrapped: each row is one line
(a destination, its counts and categories), as wide as it needs, without escape codes unless `--color`.
`--json` prints one JSON object on one line.

`--by app`: the decisions per program that sent them (the dashboard's Apps tab, in its words: guardian_proxy/
dashboard/apps.py): requests, how many carried personal data, allowed / rewritten / blocked, the destinations it
talked to, the data types that left as is or rewritten and those stopped (counts, never a value), and the name
`allow|deny DOMAIN --app NAME` takes; `apps` in --json. Read like every other view: the log and its rotated files.

`--fleet` (state.backend redis) counts the decisions of every gateway of the fleet from the shared feed (the
latest `state.recent_decisions`), with a table of the decisions per gateway (`gateways` in --json). The local
back end has one gateway, whose log is the fleet: there `--fleet` is an error.
"""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from ..dashboard.apps import Apps
from ..dashboard.stats import ACTIONS, Stats
from ..state import StateUnavailable
from .app import app
from .common import COLOR, CONFIG, STATE_DIR, existing_log, fail, json_line, one_line, stdout_console, warn
from .filters import RecordFilter, parse_since
from .logread import LogReader
from .logs import fleet_reader

_WORDS = {"allow": "allowed", "transform": "rewritten", "deny": "blocked"}
_STYLE = {"allow": "green", "transform": "yellow", "deny": "red"}


def _counts(c: dict, limit: int = 4) -> str:
    items = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))
    text = " ".join(f"{k}×{v}" for k, v in items[:limit])
    return text + (f" +{len(items) - limit}" if len(items) > limit else "") if text else "-"


def _cell(text: str) -> str:
    """A table cell from log text: one line (control characters escaped), not read as markup."""
    return escape(one_line(text))


def tables(s: Stats, top: int = 10) -> list[Table]:
    acts = Table(title="Actions", title_justify="left", show_edge=False)
    acts.add_column("action")
    acts.add_column("decisions", justify="right")
    acts.add_column("share", justify="right")
    for a in ACTIONS:
        n = s.actions.get(a, 0)
        acts.add_row(f"[{_STYLE[a]}]{_WORDS[a]}[/]", str(n), f"{100 * n / s.total:.0f}%" if s.total else "-")

    dest = Table(title=f"Top {top} destinations", title_justify="left", show_edge=False)
    for col, just in (("host", "left"), ("recipient", "left"), ("req", "right"), ("allow", "right"),
                      ("rewr", "right"), ("block", "right"), ("received as is", "left"),
                      ("received rewritten", "left"), ("max R", "right")):
        dest.add_column(col, justify=just, overflow="fold")
    for d in s.top_destinations(top):
        dest.add_row(_cell(d.host), _cell((d.recipient or "-").replace("_", " ")), str(d.requests),
                     str(d.actions.get("allow", 0)), str(d.actions.get("transform", 0)), str(d.actions.get("deny", 0)),
                     _cell(_counts(d.as_is)), _cell(_counts(d.rewritten)), "-" if d.max_r is None else f"{d.max_r:.2f}")

    cats = Table(title="Categories sent (decisions)", title_justify="left", show_edge=False)
    for col in ("category", "as is", "rewritten", "blocked"):
        cats.add_column(col, justify="left" if col == "category" else "right")
    for c, n in sorted(s.categories.items(), key=lambda kv: -sum(kv[1].values())):
        cats.add_row(_cell(c), str(n.get("allow", 0)), str(n.get("transform", 0)), str(n.get("deny", 0)))

    blocked = Table(title="Blocked", title_justify="left", show_edge=False)
    for col in ("host", "blocked", "categories stopped"):
        blocked.add_column(col, justify="right" if col == "blocked" else "left")
    for d in s.top_blocked(top):
        blocked.add_row(_cell(d.host), str(d.actions["deny"]), _cell(_counts(d.blocked)))
    if not s.gateways:
        return [acts, dest, cats, blocked]
    gws = Table(title="Gateways", title_justify="left", show_edge=False)
    for col in ("gateway", "decisions", "allowed", "rewritten", "blocked"):
        gws.add_column(col, justify="left" if col == "gateway" else "right")
    for gw, c in s.top_gateways():
        gws.add_row(_cell(gw), str(sum(c.values())), *(str(c.get(a, 0)) for a in ACTIONS))
    return [acts, gws, dest, cats, blocked]


def _talked_to(dests: list[dict], more: int, limit: int = 4) -> str:
    text = " ".join(f"{d['domain']}×{d['requests']}" for d in dests[:limit])
    rest = len(dests) - limit + more
    return (text + (f" +{rest}" if rest > 0 else "")) if text else "-"


def apps_table(apps: list[dict], top: int = 10) -> Table:
    """The per-app table (`--by app`): the busiest `top` programs, found ones first."""
    t = Table(title="Apps (the program that sent it)", title_justify="left", show_edge=False)
    for col, just in (("app", "left"), ("req", "right"), ("with data", "right"), ("allow", "right"),
                      ("rewr", "right"), ("block", "right"), ("talked to", "left"), ("sent as is", "left"),
                      ("sent rewritten", "left"), ("stopped", "left"), ("override names it", "left")):
        t.add_column(col, justify=just, overflow="fold")
    for a in apps[:top]:
        t.add_row(_cell(a["label"]), str(a["requests"]), str(a["with_data"]),
                  *(str(a["actions"][x]) for x in ACTIONS), _cell(_talked_to(a["destinations"], a["more_destinations"])),
                  _cell(_counts(a["as_is"])), _cell(_counts(a["rewritten"])), _cell(_counts(a["blocked"])),
                  _cell(f"--app {a['rule_app']}" if a["rule_app"] else "-"))
    return t


@app.command("stats")
def stats_cmd(
    since: str = typer.Option("24h", "--since", help="Window: 24h, 30m, 7d, an ISO time, or 'all'."),
    top: int = typer.Option(10, "--top", min=1, help="Rows in the destination and blocked tables."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    log_file: Path = typer.Option(None, "--log", help="Decision log (default <state-dir>/decisions.jsonl)."),
    fleet: bool = typer.Option(False, "--fleet", help="Every gateway of the fleet (state.backend redis): the "
                                                      "shared decision feed, counted per gateway too."),
    by: str = typer.Option("destination", "--by", help="destination (default) | app: the decisions per program "
                                                          "that sent them."),
    color: bool = COLOR,
    state_dir: Path = STATE_DIR,
    config: Path = CONFIG,
) -> None:
    """Top destinations, categories sent, actions and blocked counts from the decision log."""
    reader = fleet_reader(config, state_dir, log_file) if fleet else LogReader(existing_log(log_file, config,
                                                                                            state_dir))
    try:
        start = None if since.strip().lower() == "all" else parse_since(since)
    except ValueError as e:
        fail(str(e))
    if by not in ("destination", "app"):
        fail(f"--by {by}? use destination or app")
    keep = RecordFilter(since=start)
    s, apps = Stats(), Apps()
    try:
        for r in reader.records():
            if keep(r):
                s.add(r)
                if by == "app":
                    apps.add(r)
    except StateUnavailable as e:
        fail(f"the fleet's decision feed cannot be read: {e}", 1)
    if reader.note():
        warn(reader.note())
    per_app = apps.to_list() if by == "app" else None
    if as_json:
        print(json_line({**s.to_dict(top), **({"apps": per_app[:top]} if per_app is not None else {})}))
        return
    out = stdout_console(color)
    window = "all time" if start is None else f"since {time.strftime('%Y-%m-%d %H:%M', time.localtime(start))}"
    lat = s.latency()
    head = (f"[bold]{s.total}[/] decisions {window}: " + ", ".join(
        f"[{_STYLE[a]}]{s.actions.get(a, 0)} {_WORDS[a]}[/]" for a in ACTIONS))
    if s.overrides:
        head += f"; {s.overrides} by override"
    if lat["p50"] is not None:
        head += f"; latency p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms"
    out.print(head, highlight=False)
    if not s.total:
        return
    shown = tables(s, top) if per_app is None else [tables(s, top)[0], apps_table(per_app, top)]
    for t in shown:
        out.print()
        out.print(t)

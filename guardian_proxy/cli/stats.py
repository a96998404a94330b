"""`guardian-proxy stats`: what left the machine, to whom, and what was stopped (a compact rich table).

On a terminal the tables fit its width; piped or redirected they are never wrapped: each row is one line
(a destination, its counts and categories), as wide as it needs, without escape codes unless `--color`.
`--json` prints one JSON object on one line.

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

from ..dashboard.stats import ACTIONS, Stats, summarize
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


@app.command("stats")
def stats_cmd(
    since: str = typer.Option("24h", "--since", help="Window: 24h, 30m, 7d, an ISO time, or 'all'."),
    top: int = typer.Option(10, "--top", min=1, help="Rows in the destination and blocked tables."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    log_file: Path = typer.Option(None, "--log", help="Decision log (default <state-dir>/decisions.jsonl)."),
    fleet: bool = typer.Option(False, "--fleet", help="Every gateway of the fleet (state.backend redis): the "
                                                      "shared decision feed, counted per gateway too."),
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
    keep = RecordFilter(since=start)
    try:
        s = summarize(r for r in reader.records() if keep(r))
    except StateUnavailable as e:
        fail(f"the fleet's decision feed cannot be read: {e}", 1)
    if reader.note():
        warn(reader.note())
    if as_json:
        print(json_line(s.to_dict(top)))
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
    for t in tables(s, top):
        out.print()
        out.print(t)

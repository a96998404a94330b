"""`guardian-proxy log`: show the decision log (pretty, colour, filters, --follow).

One decision a line. On a terminal the lines are coloured and wrap at its width; piped or redirected they
are never wrapped (one record = one line, whatever its length) and carry no escape codes unless `--color`.
A control character or line separator in a field (a path with a newline) is shown escaped, never raw.
`--json` prints each record as one JSON object on one line (JSON Lines).

`--fleet` (state.backend redis) shows the decisions of every gateway of the fleet from the shared feed (the
latest `state.recent_decisions`), each line with the gateway that decided it (`gateway` in --json); the same
filters and formats. The local back end has one gateway, whose log is the fleet: there `--fleet` is an error.

Each line names the program that sent the request (the record's `app`, guardian_proxy/procinfo.py): `curl`,
`python3 agent.py`, `chromium`, or `remote` (another machine) / `unknown` (this machine, process not known);
`--app` keeps one program's decisions.
"""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.markup import escape

from ..decision_log import tail_lines
from ..errors import GuardianError
from ..state import StateUnavailable
from ..types import CATEGORIES
from .app import app
from .common import (
    COLOR,
    CONFIG,
    STATE_DIR,
    existing_log,
    fail,
    json_line,
    one_line,
    settings_from,
    stdout_console,
    warn,
)
from .filters import RecordFilter, app_name, parse_since
from .logread import LogReader, open_fleet

_COLOUR = {"allow": "green", "transform": "yellow", "deny": "red"}


def render(rec: dict) -> str:
    try:
        ts = time.strftime("%H:%M:%S", time.localtime(rec.get("ts") or 0))
    except (OverflowError, OSError, ValueError):  # a corrupted time (out of range, NaN): the line still shows
        ts = "--:--:--"
    action = rec.get("action", "?")
    cats = one_line(",".join(f"{k}×{v}" for k, v in (rec.get("categories") or {}).items()) or "-")
    r = rec.get("R")
    rtxt = f"R {r:.2f}" if isinstance(r, int | float) else "R -"
    lvl = f" L{rec['final_level']}" if rec.get("final_level") else ""
    c = _COLOUR.get(action, "white")
    e = {k: escape(one_line(rec.get(k) or "")) for k in ("method", "host", "path", "recipient", "explanation")}
    gw = f"[magenta]{escape(one_line(rec['gateway']))}[/] " if rec.get("gateway") else ""  # a fleet's record
    name = app_name(rec)
    who = f"[blue]{escape(one_line(name))}[/] " if name else ""  # the program that sent it (procinfo.py)
    return (f"[dim]{ts}[/] {gw}[bold {c}]{escape(one_line(action)):<9}[/]{lvl:<3} {who}{e['method']} {e['host']}"
            f"{e['path']} [cyan]{e['recipient']}[/] {escape(cats)} {rtxt}  [dim]{e['explanation']}[/]")


def _follow(path: Path, reader: LogReader, poll: float = 0.25):
    """New complete lines as they are written; reopens the file when the log is rotated. Read as bytes:
    a line that is not UTF-8 or not JSON is skipped and counted (`reader.skipped`), never fatal."""
    for line in tail_lines(path, poll=poll):
        rec = reader.count(line)
        if rec is not None:
            yield rec


def fleet_reader(config: Path | None, state_dir: Path | None, log_file: Path | None):
    """The fleet's feed for `--fleet`, or a one-line error: --log with it, or the local back end."""
    if log_file is not None:
        fail("--fleet reads the fleet's shared decision feed, not a log file: drop --log")
    try:
        return open_fleet(settings_from(config, state_dir))
    except (ValueError, GuardianError) as e:
        fail(str(e))


# The dashboard's and console's words for the three actions, accepted wherever an action is named.
ACTION_WORDS = {"allowed": "allow", "rewritten": "transform", "blocked": "deny"}


@app.command("log")
def log_cmd(
    follow: bool = typer.Option(False, "--follow", "-f", help="Keep printing new decisions."),
    as_json: bool = typer.Option(False, "--json", help="Print each record as one JSON line."),
    action: str = typer.Option(None, "--action", help="allow | transform | deny, or the dashboard's words: "
                                                      "allowed | rewritten | blocked"),
    host: str = typer.Option(None, "--host", help="Only hosts containing this text."),
    category: str = typer.Option(None, "--category", help=f"Only decisions with this category ({', '.join(CATEGORIES)}, unparsed)."),
    min_risk: float = typer.Option(None, "--min-risk", min=0.0, max=1.0, help="Only decisions with R at least this."),
    since: str = typer.Option(None, "--since", help="Only decisions newer than this: 24h, 30m, 7d or an ISO time."),
    app_: str = typer.Option(None, "--app", help="Only requests sent by this program: part of its name (curl, "
                                                 "python3, agent.py, chromium), its pid, or remote | unknown."),
    log_file: Path = typer.Option(None, "--log", help="Decision log (default <state-dir>/decisions.jsonl)."),
    fleet: bool = typer.Option(False, "--fleet", help="Every gateway of the fleet (state.backend redis): the "
                                                      "shared decision feed, with the gateway of each decision."),
    color: bool = COLOR,
    state_dir: Path = STATE_DIR,
    config: Path = CONFIG,
) -> None:
    """Show the decision log (rotated files included, oldest first), one decision a line."""
    if fleet:
        reader = fleet_reader(config, state_dir, log_file)
    else:
        path = existing_log(log_file, config, state_dir)
    if action:
        action = ACTION_WORDS.get(action.strip().lower(), action)
        if action not in ("allow", "transform", "deny"):
            fail(f"--action must be allow, transform or deny (or allowed, rewritten, blocked), got {action!r}")
    try:
        keep = RecordFilter(action=action, host=host, category=category, min_risk=min_risk, since=parse_since(since),
                            app=app_)
    except ValueError as e:
        fail(str(e))
    if not fleet:
        reader = LogReader(path)
        records = _follow(path, reader) if follow else reader.records()
    else:
        records = reader.follow() if follow else reader.records()
    out = stdout_console(color)
    try:
        for rec in records:
            if keep(rec):
                if as_json:
                    print(json_line(rec), flush=True)
                else:
                    out.print(render(rec), highlight=False)
                    if follow:
                        out.file.flush()
    except KeyboardInterrupt:
        pass
    except StateUnavailable as e:
        fail(f"the fleet's decision feed cannot be read: {e}", 1)
    finally:
        if reader.note():
            warn(reader.note())

"""`guardian-proxy log`: show the decision log (pretty, colour, filters, --follow).

One decision a line. On a terminal the lines are coloured and wrap at its width; piped or redirected they
are never wrapped (one record = one line, whatever its length) and carry no escape codes unless `--color`.
A control character or line separator in a field (a path with a newline) is shown escaped, never raw.
`--json` prints each record as one JSON object on one line (JSON Lines).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import typer
from rich.markup import escape

from ..types import CATEGORIES
from .app import app
from .common import COLOR, CONFIG, STATE_DIR, existing_log, fail, json_line, one_line, stdout_console, warn
from .filters import RecordFilter, parse_since
from .logread import LogReader

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
    return (f"[dim]{ts}[/] [bold {c}]{escape(one_line(action)):<9}[/]{lvl:<3} {e['method']} {e['host']}"
            f"{e['path']} [cyan]{e['recipient']}[/] {escape(cats)} {rtxt}  [dim]{e['explanation']}[/]")


def _follow(path: Path, reader: LogReader, poll: float = 0.25):
    """New complete lines as they are written; reopens the file when the log is rotated. Read as bytes:
    a line that is not UTF-8 or not JSON is skipped and counted (`reader.skipped`), never fatal."""
    f = open(path, "rb")
    f.seek(0, 2)
    ino = os.fstat(f.fileno()).st_ino
    buf = b""
    try:
        while True:
            chunk = f.readline()
            if chunk:
                buf += chunk
                if not buf.endswith(b"\n"):
                    continue
                line, buf = buf, b""
                rec = reader.count(line)
                if rec is not None:
                    yield rec
                continue
            try:
                st = os.stat(path)
            except FileNotFoundError:
                time.sleep(poll)
                continue
            if st.st_ino != ino or st.st_size < f.tell():  # rotated or truncated: start the new file
                f.close()
                f = open(path, "rb")
                ino, buf = os.fstat(f.fileno()).st_ino, b""
                continue
            time.sleep(poll)
    finally:
        f.close()


@app.command("log")
def log_cmd(
    follow: bool = typer.Option(False, "--follow", "-f", help="Keep printing new decisions."),
    as_json: bool = typer.Option(False, "--json", help="Print each record as one JSON line."),
    action: str = typer.Option(None, "--action", help="allow | transform | deny"),
    host: str = typer.Option(None, "--host", help="Only hosts containing this text."),
    category: str = typer.Option(None, "--category", help=f"Only decisions with this category ({', '.join(CATEGORIES)}, unparsed)."),
    min_risk: float = typer.Option(None, "--min-risk", min=0.0, max=1.0, help="Only decisions with R at least this."),
    since: str = typer.Option(None, "--since", help="Only decisions newer than this: 24h, 30m, 7d or an ISO time."),
    log_file: Path = typer.Option(None, "--log", help="Decision log (default <state-dir>/decisions.jsonl)."),
    color: bool = COLOR,
    state_dir: Path = STATE_DIR,
    config: Path = CONFIG,
) -> None:
    """Show the decision log (rotated files included, oldest first), one decision a line."""
    path = existing_log(log_file, config, state_dir)
    if action and action not in ("allow", "transform", "deny"):
        fail(f"--action must be allow, transform or deny, got {action!r}")
    try:
        keep = RecordFilter(action=action, host=host, category=category, min_risk=min_risk, since=parse_since(since))
    except ValueError as e:
        fail(str(e))
    reader = LogReader(path)
    records = _follow(path, reader) if follow else reader.records()
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
    finally:
        if reader.note():
            warn(reader.note())

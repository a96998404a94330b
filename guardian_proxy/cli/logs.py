"""`guardian-proxy log`: show the decision log (pretty, colour, filters, --follow)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer
from rich.console import Console

from ..decision_log import read
from .app import app
from .common import fail, settings_from

out = Console()
_COLOUR = {"allow": "green", "transform": "yellow", "deny": "red"}


def render(rec: dict) -> str:
    ts = time.strftime("%H:%M:%S", time.localtime(rec.get("ts", 0)))
    action = rec.get("action", "?")
    cats = ",".join(f"{k}×{v}" for k, v in (rec.get("categories") or {}).items()) or "-"
    r = rec.get("R")
    rtxt = f"R {r:.2f}" if isinstance(r, int | float) else "R -"
    lvl = f" L{rec['final_level']}" if rec.get("final_level") else ""
    c = _COLOUR.get(action, "white")
    return (f"[dim]{ts}[/] [bold {c}]{action:<9}[/]{lvl:<3} {rec.get('method', '')} {rec.get('host', '')}"
            f"{rec.get('path', '')} [cyan]{rec.get('recipient', '')}[/] {cats} {rtxt}  [dim]{rec.get('explanation', '')}[/]")


def matches(rec: dict, action: str | None, host: str | None) -> bool:
    if action and rec.get("action") != action:
        return False
    if host and host not in (rec.get("host") or ""):
        return False
    return True


def _follow(path: Path):
    with open(path, encoding="utf-8") as f:
        f.seek(0, 2)
        buf = ""
        while True:
            chunk = f.readline()
            if not chunk:
                time.sleep(0.25)
                continue
            buf += chunk
            if not buf.endswith("\n"):
                continue
            line, buf = buf.strip(), ""
            if line:
                try:
                    yield json.loads(line)
                except ValueError:
                    continue


@app.command("log")
def log_cmd(
    follow: bool = typer.Option(False, "--follow", "-f", help="Keep printing new decisions."),
    as_json: bool = typer.Option(False, "--json", help="Print raw JSON lines."),
    action: str = typer.Option(None, "--action", help="allow | transform | deny"),
    host: str = typer.Option(None, "--host", help="Only hosts containing this text."),
    log_file: Path = typer.Option(None, "--log", help="Decision log (default <state-dir>/decisions.jsonl)."),
    state_dir: Path = typer.Option(None, "--state-dir"),
    config: Path = typer.Option(None, "--config"),
) -> None:
    """Show the decision log."""
    path = log_file or settings_from(config, state_dir).decision_log
    if not path.exists():
        fail(f"no decision log at {path} (start the proxy first, or pass --log FILE)")
    records = _follow(path) if follow else read(path)
    try:
        for rec in records:
            if matches(rec, action, host):
                if as_json:
                    print(json.dumps(rec, ensure_ascii=False), flush=True)
                else:
                    out.print(render(rec), highlight=False)
    except KeyboardInterrupt:
        pass

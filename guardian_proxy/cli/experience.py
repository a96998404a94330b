"""`guardian-proxy experience`: the agent guard's experience log (leaks caught despite guidance)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape

from .app import app
from .common import CONFIG, STATE_DIR, console, json_line, one_line, settings_from, stdout_console

experience_app = typer.Typer(help="Cases the agent guard caught despite guidance (encrypted at rest).",
                             no_args_is_help=True)
app.add_typer(experience_app, name="experience")


def _log(config: Path | None, state_dir: Path | None):
    from ..agents import ExperienceLog

    return ExperienceLog(settings_from(config, state_dir).state_dir / "experience")


@experience_app.command("list")
def list_cases(state_dir: Path = STATE_DIR, config: Path = CONFIG,
               as_json: bool = typer.Option(False, "--json", help="Print the cases as one JSON array.")) -> None:
    """Count and summarise the cases (no conversation text is printed)."""
    cases = _log(config, state_dir).cases()
    rows = [{"ts": c["ts"], "api": c["api"], "tool": c["leaking_action"]["tool"], "removed": c["removed"],
             "types": c["types"], "relationship": c["relationship"]} for c in cases]
    if as_json:
        print(json_line(rows))
        return
    out = stdout_console()  # the cases are the data: stdout, one case a line
    out.print(f"{len(rows)} case(s)", highlight=False)
    for r in rows:
        out.print(escape(one_line(f"{r['ts']:.0f} {r['api']} {r['tool']} removed {r['removed']} "
                                  f"({', '.join(r['types'])}) → {r['relationship']}")), highlight=False)


@experience_app.command("export")
def export(output: Path = typer.Argument(..., help="Decrypted JSONL for scripts/train_instructor.py --cases"),
           state_dir: Path = STATE_DIR, config: Path = CONFIG) -> None:
    """Decrypt the cases to a JSONL file (it holds conversation text: keep it private)."""
    import os

    cases = _log(config, state_dir).cases()
    fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    console.print(f"wrote {len(cases)} case(s) to {output} (mode 0600)")

"""Helpers shared by the command modules: settings from flags, a gateway, clean errors."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from ..config import Settings, load_settings
from ..errors import GuardianError

console = Console(stderr=True)


#: the options every command that reads settings takes
CONFIG = typer.Option(None, "--config", help="YAML settings file.")
STATE_DIR = typer.Option(None, "--state-dir", help="State directory (decision log, vault, overrides, policies).")


def settings_from(config: Path | None, state_dir: Path | None = None, log_file: Path | None = None, **extra) -> Settings:
    try:
        s = load_settings(config, state_dir=state_dir, log_file=log_file, **extra)
    except GuardianError as e:
        fail(str(e))
    return s


def existing_log(log_file: Path | None, config: Path | None, state_dir: Path | None) -> Path:
    """The decision log to read (`--log`, else the settings'), or a clear error when there is none yet."""
    path = log_file or settings_from(config, state_dir).decision_log
    if not path.exists():
        fail(f"no decision log at {path} (start the proxy first, or pass --log FILE)")
    return path


def fail(message: str, code: int = 2) -> None:
    """One line on stderr, `error: <message>`, and exit `code`: never wrapped at the terminal's width,
    never read as rich markup (a path may hold brackets), line breaks in the message joined with '; '."""
    text = "; ".join(part.strip() for part in str(message).splitlines() if part.strip())
    console.print(f"[bold red]error:[/] {escape(text)}", soft_wrap=True, highlight=False)
    raise typer.Exit(code)


def warn(message: str) -> None:
    """One warning line on stderr (`warning: <message>`), not wrapped, not read as markup."""
    console.print(f"[yellow]warning:[/] {escape(message)}", soft_wrap=True, highlight=False)


def read_data(data: str | None) -> bytes:
    if data is None:
        return b""
    if data == "@-":
        return sys.stdin.buffer.read()
    if data.startswith("@"):
        try:
            return Path(data[1:]).read_bytes()
        except OSError as e:
            fail(f"cannot read {data[1:]}: {e}")
    return data.encode()

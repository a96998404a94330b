"""Helpers shared by the command modules: settings from flags, a gateway, clean errors, and the rules of
output: data on stdout (pretty on a terminal, one record per line when piped), messages on stderr."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from ..config import Settings, load_settings
from ..errors import GuardianError
from . import flags  # noqa: F401  (help shows flags as flags: `--json`, not `--json <bool>`)

console = Console(stderr=True)


#: the options every command that reads settings takes
CONFIG = typer.Option(None, "--config", help="YAML settings file.")
STATE_DIR = typer.Option(None, "--state-dir", help="State directory (decision log, vault, overrides, policies).")
#: colour of the data on stdout: auto (on a terminal, unless NO_COLOR is set), always, never
COLOR = typer.Option(None, "--color/--no-color", show_default=False,
                     help="Colour the output (default: on a terminal only, unless NO_COLOR is set).")
#: width a console gets when stdout is not a terminal: tables are as wide as their rows, never wrapped
PIPE_WIDTH = 10_000


def stdout_console(color: bool | None = None) -> Console:
    """The console for a command's data on stdout. On a terminal: the pretty view (wrapped at the terminal's
    width, coloured unless `--no-color` or NO_COLOR). Piped or redirected: never wrapped — one record a
    line, tables as wide as their widest row — and no colour or escape codes unless `--color` is given."""
    tty = sys.stdout.isatty()
    kw: dict = {} if tty else {"width": PIPE_WIDTH, "soft_wrap": True}
    if color is True:
        kw["force_terminal"] = True
    elif color is False:
        kw["no_color"] = True
    return Console(**kw)


class DataOut:
    """A module-level `out` for commands that print data: each `print` goes to a `stdout_console()` made for
    the stdout of that moment (pretty on a terminal, never wrapped when piped)."""

    def print(self, *args, **kwargs) -> None:
        stdout_console().print(*args, **kwargs)


#: characters that would break a record across lines or drive the terminal: C0 and C1 controls, DEL,
#: and the Unicode line and paragraph separators
_BREAKING = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(text: object) -> str:
    """`text` as one printable line: a newline, tab or other control character (an escape sequence, a
    U+2028 line separator) is shown escaped (`\\n`, `\\x1b`, `\\u2028`), never written raw."""
    def esc(m: re.Match) -> str:
        c = m.group()
        return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")

    return _BREAKING.sub(esc, str(text))


def json_line(obj) -> str:
    """One JSON object as exactly one line: non-ASCII text kept readable, but U+2028, U+2029 and U+0085
    (line breaks for some readers, e.g. Python's `str.splitlines`) written as `\\u` escapes."""
    text = json.dumps(obj, ensure_ascii=False)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\x85", "\\u0085")


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

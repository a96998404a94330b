"""Progress of long commands on stderr, never on stdout (stdout carries only the data).

A batch command (`anonymize`, `sweep`) shows its progress when stderr is a terminal (a live bar: items
done, of how many when known, rate, elapsed) or when `--progress` is given; then, on a file or a pipe,
it is one plain line every `every` items and a last one with the total (`anonymize: 120/300 texts, 8.1/s`).
`--no-progress` hides it everywhere. A spinner while models load shows only on a terminal.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

#: the option every batch command takes: auto (stderr a terminal), always, never
PROGRESS = typer.Option(None, "--progress/--no-progress", show_default=False,
                        help="Show progress on stderr (default: only when stderr is a terminal).")


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class BatchProgress:
    """`with BatchProgress("anonymize", "texts", total, show) as p: ... p.advance()` — see the module doc."""

    def __init__(self, label: str, unit: str = "items", total: int | None = None, show: bool | None = None,
                 every: int = 50, stream=None):
        self.label, self.unit, self.total, self.every = label, unit, total, max(1, every)
        self.stream = stream if stream is not None else sys.stderr
        tty = _isatty(self.stream)
        self.show = tty if show is None else bool(show)
        self.live = self.show and tty
        self.done = 0
        self._t0 = time.monotonic()
        self._bar: Progress | None = None
        self._task = None

    def __enter__(self) -> BatchProgress:
        self._t0 = time.monotonic()
        if self.live:
            self._bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TextColumn(self.unit), TimeElapsedColumn(),
                                 console=Console(file=self.stream), transient=True)
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total)
        return self

    def advance(self, n: int = 1) -> None:
        before, self.done = self.done, self.done + n
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)
        elif self.show and before // self.every != self.done // self.every:
            self._line()

    def _line(self) -> None:
        rate = self.done / max(time.monotonic() - self._t0, 1e-9)
        of = f"/{self.total}" if self.total is not None else ""
        self.stream.write(f"{self.label}: {self.done}{of} {self.unit}, {rate:.1f}/s\n")
        self.stream.flush()

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        elif self.show and self.done % self.every:  # the last line, unless the last step printed it
            self._line()


@contextmanager
def loading(message: str = "loading models …", stream=None):
    """A transient spinner on stderr while something slow starts, shown only when stderr is a terminal."""
    stream = stream if stream is not None else sys.stderr
    if not _isatty(stream):
        yield
        return
    with Console(file=stream).status(message):
        yield

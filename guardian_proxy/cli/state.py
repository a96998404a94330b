"""`guardian-proxy state new-key|status`: the shared state of the gateway (guardian_proxy/state).

`new-key` prints a fresh vault key (base64 of 32 random bytes) for a Redis fleet: every gateway of the fleet
is given the same one (`state.key_file`, mode 0600, or $GUARDIAN_VAULT_KEY). `status` says which back end
the settings name and where it is, whether it answers (the error in one line when not), and what it holds:
chat sessions, stored overrides, decisions in the feed, and the gateways that published a decision in the
last 10 minutes. It exits 1 when the store cannot be reached. Counts never show a value: they are counts.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer
from rich.markup import escape

from ..errors import GuardianError
from ..state import StateUnavailable, gateway_id, new_key, open_feed, open_sessions, uses_redis, where
from ..state.decisions import SEEN_WINDOW_S
from .app import app
from .common import CONFIG, STATE_DIR, DataOut, fail, json_line, settings_from

state_app = typer.Typer(help="The shared state (local files or a Redis fleet): make a vault key, check the store.",
                        no_args_is_help=True)
app.add_typer(state_app, name="state")
out = DataOut()


@state_app.command("new-key")
def new_key_cmd() -> None:
    """Print a fresh vault key (base64) for a Redis fleet: `guardian-proxy state new-key > FILE; chmod 600 FILE`."""
    print(new_key())


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def _reach(settings) -> str | None:
    """None when the store answers, else why not (one line)."""
    if uses_redis(settings):
        try:
            open_feed(settings).ping()
        except (StateUnavailable, GuardianError) as e:
            return _one_line(e)
        return None
    d = Path(settings.state_dir)
    if not d.exists():
        return None  # made on first use
    if not d.is_dir():
        return f"{d} is not a directory"
    if not os.access(d, os.R_OK | os.W_OK | os.X_OK):
        return f"{d} cannot be read and written by this user"
    return None


def _sessions(settings) -> int:
    if uses_redis(settings):
        return len(open_sessions(settings).sessions())
    if not (Path(settings.state_dir) / "sessions.db").exists():
        return 0
    from ..session.vault import Vault

    v = Vault(settings.state_dir)
    try:
        return len(v.rows.sessions())
    finally:
        v.close()


def _overrides(settings) -> int:
    from ..overrides import OverrideStore

    return len(OverrideStore.for_settings(settings).stored())


def _count(fn, settings, problems: list[str], what: str):
    try:
        return fn(settings)
    except Exception as e:  # noqa: BLE001 — a count that cannot be made is shown as unknown, with why
        problems.append(f"{what}: {_one_line(e)}")
        return None


def status_of(settings) -> dict:
    """What `state status` reports, as one dict (the --json object)."""
    st = settings.state
    why = _reach(settings)
    report = {"backend": st.backend, "where": where(settings), "gateway": gateway_id(settings),
              "reachable": why is None, "error": why, "sessions": None, "overrides": None, "decisions": None,
              "gateways": None, "problems": []}
    if why is not None:
        return report
    problems: list[str] = []
    feed = open_feed(settings)
    report["sessions"] = _count(_sessions, settings, problems, "sessions")
    report["overrides"] = _count(_overrides, settings, problems, "overrides")
    report["decisions"] = _count(lambda s: feed.count(), settings, problems, "decisions")
    seen = _count(lambda s: feed.gateways(SEEN_WINDOW_S), settings, problems, "gateways")
    report["gateways"] = sorted(seen) if seen is not None else None
    report["problems"] = problems
    return report


def _n(v) -> str:
    return "?" if v is None else str(v)


@state_app.command("status")
def status_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    state_dir: Path = STATE_DIR,
    config: Path = CONFIG,
) -> None:
    """Which back end, where, whether it answers, and what it holds (exit 1 when it cannot be reached)."""
    s = settings_from(config, state_dir)
    try:
        r = status_of(s)
    except GuardianError as e:
        fail(str(e))
    if as_json:
        print(json_line(r))
    else:
        local = r["backend"] != "redis"
        out.print(f"back end   {r['backend']}: {escape(r['where'])}", highlight=False, soft_wrap=True)
        out.print(f"gateway    {escape(r['gateway'])}", highlight=False, soft_wrap=True)
        if not r["reachable"]:
            out.print(f"reachable  [red]no[/]: {escape(r['error'])}", highlight=False, soft_wrap=True)
        else:
            out.print("reachable  [green]yes[/]", highlight=False)
            feed = "in the decision log (a fleet of one)" if local else \
                f"in the feed (keeps the latest {s.state.recent_decisions})"
            gws = r["gateways"]
            out.print(f"sessions   {_n(r['sessions'])}", highlight=False)
            out.print(f"overrides  {_n(r['overrides'])} stored", highlight=False)
            out.print(f"decisions  {_n(r['decisions'])} {feed}", highlight=False)
            out.print(f"gateways   {_n(None if gws is None else len(gws))} seen in the last "
                      f"{SEEN_WINDOW_S / 60:.0f} min{': ' + escape(', '.join(gws)) if gws else ''}",
                      highlight=False, soft_wrap=True)
            for p in r["problems"]:
                out.print(f"[yellow]could not count[/] {escape(p)}", highlight=False, soft_wrap=True)
    if not r["reachable"]:
        raise typer.Exit(1)

"""`guardian-proxy sessions list|wipe`: the chat sessions in the pseudonym vault of the configured state back end
(`state.backend`: local, <state-dir>/sessions.db; redis, the fleet's sessions under `state.prefix`).

`list` shows, per session, its id, age, turns, CPE, the turn CPE crossed τ and how many values of each type
it holds — never a value. `wipe` deletes one session (by id or a unique id prefix), the sessions idle longer
than the configured expiry (`--expired`), or all of them (`--all`); a wiped conversation can no longer be
de-masked, and a running proxy (any worker, any gateway of the fleet) starts it afresh at its next turn.
"""

from __future__ import annotations

import json
import re
import time
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.table import Table

from .app import app
from .common import CONFIG, STATE_DIR, DataOut, fail, settings_from

sessions_app = typer.Typer(help="Chat sessions with AI services: list them or wipe their pseudonym mappings.",
                           no_args_is_help=True)
app.add_typer(sessions_app, name="sessions")
out = DataOut()


def _vault(config: Path | None, state_dir: Path | None):
    from ..errors import GuardianError
    from ..session.vault import Vault
    from ..state import uses_redis

    s = settings_from(config, state_dir)
    if not uses_redis(s) and not (s.state_dir / "sessions.db").exists():
        return None, s
    try:
        return Vault.for_settings(s), s
    except (GuardianError, ValueError) as e:  # no fleet key, a bad key file
        fail(str(e))


@contextmanager
def _reachable(s):
    """The store unreachable (redis down or slow): one line naming it, exit 1."""
    from ..state import StateUnavailable, where

    try:
        yield
    except StateUnavailable as e:
        fail(f"the session store ({where(s)}) cannot be reached: {e}", code=1)


def _age(seconds: float) -> str:
    for unit, n in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= n:
            return f"{seconds / n:.0f}{unit}"
    return f"{seconds:.0f}s"


@sessions_app.command("list")
def list_cmd(
    as_json: bool = typer.Option(False, "--json", help="One JSON object per line."),
    state_dir: Path = STATE_DIR,
    config: Path = CONFIG,
) -> None:
    """List the chat sessions in the vault (no values are shown)."""
    vault, s = _vault(config, state_dir)
    rows = []
    if vault is not None:
        now = time.time()
        with _reachable(s):
            for sid, created, last_seen, meta, n in vault.sessions():
                rows.append({"session": sid, "created": round(created, 3), "last_seen": round(last_seen, 3),
                             "idle_s": round(now - last_seen), "expired": now - last_seen > s.session.idle_expiry_s,
                             "turn": meta.get("turn", 0), "cpe": meta.get("cpe", 0.0),
                             "crossed_turn": meta.get("crossed"), "values": n, "types": vault.entity_types(sid)})
        vault.close()
    if as_json:
        for r in rows:
            print(json.dumps(r, ensure_ascii=False))
        return
    if not rows:
        out.print("no chat sessions")
        return
    t = Table("session", "last seen", "turns", "CPE", "crossed", "values by type")
    for r in rows:
        t.add_row(r["session"][:16], _age(r["idle_s"]) + " ago" + (" (expired)" if r["expired"] else ""),
                  str(r["turn"]), f"{r['cpe']:.2f}", str(r["crossed_turn"] or "-"),
                  ", ".join(f"{k}×{v}" for k, v in sorted(r["types"].items())))
    out.print(t)


@sessions_app.command("wipe")
def wipe(
    session: str = typer.Argument(None, help="Session id or a unique prefix of it (see `sessions list`)."),
    all_: bool = typer.Option(False, "--all", help="Wipe every session."),
    expired: bool = typer.Option(False, "--expired", help="Wipe the sessions idle longer than the expiry."),
    state_dir: Path = STATE_DIR,
    config: Path = CONFIG,
) -> None:
    """Delete sessions and their pseudonym mappings from the vault."""
    if sum(bool(x) for x in (session, all_, expired)) != 1:
        fail("give exactly one of: SESSION, --all, --expired")
    if session is not None and not re.fullmatch(r"[0-9a-f]{4,64}", session):
        fail("a session id is hexadecimal (at least 4 characters)")
    vault, s = _vault(config, state_dir)
    if vault is None:
        out.print("no chat sessions")
        return
    with _reachable(s):
        if session is not None:
            matches = [sid for sid, *_ in vault.sessions() if sid.startswith(session)]
            if len(matches) != 1:
                vault.close()
                fail(f"{len(matches)} sessions match {session!r}")
            n = vault.wipe(matches[0])
        elif expired:
            n = vault.wipe(older_than=time.time() - s.session.idle_expiry_s)
        else:
            n = vault.wipe()
    vault.close()
    out.print(f"wiped {n} session{'s' if n != 1 else ''}")

"""Risk commands: user overrides (`allow`, `deny`, `level`, `overrides`) and the context `sweep`."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import typer
from pydantic import ValidationError

from ..config import Override
from ..errors import GuardianError
from ..overrides import OverrideStore, check_owner, describe_override, normalize_domain, with_term
from ..state import StateUnavailable
from ..types import RawRequest
from .app import app
from .common import CONFIG, fail, settings_from
from .progress import PROGRESS, BatchProgress

_DOMAIN_HELP = "Domain (a registrable domain covers its subdomains); '*' for any domain."
_STATE = typer.Option(None, "--state-dir", help="Where overrides.yaml lives (default: the state directory; "
                                                "with state.backend redis the rules live in Redis).")


def _store(config: Path | None, state_dir: Path | None, s=None) -> OverrideStore:
    """The configured back end's store (a file in the state dir, or the fleet's Redis)."""
    s = s if s is not None else settings_from(config, state_dir)
    try:
        store = OverrideStore.for_settings(s)
    except (GuardianError, OSError) as e:
        fail(f"{e}\n(fix or delete the file; `guardian-proxy overrides` lists what it holds)")
    store.live = False  # the CLI never counts or spends a rule
    return store


def _term(once: bool, for_: str | None, until_restart: bool) -> str | None:
    given = [t for t, on in (("once", once), (for_, for_ is not None), ("restart", until_restart)) if on]
    if len(given) > 1:
        fail("choose one of --once, --for DURATION, --until-restart (none: forever)")
    return given[0] if given else None


def _add(action: str, domain: str | None, category: str | None, owner: str | None, recipient: str | None,
         level: int | None, config: Path | None, state_dir: Path | None, term: str | None = None,
         app_name: str | None = None) -> None:
    try:
        dom = normalize_domain(domain) if domain else ""
        o = Override(action=action, domain=dom or None, owner=check_owner(owner) if owner else None,
                     category=category, recipient=recipient, level=level, app=(app_name or "").strip() or None)
    except ValidationError as e:
        fail("; ".join(err["msg"].removeprefix("Value error, ") for err in e.errors()))
    except ValueError as e:
        fail(str(e))
    s = settings_from(config, state_dir)
    store = _store(config, state_dir, s)
    try:
        o = with_term(o, term, s.state_dir)
        rule = store.add_rule(o)
    except ValueError as e:
        fail(str(e))
    except (GuardianError, OSError, StateUnavailable) as e:
        fail(str(e))
    typer.echo(f"override {rule.id}: {describe_override(rule)}  (saved in {store.where}; a running proxy applies "
               f"it to the next request; remove it with `guardian-proxy overrides --remove {rule.id}`)")


_CATEGORY = typer.Option(None, "--category", help="Only when this data category is present.")
_OWNER = typer.Option(None, "--owner", help="Only for destinations of this owner (a company the recipient tables "
                                            "know, e.g. Google).")
_RECIPIENT = typer.Option(None, "--recipient", help="Only for this recipient class (ad_network …).")
_APP = typer.Option(None, "--app", help="Only requests sent by this program (as `guardian-proxy log` names it): "
                                         "curl, python3 (any python3 script), 'python3 agent.py' (that script).")
_ONCE = typer.Option(False, "--once", help="Only the next matching request, then the rule is spent.")
_FOR = typer.Option(None, "--for", metavar="DURATION", help="For a time: 30m, 1h, 2d, 1h30m.")
_RESTART = typer.Option(False, "--until-restart", help="Until the running proxy stops or restarts.")


@app.command()
def allow(
    domain: str = typer.Argument(None, help=_DOMAIN_HELP),
    category: str = _CATEGORY,
    owner: str = _OWNER,
    recipient: str = _RECIPIENT,
    app_: str = _APP,
    once: bool = _ONCE,
    for_: str = _FOR,
    until_restart: bool = _RESTART,
    config: Path = CONFIG,
    state_dir: Path = _STATE,
) -> None:
    """Allow matching requests: forever, or --once, --for 1h, --until-restart (user override)."""
    _add("allow", domain, category, owner, recipient, None, config, state_dir, _term(once, for_, until_restart),
         app_)


@app.command()
def deny(
    domain: str = typer.Argument(None, help=_DOMAIN_HELP),
    category: str = _CATEGORY,
    owner: str = _OWNER,
    recipient: str = _RECIPIENT,
    app_: str = _APP,
    once: bool = _ONCE,
    for_: str = _FOR,
    until_restart: bool = _RESTART,
    config: Path = CONFIG,
    state_dir: Path = _STATE,
) -> None:
    """Block matching requests: forever, or --once, --for 1h, --until-restart (user override)."""
    _add("deny", domain, category, owner, recipient, None, config, state_dir, _term(once, for_, until_restart),
         app_)


@app.command()
def level(
    domain: str = typer.Argument(..., help=_DOMAIN_HELP),
    n: int = typer.Argument(..., min=1, max=5, help="Rewrite level 1..5."),
    category: str = _CATEGORY,
    owner: str = _OWNER,
    recipient: str = _RECIPIENT,
    app_: str = _APP,
    once: bool = _ONCE,
    for_: str = _FOR,
    until_restart: bool = _RESTART,
    config: Path = CONFIG,
    state_dir: Path = _STATE,
) -> None:
    """Rewrite matching requests at level N: forever, or --once, --for 1h, --until-restart (user override)."""
    _add("level", domain, category, owner, recipient, n, config, state_dir, _term(once, for_, until_restart),
         app_)


def _when(iso: str | None) -> str:
    if not iso:
        return "-"
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return iso


def _ends(row: dict) -> str:
    if row.get("once"):
        return f"spent {_when(row.get('spent'))}" if row.get("spent") else "after 1 match"
    if row.get("expires"):
        return ("expired " if row["state"] == "expired" else "") + _when(row["expires"])
    if row.get("run"):
        return "ended (proxy restarted)" if row["state"] == "ended" else "at proxy restart"
    return "never"


def _remove(store: OverrideStore, key: str) -> None:
    rows = store.listing()
    if key.isdigit() and not any(o.id == key for _, _, o in rows):
        n = int(key)
        hint = next((f"; number {n} in the listing is now rule {o.id} ({describe_override(o)})"
                     for i, _, o in rows if i == n), "")
        fail(f"overrides are removed by id, not number (numbers shift when a rule is removed){hint}; "
             f"`guardian-proxy overrides` lists the ids")
    gone = store.remove(key)
    typer.echo(f"removed override {gone.id}: {describe_override(gone)}")


@app.command()
def overrides(
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list."),
    remove: str = typer.Option(None, "--remove", metavar="ID", help="Remove the override with this id."),
    config: Path = CONFIG,
    state_dir: Path = _STATE,
) -> None:
    """List the user overrides in match order (the last match wins) with id, term, when made, when they end and
    how often they matched; or remove one by id."""
    store = _store(config, state_dir)
    try:
        if remove is not None:
            return _remove(store, remove)
        rows = store.rows()
    except (GuardianError, OSError, StateUnavailable) as e:
        fail(str(e))
    if as_json:
        print(json.dumps(rows))
        return
    if not rows:
        typer.echo(f"no overrides (store: {store.where})")
        return
    typer.echo(f"{'ID':<7} {'RULE':<52} {'MADE':<16}  {'ENDS':<24} {'MATCHED':>7}  {'LAST MATCH':<16}  SOURCE")
    for r in rows:
        o = Override.model_validate({k: r[k] for k in Override.model_fields if k in r})
        state = "" if r["state"] == "active" else f" [{r['state']}]"
        typer.echo(f"{r['id']:<7} {describe_override(o) + state:<52} {_when(r.get('created')):<16}  "
                   f"{_ends(r):<24} {r['matched']:>7}  {_when(r.get('last_matched')):<16}  {r['source']}")


# --------------------------------------------------------------------------- sweep


def _texts(path: Path, limit: int | None) -> list[str]:
    out: list[str] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        fail(f"cannot read {path}: {e}")
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            text = json.loads(line)["text"]
        except (ValueError, KeyError, TypeError):
            fail(f"{path}:{i}: expected a JSON object with a 'text' string")
        if not isinstance(text, str):
            fail(f"{path}:{i}: 'text' is not a string")
        out.append(text)
        if limit is not None and len(out) >= limit:
            break
    return out


def sweep_request(text: str) -> RawRequest:
    """One text as the body of a plain-text POST (the context replaces recipient, purpose, basis, MT)."""
    return RawRequest(method="POST", url="https://sweep.invalid/submit", body=text.encode("utf-8"),
                      headers=[("content-type", "text/plain; charset=utf-8")])


def sweep_stats(gw, texts: list[str], context: str, likelihood: float, tick=lambda: None) -> dict:
    """Evaluate every text through the gateway with the context and L fixed; shares are over all texts
    (a text in which nothing personal was found is allowed), R_mean over the texts that were scored,
    level means over the transformed ones (final = start until escalation changes it)."""
    n = len(texts)
    kinds = {"allow": 0, "transform": 0, "deny": 0}
    rs: list[float] = []
    starts: list[int] = []
    finals: list[int] = []
    tiers: dict[str, dict[str, int]] = {}
    errors = 0
    for text in texts:
        d = gw.evaluate(sweep_request(text), context=context, likelihood=likelihood, log=False)
        tick()
        kinds[d.action] += 1
        errors += bool(d.rule and "-error-" in d.rule)  # a stage failed: the tier's fail mode decided
        tier = d.risk.tier if d.risk is not None else "none"
        tiers.setdefault(tier, {"allow": 0, "transform": 0, "deny": 0})[d.action] += 1
        if d.risk is not None:
            rs.append(d.risk.R)
        if d.action == "transform" and d.start_level is not None:
            starts.append(d.start_level)
            finals.append(d.final_level if d.final_level is not None else d.start_level)

    def mean(xs: list) -> float | None:
        return round(sum(xs) / len(xs), 3) if xs else None

    return {"R_mean": mean(rs), **{k: round(v / n, 3) if n else 0.0 for k, v in kinds.items()},
            "start_level_mean": mean(starts), "final_level_mean": mean(finals),
            "n": n, "scored": len(rs), "errors": errors, "tiers": tiers}


@app.command()
def sweep(
    input: Path = typer.Option(..., "--input", help="JSONL file, one object with a 'text' string a line."),
    likelihood: list[float] = typer.Option([0.7], "--likelihood", min=0.0, max=1.0,
                                           help="Fixed L (repeat for a sweep over L)."),
    context: list[str] = typer.Option(None, "--context", help="Context name (repeatable; default: all)."),
    limit: int = typer.Option(None, "--limit", min=1, help="Only the first N texts."),
    config: Path = CONFIG,
    progress: bool = PROGRESS,
) -> None:
    """The published context sweep: each text through the gateway with the context and L fixed.

    Prints one JSON object: context → {R_mean, allow, transform, deny, start_level_mean,
    final_level_mean, n, scored, errors, tiers}; with several --likelihood values, L → that object.
    User overrides are not applied."""
    texts = _texts(input, limit)
    if not texts:
        fail(f"{input}: no texts")
    s = settings_from(config)
    from ..pipeline import Gateway

    gw = Gateway.from_settings(s, with_log=False)
    gw.overrides = OverrideStore(None, [])
    names = context or list(gw.tables.contexts)
    unknown = [c for c in names if c not in gw.tables.contexts]
    if unknown:
        fail(f"unknown context {', '.join(unknown)}; known: {', '.join(gw.tables.contexts)}")
    with BatchProgress("sweep", "evaluations", total=len(texts) * len(names) * len(likelihood), show=progress) as bar:
        out = {f"{lk:g}": {c: sweep_stats(gw, texts, c, lk, bar.advance) for c in names} for lk in likelihood}
    print(json.dumps(out[f"{likelihood[0]:g}"] if len(likelihood) == 1 else out))

"""Risk commands: user overrides (`allow`, `deny`, `level`, `overrides`) and the context `sweep`."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from pydantic import ValidationError

from ..config import Override
from ..errors import GuardianError
from ..overrides import OverrideStore, normalize_domain
from ..risk import describe_override
from ..types import RawRequest
from .app import app
from .common import CONFIG, fail, settings_from

_DOMAIN_HELP = "Domain (a registrable domain covers its subdomains); '*' for any domain."
_STATE = typer.Option(None, "--state-dir", help="Where overrides.yaml lives (default: the state directory).")


def _store(config: Path | None, state_dir: Path | None) -> OverrideStore:
    s = settings_from(config, state_dir)
    try:
        return OverrideStore.for_settings(s)
    except (GuardianError, OSError) as e:
        fail(f"{e}\n(fix or delete the file; `guardian-proxy overrides` lists what it holds)")


def _add(action: str, domain: str | None, category: str | None, owner: str | None, recipient: str | None,
         level: int | None, config: Path | None, state_dir: Path | None) -> None:
    try:
        dom = normalize_domain(domain) if domain else ""
        o = Override(action=action, domain=dom or None, owner=owner, category=category, recipient=recipient,
                     level=level)
    except ValidationError as e:
        fail("; ".join(err["msg"].removeprefix("Value error, ") for err in e.errors()))
    except ValueError as e:
        fail(str(e))
    store = _store(config, state_dir)
    try:
        n = store.add(o)
    except (GuardianError, OSError) as e:
        fail(str(e))
    typer.echo(f"override {n}: {describe_override(o)}  (saved in {store.path}; a running proxy applies it "
               f"to the next request)")


_CATEGORY = typer.Option(None, "--category", help="Only when this data category is present.")
_OWNER = typer.Option(None, "--owner", help="Only for destinations of this owner (company).")
_RECIPIENT = typer.Option(None, "--recipient", help="Only for this recipient class (ad_network …).")


@app.command()
def allow(
    domain: str = typer.Argument(None, help=_DOMAIN_HELP),
    category: str = _CATEGORY,
    owner: str = _OWNER,
    recipient: str = _RECIPIENT,
    config: Path = CONFIG,
    state_dir: Path = _STATE,
) -> None:
    """Always allow matching requests (persistent user override)."""
    _add("allow", domain, category, owner, recipient, None, config, state_dir)


@app.command()
def deny(
    domain: str = typer.Argument(None, help=_DOMAIN_HELP),
    category: str = _CATEGORY,
    owner: str = _OWNER,
    recipient: str = _RECIPIENT,
    config: Path = CONFIG,
    state_dir: Path = _STATE,
) -> None:
    """Always block matching requests (persistent user override)."""
    _add("deny", domain, category, owner, recipient, None, config, state_dir)


@app.command()
def level(
    domain: str = typer.Argument(..., help=_DOMAIN_HELP),
    n: int = typer.Argument(..., min=1, max=5, help="Rewrite level 1..5."),
    category: str = _CATEGORY,
    owner: str = _OWNER,
    recipient: str = _RECIPIENT,
    config: Path = CONFIG,
    state_dir: Path = _STATE,
) -> None:
    """Always rewrite matching requests at level N (persistent user override)."""
    _add("level", domain, category, owner, recipient, n, config, state_dir)


@app.command()
def overrides(
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list."),
    remove: int = typer.Option(None, "--remove", help="Remove the override numbered N (see the listing)."),
    config: Path = CONFIG,
    state_dir: Path = _STATE,
) -> None:
    """List the user overrides in match order (the last match wins), or remove one."""
    store = _store(config, state_dir)
    try:
        if remove is not None:
            gone = store.remove(remove)
            typer.echo(f"removed override {remove}: {describe_override(gone)}")
            return
        rows = store.listing()
    except (GuardianError, OSError) as e:
        fail(str(e))
    if as_json:
        print(json.dumps([{"n": n, "source": src, **o.model_dump(exclude_none=True)} for n, src, o in rows]))
        return
    if not rows:
        typer.echo(f"no overrides (store: {store.path})")
        return
    for n, src, o in rows:
        typer.echo(f"{n:>3}  {describe_override(o):<60} [{src}]")


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


def sweep_stats(gw, texts: list[str], context: str, likelihood: float) -> dict:
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
    out = {f"{lk:g}": {c: sweep_stats(gw, texts, c, lk) for c in names} for lk in likelihood}
    print(json.dumps(out[f"{likelihood[0]:g}"] if len(likelihood) == 1 else out))

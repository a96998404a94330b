"""`guardian-proxy policy add|list|show`: the privacy policies the evidence stage answers with."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from ..errors import PolicyError
from ..resources import policies_dir
from ..state import StateUnavailable
from .app import app
from .common import CONFIG, STATE_DIR, DataOut, fail, settings_from

policy_app = typer.Typer(help="Privacy policies: the shipped corpus and the ones you add or the proxy learns.",
                         no_args_is_help=True)
app.add_typer(policy_app, name="policy")
out = DataOut()


def _stage(config: Path | None, state_dir: Path | None):
    """The evidence stage on the configured back end (`<state_dir>/policies`, or the fleet's Redis)."""
    from ..policy import EvidenceStage

    s = settings_from(config, state_dir)
    return EvidenceStage.for_settings(s, policies_dir())


def _read(config: Path | None, state_dir: Path | None):
    """The policy store, read now (the store not answering is a one-line failure, not an empty list)."""
    store = _stage(config, state_dir).store
    try:
        store.refresh()
    except (StateUnavailable, PolicyError) as e:
        fail(str(e))
    return store


@policy_app.command("add")
def add(
    domain: str = typer.Argument(..., help="Registrable domain the policy is for (example.com)."),
    file: Path = typer.Argument(..., help="The policy: HTML, Markdown or plain text."),
    name: str = typer.Option(None, "--name", help="Title to record (default: the document's title)."),
    state_dir: Path = STATE_DIR,
    config: Path = CONFIG,
) -> None:
    """Segment a policy into statements and store it for DOMAIN (it takes precedence over the shipped one)."""
    try:
        content = file.read_bytes()
    except OSError as e:
        fail(f"cannot read {file}: {e}")
    stage = _stage(config, state_dir)
    try:
        report = stage.add(domain, content, origin=str(file.resolve()), name=name)
    except (StateUnavailable, PolicyError) as e:
        fail(f"not stored: {e}")
    out.print(report.message, highlight=False)
    if not report.stored:
        raise typer.Exit(1)


@policy_app.command("list")
def list_cmd(
    as_json: bool = typer.Option(False, "--json", help='Print [{"domain", "statements", "source"}, ...].'),
    state_dir: Path = STATE_DIR,
    config: Path = CONFIG,
) -> None:
    """List known policies: shipped (built from Open Terms Archive) and user (added or learned)."""
    rows = [p.summary() for p in _read(config, state_dir).all()]
    if as_json:
        print(json.dumps(rows, ensure_ascii=False))
        return
    t = Table("domain", "name", "source", "statements", "domains")
    for r in rows:
        t.add_row(r["domain"], r["name"], r["source"], str(r["statements"]), str(len(r["domains"])))
    out.print(t)
    out.print(f"{len(rows)} policies, {sum(r['statements'] for r in rows)} statements")


@policy_app.command("show")
def show(
    domain: str = typer.Argument(..., help="A domain (any domain the policy covers, e.g. doubleclick.net)."),
    as_json: bool = typer.Option(False, "--json", help="Print the policy and its statements as JSON."),
    limit: int = typer.Option(0, "--limit", help="Show at most this many statements (0 = all)."),
    state_dir: Path = STATE_DIR,
    config: Path = CONFIG,
) -> None:
    """Show the policy that answers for DOMAIN and its statements."""
    from ..domains import registrable_domain

    store = _read(config, state_dir)
    policy = store.find(registrable_domain(domain) or domain)
    if policy is None:
        fail(f"no policy known for {domain} (add one: guardian-proxy policy add {domain} FILE)")
    try:
        statements = policy.statements[:limit] if limit > 0 else policy.statements
    except (StateUnavailable, PolicyError) as e:
        fail(str(e))
    if as_json:
        print(json.dumps({**policy.summary(), "documents": policy.documents,
                          "statements": [s.model_dump() for s in statements]}, ensure_ascii=False))
        return
    out.print(f"[bold]{policy.name}[/] ({policy.domain}, {policy.source}) — {policy.count} statements, "
              f"{len(policy.domains)} domains", highlight=False)
    for d in policy.documents:
        out.print(f"  source: {d.get('title') or d.get('origin')} [dim]{d.get('collection') or d.get('origin') or ''}[/]",
                  highlight=False)
    for s in statements:
        fields = "  ".join(f"{k}: {', '.join(v)}" for k, v in (("categories", s.data_categories),
                           ("recipients", s.recipients), ("purposes", s.purposes)) if v)
        extra = "  ".join(f"{k}: {v}" for k, v in (("condition", s.condition), ("retention", s.retention)) if v)
        practice = ("not " if s.negated else "") + s.practice
        out.print(f"[bold]{s.id.split(':')[-1]}[/] [cyan]{practice}[/]  {fields}  {extra}".rstrip(), highlight=False)
        out.print(f"     {s.text}", highlight=False, soft_wrap=True)

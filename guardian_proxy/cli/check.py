"""`guardian-proxy check`: evaluate one request offline and explain the decision."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ..types import RawRequest
from .app import app
from .common import CONFIG, console, fail, read_data, settings_from


def decision_json(d) -> dict:
    a = d.six
    return {
        "id": d.id,
        "action": {"domain": a.domain, "categories": a.categories, "recipients": [a.recipient],
                   "purposes": a.purposes, "basis": a.basis},
        "L": d.likelihood.value if d.likelihood else None,
        "l_path": d.likelihood.path if d.likelihood else None,
        "R": d.risk.R if d.risk else 0.0,
        "tier": d.risk.tier if d.risk else None,
        "decision": d.action,
        "start_level": d.start_level,
        "final_level": d.final_level,
        "explanation": d.explanation,
        "body": d.rewrite.body.decode("utf-8", "replace") if d.rewrite and d.rewrite.body is not None else None,
    }


@app.command()
def check(
    url: str = typer.Option(..., "--url", help="Request URL."),
    method: str = typer.Option("GET", "--method", "-X"),
    header: list[str] = typer.Option(None, "--header", "-H", help="'Name: value' (repeatable)."),
    data: str = typer.Option(None, "--data", "-d", help="Body, @file, or @- for stdin."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    context: str = typer.Option(None, "--context", help="Fix the context: mild | medium | severe."),
    likelihood: float = typer.Option(None, "--likelihood", min=0.0, max=1.0, help="Fix L instead of estimating it."),
    config: Path = CONFIG,
) -> None:
    """Evaluate one request offline (nothing is sent) and explain the decision."""
    headers = []
    for h in header or []:
        name, sep, value = h.partition(":")
        if not sep:
            fail(f"header must be 'Name: value', got {h!r}")
        headers.append((name.strip(), value.strip()))
    s = settings_from(config)
    from ..pipeline import Gateway

    gw = Gateway.from_settings(s, with_log=False)
    try:
        d = gw.evaluate(RawRequest(method=method.upper(), url=url, headers=headers, body=read_data(data)),
                        context=context, likelihood=likelihood, log=False)
    except KeyError as e:
        fail(str(e))
    out = decision_json(d)
    if as_json:
        print(json.dumps(out, ensure_ascii=False))
        return
    colour = {"allow": "green", "transform": "yellow", "deny": "red"}[d.action]
    console.print(f"[bold {colour}]{d.action.upper()}[/]  {d.explanation}")
    console.print(f"categories: {out['action']['categories']}  recipient: {d.six.recipient}  "
                  f"purposes: {', '.join(d.six.purposes)}  basis: {d.six.basis}")
    if d.risk:
        r = d.risk
        console.print(f"L {out['L']:.2f} ({out['l_path']})  Sd {r.Sd:.2f}  Seff {r.Seff:.2f}  MT {r.MT:.2f}  "
                      f"R {r.R:.3f}  tier {r.tier} [{r.allow_ceiling:.2f}, {r.deny_floor:.2f}]")
    if out["body"] is not None:
        console.print("rewritten body:")
        print(out["body"])

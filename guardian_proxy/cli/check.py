"""`guardian-proxy check`: evaluate one request offline and explain the decision.

Called like curl: `guardian-proxy check https://api.example.com/v1 -d '{"email": "…"}' -H 'Name: value'`
(the URL positional or `--url`; `-d` without `-X` means POST; a URL without a scheme is http://). The
verdict is the data and goes to stdout (with `--json`, one JSON object on one line); errors and the
model-loading spinner go to stderr.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from ..errors import GuardianError
from ..types import RawRequest
from .app import app
from .common import COLOR, CONFIG, fail, json_line, one_line, read_data, settings_from, stdout_console
from .progress import loading


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


def request_url(positional: str | None, option: str | None) -> str:
    """The URL from the positional argument or `--url` (one of them, or both the same); like curl, a URL
    without a scheme is taken as http://."""
    given = {u for u in (positional, option) if u}
    if not given:
        fail("give the request URL: guardian-proxy check URL [-d BODY] (or --url URL)")
    if len(given) > 1:
        fail(f"two different URLs given: {positional!r} and --url {option!r}")
    url = given.pop().strip()
    return url if "://" in url else "http://" + url


@app.command()
def check(
    url_arg: str = typer.Argument(None, metavar="URL", show_default=False,
                                  help="Request URL (like curl's; same as --url)."),
    url: str = typer.Option(None, "--url", help="Request URL."),
    method: str = typer.Option(None, "--method", "-X", show_default=False,
                               help="HTTP method (default: POST with --data, else GET)."),
    header: list[str] = typer.Option(None, "--header", "-H", help="'Name: value' (repeatable)."),
    data: str = typer.Option(None, "--data", "-d", help="Body, @file, or @- for stdin."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (one line)."),
    context: str = typer.Option(None, "--context", help="Fix the context: mild | medium | severe."),
    likelihood: float = typer.Option(None, "--likelihood", min=0.0, max=1.0, help="Fix L instead of estimating it."),
    color: bool = COLOR,
    config: Path = CONFIG,
) -> None:
    """Evaluate one request offline (nothing is sent) and explain the decision (on stdout)."""
    url = request_url(url_arg, url)
    method = method or ("POST" if data is not None else "GET")
    headers = []
    for h in header or []:
        name, sep, value = h.partition(":")
        if not sep:
            fail(f"header must be 'Name: value', got {h!r}")
        headers.append((name.strip(), value.strip()))
    s = settings_from(config)
    from ..pipeline import Gateway

    body = read_data(data)
    try:
        with loading():  # the spinner is gone before any message is printed
            gw = Gateway.from_settings(s, with_log=False)
            gw.overrides.live = False  # a what-if: it neither counts matches nor spends a once rule
            d = gw.evaluate(RawRequest(method=method.upper(), url=url, headers=headers, body=body),
                            context=context, likelihood=likelihood, log=False)
    except (KeyError, GuardianError) as e:  # a bad model file, a missing table: one line, no traceback
        fail(str(e))
    out = {**decision_json(d), "request": {"method": method.upper(), "url": url}}
    if as_json:
        print(json_line(out), flush=True)
        return
    show = stdout_console(color)
    colour = {"allow": "green", "transform": "yellow", "deny": "red"}[d.action]
    show.print(f"[bold {colour}]{d.action.upper()}[/]  {escape(one_line(d.explanation))}", highlight=False)
    show.print(escape(one_line(f"categories: {out['action']['categories']}  recipient: {d.six.recipient}  "
                               f"purposes: {', '.join(d.six.purposes)}  basis: {d.six.basis}")), highlight=False)
    if d.risk:
        r = d.risk
        show.print(escape(f"L {out['L']:.2f} ({out['l_path']})  Sd {r.Sd:.2f}  Seff {r.Seff:.2f}  MT {r.MT:.2f}  "
                          f"R {r.R:.3f}  tier {r.tier} [{r.allow_ceiling:.2f}, {r.deny_floor:.2f}]"), highlight=False)
    if out["body"] is not None:
        show.print("rewritten body:", highlight=False)
        print(out["body"], flush=True)

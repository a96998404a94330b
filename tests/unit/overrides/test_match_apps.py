"""Overrides that name the sending program (R-OVERRIDE): `allow api.tracker.example --app "python3 agent.py"`
lets that script's requests through and no other program's; the rule's text names the app."""

import json

import pytest
from typer.testing import CliRunner

from guardian_proxy.cli import app
from guardian_proxy.config import Override, load_settings
from guardian_proxy.overrides import describe_override, find_override
from guardian_proxy.pipeline import Gateway
from guardian_proxy.procinfo import app_matches_rule
from guardian_proxy.types import Action, RawRequest

AGENT = {"name": "python3 agent.py", "pid": 978, "exe": "/usr/bin/python3.11", "kind": "tool"}
OTHER_SCRIPT = {"name": "python3 scraper.py", "pid": 979, "exe": "/usr/bin/python3.11", "kind": "tool"}
CURL = {"name": "curl", "pid": 977, "exe": "/usr/bin/curl", "kind": "tool"}


@pytest.mark.parametrize("rule, app_, hit", [
    ("python3 agent.py", AGENT, True),
    ("Python3  Agent.py", AGENT, True),
    ("python agent.py", AGENT, True),  # the executable's name, shorter
    ("python3", AGENT, True),  # a program alone: any of its scripts
    ("python3.11", OTHER_SCRIPT, True),
    ("python3 agent.py", OTHER_SCRIPT, False),
    ("python3 agent.py", CURL, False),
    ("curl", CURL, True),
    ("cur", CURL, False),  # a rule is a name, not a substring
    ("curl", None, False),  # outside the proxy, or not known
    ("curl", {"name": "unknown", "why": "no-permission"}, False),
    ("remote", {"name": "remote"}, True),
])
def test_app_matches_rule(rule, app_, hit):
    assert app_matches_rule(app_, rule) is hit


def test_find_override_with_an_app():
    a = Action(domain="openai.com", host="api.openai.com")
    rules = [Override(action="deny", domain="openai.com"), Override(action="allow", domain="openai.com",
                                                                     app="python3 agent.py")]
    assert find_override(rules, a, AGENT).action == "allow"
    assert find_override(rules, a, CURL).action == "deny"  # the rule for every program applies to the others
    assert find_override(rules, a).action == "deny"
    assert describe_override(rules[1]) == "always allow (domain=openai.com, app=python3 agent.py)"


def test_cli_rule_for_an_app_reaches_a_running_gateway(tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"state_dir: {tmp_path}\ndetector: {{ner: false}}\n")
    gw = Gateway.from_settings(load_settings(cfg), with_log=True)
    runner = CliRunner()
    r = runner.invoke(app, ["deny", "api.tracker.example", "--app", "curl", "--config", str(cfg)])
    assert r.exit_code == 0, r.output
    assert "app=curl" in r.output

    def post(who):
        return RawRequest(method="POST", url="https://api.tracker.example/v1", app=who,
                          body=json.dumps({"q": "weather"}).encode(), headers=[("content-type", "application/json")])

    d = gw.evaluate(post(CURL), likelihood=0.2)
    assert d.action == "deny" and d.override == "always deny (domain=api.tracker.example, app=curl)"
    assert gw.evaluate(post(AGENT), likelihood=0.2).override is None
    assert gw.evaluate(post(None), likelihood=0.2).override is None
    rows = json.loads(runner.invoke(app, ["overrides", "--json", "--config", str(cfg)]).stdout)
    assert rows[-1]["app"] == "curl"
    recs = [json.loads(x) for x in (tmp_path / "decisions.jsonl").read_text().splitlines()]
    assert recs[0]["app"]["name"] == "curl" and recs[0]["override"].endswith("app=curl)")


# ------------------------------------------------------------------ the basis: a tool or a browser's own request

def _req(url, app_=None, **headers):
    return RawRequest(method="POST", url=url, app=app_, headers=[(k.replace("_", "-"), v) for k, v in headers.items()])


CHROMIUM = {"name": "chromium", "pid": 12, "exe": "/usr/lib/chromium/chromium", "kind": "browser"}
MOZ = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"


def test_the_program_corroborates_who_addressed_it():
    from guardian_proxy.extract import addressee

    # a request with no page headers from the browser's own process: its background traffic, not the user's tool
    assert addressee.client(_req("https://update.example.com/check")) == "tool"
    assert addressee.client(_req("https://update.example.com/check", CHROMIUM)) == "browser"
    # a tool never turns a browser's or an app's request into the user's own (a script may speak for an app)
    assert addressee.client(_req("http://api.example.com/x", CURL, user_agent=MOZ)) == "browser"
    assert addressee.client(_req("http://api.example.com/x", AGENT, user_agent="okhttp/4.12")) == "app"
    assert addressee.client(_req("https://api.example.com/x", CURL)) == "tool"
    # a page's request stays a page's, a stream a stream, whatever the program
    assert addressee.client(_req("https://api.example.com/x", CURL, origin="https://shop.example")) == "page"
    assert addressee.client(_req("tcp://api.example.com:5432/", CURL)) == "stream"
    # not known: the headers alone, as before
    assert addressee.client(_req("https://api.example.com/x", {"name": "unknown", "why": "gone"})) == "tool"

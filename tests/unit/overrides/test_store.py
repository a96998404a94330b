"""The persistent override store, the CLI that edits it, and a gateway that sees edits at once."""

import json
import os

import pytest
from typer.testing import CliRunner

from guardian_proxy.cli import app
from guardian_proxy.config import Override, load_settings
from guardian_proxy.errors import ConfigError
from guardian_proxy.overrides import OverrideStore, normalize_domain
from guardian_proxy.pipeline import Gateway
from guardian_proxy.types import RawRequest

runner = CliRunner()


def test_normalize_domain():
    assert normalize_domain("https://Shop.Example.com:443/cart?x=1") == "shop.example.com"
    assert normalize_domain("*.tracker.net.") == "tracker.net"
    assert normalize_domain("*") == ""
    with pytest.raises(ValueError):
        normalize_domain("not a domain")


def test_store_adds_lists_removes_and_config_entries_come_first(tmp_path):
    base = [Override(action="allow", domain="bank.example")]
    store = OverrideStore(tmp_path / "overrides.yaml", base)
    assert store.current() == base
    assert store.add(Override(action="deny", domain="bank.example")) == 2
    assert store.add(Override(action="level", recipient="ad_network", level=4)) == 3
    # the same target again replaces the earlier entry instead of piling up
    assert store.add(Override(action="allow", domain="bank.example")) == 3
    rows = store.listing()
    assert [(n, src, o.action) for n, src, o in rows] == [(1, "config", "allow"), (2, "store", "level"),
                                                         (3, "store", "allow")]
    with pytest.raises(ConfigError, match="config file"):
        store.remove(1)
    with pytest.raises(ConfigError, match="no override numbered 9"):
        store.remove(9)
    assert store.remove(2).recipient == "ad_network"
    assert [o.action for o in OverrideStore(tmp_path / "overrides.yaml").current()] == ["allow"]  # persisted


def test_a_second_store_sees_changes_without_restart_and_survives_a_bad_edit(tmp_path, caplog):
    path = tmp_path / "overrides.yaml"
    running = OverrideStore(path)  # e.g. the proxy
    assert running.current() == []
    OverrideStore(path).add(Override(action="deny", domain="t.example"))  # e.g. the CLI
    assert [o.domain for o in running.current()] == ["t.example"]
    OverrideStore(path).add(Override(action="allow", domain="u.example"))
    assert [o.domain for o in running.current()] == ["t.example", "u.example"]
    path.write_text("overrides: [{action: maybe, domain: x}]\n")  # hand edit gone wrong
    os.utime(path, ns=(1, 1))
    assert [o.domain for o in running.current()] == ["t.example", "u.example"]  # keeps the last good list
    assert "ignoring" in caplog.text
    with pytest.raises(ConfigError):
        OverrideStore(path).listing()  # the CLI says what is wrong
    r = runner.invoke(app, ["overrides", "--state-dir", str(tmp_path)])
    assert r.exit_code == 2 and "overrides.yaml" in r.output and "Traceback" not in r.output
    with pytest.raises(ConfigError):  # and a proxy does not start without the user's overrides
        OverrideStore.for_settings(load_settings(None, state_dir=tmp_path))
    path.unlink()
    assert running.current() == []


def _gateway(tmp_path):
    """A gateway built from a config file that also holds one override; the CLI gets the same file."""
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"state_dir: {tmp_path}\ndetector: {{ner: false}}\n"
                   "overrides:\n  - {action: level, domain: shop.example, level: 2}\n")
    return Gateway.from_settings(load_settings(cfg), with_log=True)


def _cfg(tmp_path):
    return ["--config", str(tmp_path / "config.yaml")]


def _post(host, body):  # from another site's page (a request no page made is the user's own addressee)
    return RawRequest(method="POST", url=f"https://{host}/api/profile", body=json.dumps(body).encode(),
                      headers=[("content-type", "application/json"), ("origin", "https://www.news-example.org")])


def _records(tmp_path):
    return [json.loads(line) for line in (tmp_path / "decisions.jsonl").read_text().splitlines()]


def test_cli_changes_reach_a_running_gateway_and_are_logged_as_overrides(tmp_path):
    gw = _gateway(tmp_path)
    req = _post("api.tracker.example", {"email": "jane.doe@mail.example"})
    before = gw.evaluate(req, likelihood=0.2)
    assert before.override is None

    r = runner.invoke(app, ["deny", "tracker.example", "--category", "contact", *_cfg(tmp_path)])
    assert r.exit_code == 0, r.output
    d = gw.evaluate(req, likelihood=0.2)
    assert d.action == "deny" and d.override == "always deny (domain=tracker.example, category=contact)"
    assert d.explanation.startswith("override: always deny") and d.risk is not None  # R still computed
    rec = _records(tmp_path)[-1]
    assert rec["override"] == d.override and rec["action"] == "deny"
    assert "jane.doe" not in (tmp_path / "decisions.jsonl").read_text()

    r = runner.invoke(app, ["level", "*", "4", "--recipient", "unknown_third_party", *_cfg(tmp_path)])
    assert r.exit_code == 0, r.output
    d = gw.evaluate(req, likelihood=0.2)
    assert (d.action, d.start_level) == ("transform", 4) and "level L4" in d.override

    r = runner.invoke(app, ["overrides", "--json", *_cfg(tmp_path)])
    rows = json.loads(r.stdout)
    assert [(x["n"], x["source"], x["action"]) for x in rows] == [(1, "config", "level"), (2, "store", "deny"),
                                                                 (3, "store", "level")]
    for rule in (rows[2]["id"], rows[1]["id"]):  # by id: numbers are positions and shift
        assert runner.invoke(app, ["overrides", "--remove", rule, *_cfg(tmp_path)]).exit_code == 0
    d = gw.evaluate(req, likelihood=0.2)
    assert d.override is None and d.action == before.action


def test_config_override_and_domain_deny_without_personal_data(tmp_path):
    gw = _gateway(tmp_path)
    d = gw.evaluate(_post("shop.example", {"email": "a.b@mail.example"}), likelihood=0.9)
    assert (d.action, d.start_level, d.override) == ("transform", 2, "level L2 (domain=shop.example)")
    nothing = RawRequest(method="GET", url="https://ads.example/")
    assert gw.evaluate(nothing).action == "allow"
    assert runner.invoke(app, ["deny", "https://ads.example/", *_cfg(tmp_path)]).exit_code == 0
    d = gw.evaluate(nothing)
    assert d.action == "deny" and d.rule == "override" and "no personal data found" in d.explanation
    assert _records(tmp_path)[-1]["override"] == "always deny (domain=ads.example)"


def test_cli_rejects_bad_targets(tmp_path):
    for args in (["allow"], ["deny", "x.example", "--category", "shoe_size"], ["level", "x.example", "7"],
                 ["allow", "--recipient", "martians"], ["overrides", "--remove", "5"]):
        r = runner.invoke(app, [*args, "--state-dir", str(tmp_path)])
        assert r.exit_code != 0, args
    assert not (tmp_path / "overrides.yaml").exists()
    r = runner.invoke(app, ["overrides", "--state-dir", str(tmp_path)])
    assert r.exit_code == 0 and "no overrides" in r.stdout

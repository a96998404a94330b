"""Overrides people can live with (R-OVERRIDE): terms (once, for a time, until restart, forever), match counts
seen across processes, stable ids, and targets checked against what the tables know."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from guardian_proxy.cli import app
from guardian_proxy.config import Override, load_settings
from guardian_proxy.overrides import COUNTS_NAME, OverrideStore, describe_override, find_override, terms
from guardian_proxy.overrides import store as overrides_mod
from guardian_proxy.pipeline import Gateway
from guardian_proxy.types import Action, RawRequest

runner = CliRunner()
BIN = Path(sys.executable).parent / "guardian-proxy"
NOTHING = RawRequest(method="GET", url="https://ads.example/x")  # no personal data: allowed unless a rule says


@pytest.fixture(scope="module")
def gw_factory():
    made = {}

    def make(tmp_path):
        cfg = tmp_path / "config.yaml"
        cfg.write_text(f"state_dir: {tmp_path}\ndetector: {{ner: false}}\n")
        made["gw"] = Gateway.from_settings(load_settings(cfg), with_log=False)
        return made["gw"]

    return make


def cli(tmp_path, *args):
    return runner.invoke(app, [*args, "--state-dir", str(tmp_path)])


def rows(tmp_path) -> list[dict]:
    r = cli(tmp_path, "overrides", "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def action(host="ads.example") -> Action:
    return Action(domain=host, host=host, categories={}, recipient="ad_network")


# --------------------------------------------------------------------------- terms


def test_once_applies_to_the_next_matching_request_only_and_is_shown_spent(tmp_path, gw_factory):
    gw = gw_factory(tmp_path)
    assert gw.evaluate(NOTHING).action == "allow"
    r = cli(tmp_path, "deny", "ads.example", "--once")
    assert r.exit_code == 0 and "deny once (domain=ads.example)" in r.output, r.output
    d = gw.evaluate(NOTHING)
    assert d.action == "deny" and d.override == "deny once (domain=ads.example)"
    assert gw.evaluate(NOTHING).action == "allow"  # spent: the one after passes as before
    assert gw.evaluate(NOTHING).action == "allow"
    gw.overrides.flush()
    (row,) = rows(tmp_path)
    assert row["state"] == "spent" and row["matched"] == 1 and row["spent"]
    # a second process (a restarted proxy) reads the file: spent stays spent
    assert find_override(OverrideStore(tmp_path / "overrides.yaml").current(), action()) is None
    listing = cli(tmp_path, "overrides").output
    assert "spent" in listing and row["id"] in listing


def test_a_once_rule_goes_to_one_request_even_when_many_race_for_it(tmp_path):
    store = OverrideStore(tmp_path / "overrides.yaml")
    store.add_rule(Override(action="allow", domain="ads.example", once=True))
    current = store.current()
    got, barrier = [], threading.Barrier(16)

    def one():
        barrier.wait()
        got.append(find_override(current, action()))

    threads = [threading.Thread(target=one) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(o is not None for o in got) == 1


def test_for_a_duration_expires_without_a_restart_and_is_dropped_at_the_next_change(tmp_path, gw_factory,
                                                                                   monkeypatch):
    gw = gw_factory(tmp_path)
    r = cli(tmp_path, "deny", "ads.example", "--for", "1h")
    assert r.exit_code == 0, r.output
    (row,) = rows(tmp_path)
    assert row["term"].startswith("until ") and row["state"] == "active" and row["expires"] and row["created"]
    assert gw.evaluate(NOTHING).action == "deny"
    later = terms.now() + timedelta(hours=1, seconds=1)
    monkeypatch.setattr(terms, "now", lambda: later)
    assert gw.evaluate(NOTHING).action == "allow"  # stopped applying at once, same process, same file
    (row,) = rows(tmp_path)
    assert row["state"] == "expired" and "expired" in cli(tmp_path, "overrides").output
    assert cli(tmp_path, "allow", "other.example").exit_code == 0  # the next change drops it
    assert [x["domain"] for x in rows(tmp_path)] == ["other.example"]


@pytest.mark.parametrize("bad", ["1x", "0m", "soon", "-1h"])
def test_bad_durations_are_refused_in_one_line(tmp_path, bad):
    r = cli(tmp_path, "allow", "x.example", "--for", bad)
    assert r.exit_code == 2 and "duration" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "overrides.yaml").exists()


def test_terms_are_exclusive(tmp_path):
    r = cli(tmp_path, "allow", "x.example", "--once", "--for", "1h")
    assert r.exit_code == 2 and "one of --once" in r.output


def test_until_restart_needs_a_running_proxy_and_ends_with_its_run(tmp_path, gw_factory):
    gw = gw_factory(tmp_path)
    r = cli(tmp_path, "deny", "ads.example", "--until-restart")
    assert r.exit_code == 2 and "no running proxy" in r.output and "runtime.json" in r.output
    # this process plays the running proxy: its pid in the runtime file
    (tmp_path / "runtime.json").write_text(json.dumps({"pid": os.getpid(), "listen": [["127.0.0.1", 1]]}))
    r = cli(tmp_path, "deny", "ads.example", "--until-restart")
    assert r.exit_code == 0 and "deny until restart" in r.output, r.output
    (row,) = rows(tmp_path)
    assert row["run"] == terms.this_run() and row["state"] == "active"
    assert gw.evaluate(NOTHING).action == "deny"
    # the same rule made for an earlier run (a pid that is gone, or this pid with another start time)
    data = yaml.safe_load((tmp_path / "overrides.yaml").read_text())
    data["overrides"][0]["run"] = f"{os.getpid()}:1"
    (tmp_path / "overrides.yaml").write_text(yaml.safe_dump(data))
    assert gw.evaluate(NOTHING).action == "allow"
    assert rows(tmp_path)[0]["state"] == "ended"


def test_describe_names_the_term():
    o = Override(action="allow", domain="x.example")
    assert describe_override(o) == "always allow (domain=x.example)"
    assert describe_override(o.model_copy(update={"once": True})) == "allow once (domain=x.example)"
    assert describe_override(o.model_copy(update={"run": "1:2"})) == "allow until restart (domain=x.example)"
    lvl = Override(action="level", recipient="ad_network", level=3, once=True)
    assert describe_override(lvl) == "level L3 once (recipient=ad_network)"
    with pytest.raises(ValueError, match="one term"):
        Override(action="allow", domain="x.example", once=True, run="1:2")


# --------------------------------------------------------------------------- match counts


def test_match_counts_are_written_by_the_proxy_and_read_by_another_process(tmp_path, gw_factory):
    gw = gw_factory(tmp_path)
    assert cli(tmp_path, "deny", "ads.example").exit_code == 0
    for _ in range(3):
        assert gw.evaluate(NOTHING).action == "deny"
    gw.overrides.flush()
    out = subprocess.run([str(BIN), "overrides", "--json", "--state-dir", str(tmp_path)], capture_output=True,
                         text=True, timeout=120, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout)
    assert row["matched"] == 3 and row["last_matched"]
    # the CLI (a what-if) never counts: listing and checking leave the count alone
    assert rows(tmp_path)[0]["matched"] == 3


def test_counts_are_written_at_most_once_every_flush_interval(tmp_path, monkeypatch):
    monkeypatch.setattr(overrides_mod, "FLUSH_S", 0.4)
    store = OverrideStore(tmp_path / "overrides.yaml")
    rule = store.add_rule(Override(action="deny", domain="ads.example"))
    writes = []
    real = store.backend.atomic
    monkeypatch.setattr(store.backend, "atomic", lambda p, t: (writes.append(p.name), real(p, t)))
    current = store.current()
    t0 = time.monotonic()
    while time.monotonic() - t0 < 1.3:
        assert find_override(current, action()) is not None
        time.sleep(0.005)
    time.sleep(1.0)
    counts = [w for w in writes if w == COUNTS_NAME]
    assert 1 <= len(counts) <= 6, counts  # ~2.3 s of matches at ≥0.4 s between writes, not one per match
    data = json.loads((tmp_path / COUNTS_NAME).read_text())
    assert data["rules"][rule.id]["matched"] == store.counts()[rule.id]["matched"] > 100
    assert not any(w == "overrides.yaml" for w in writes)  # a count never rewrites the rules


# --------------------------------------------------------------------------- stable ids


def test_ids_are_stable_when_a_rule_is_removed_and_numbers_are_refused(tmp_path):
    for d in ("a.example", "b.example", "c.example"):
        assert cli(tmp_path, "deny", d).exit_code == 0
    ids = [x["id"] for x in rows(tmp_path)]
    assert len(set(ids)) == 3 and all(i and not i.isdigit() for i in ids)
    assert cli(tmp_path, "overrides", "--remove", ids[1]).exit_code == 0
    assert [x["id"] for x in rows(tmp_path)] == [ids[0], ids[2]]  # c.example keeps its id
    r = cli(tmp_path, "overrides", "--remove", "2")  # what removed the wrong rule before
    assert r.exit_code == 2 and "by id" in r.output and ids[2] in r.output
    assert [x["domain"] for x in rows(tmp_path)] == ["a.example", "c.example"]
    r = cli(tmp_path, "overrides", "--remove", "zzzzz")
    assert r.exit_code == 2 and "no override with id" in r.output


def test_an_old_file_without_ids_is_read_with_the_same_ids_everywhere_and_keeps_them(tmp_path):
    path = tmp_path / "overrides.yaml"
    path.write_text("overrides:\n  - {action: deny, domain: a.example}\n  - {action: deny, domain: b.example}\n")
    first = [o.id for _, _, o in OverrideStore(path).listing()]
    assert all(first) and first == [o.id for _, _, o in OverrideStore(path).listing()]  # another process: same
    assert [x["id"] for x in rows(tmp_path)] == first
    assert cli(tmp_path, "overrides", "--remove", first[0]).exit_code == 0
    data = yaml.safe_load(path.read_text())
    assert [o["id"] for o in data["overrides"]] == [first[1]]  # written with the id it was shown with


def test_dashboard_api_terms_ids_and_counts(tmp_path):
    import httpx

    from guardian_proxy.dashboard import Dashboard

    s = load_settings(state_dir=tmp_path)
    d = Dashboard(s, port=0)
    assert d.start(), d.error
    try:
        with httpx.Client(base_url=d.base_url, headers={"X-Guardian-Token": d.guard.token}, trust_env=False) as c:
            for term in ("once", "1h", "restart", None):
                body = {"action": "allow", "domain": f"{term or 'forever'}.example", **({"for": term} if term else {})}
                r = c.post("/api/overrides", json=body)
                assert r.status_code == 200, r.text
            listed = {x["domain"]: x for x in r.json()["overrides"]}
            assert listed["once.example"]["once"] is True and listed["1h.example"]["expires"]
            assert listed["restart.example"]["run"] == terms.this_run()  # the dashboard runs in the proxy
            assert listed["forever.example"]["term"] == "forever"
            assert all(x["created"] and x["id"] and x["matched"] == 0 for x in listed.values())
            assert c.post("/api/overrides", json={"action": "allow", "domain": "x.example", "for": "soon"}
                          ).status_code == 400
            r = c.post("/api/overrides/remove", json={"id": listed["1h.example"]["id"]})
            assert r.status_code == 200 and "1h.example" not in {x["domain"] for x in r.json()["overrides"]}
            assert c.post("/api/overrides/remove", json={"id": "nope"}).status_code == 400
    finally:
        d.stop()


# --------------------------------------------------------------------------- targets


def test_owner_is_checked_against_the_tables_case_insensitively(tmp_path):
    r = cli(tmp_path, "deny", "--owner", "Googel")
    assert r.exit_code == 2 and "did you mean 'Google'" in r.output
    assert not (tmp_path / "overrides.yaml").exists()
    assert cli(tmp_path, "deny", "--owner", "google").exit_code == 0
    assert rows(tmp_path)[0]["owner"] == "Google"  # as the tables spell it (what Action.owner holds)


def test_recipient_and_category_are_refused_with_the_valid_ones_and_a_suggestion(tmp_path):
    r = cli(tmp_path, "deny", "--recipient", "adnetwork")
    assert r.exit_code == 2 and "did you mean 'ad_network'" in r.output
    assert "valid: first_party" in r.output and "data_broker" in r.output
    r = cli(tmp_path, "deny", "x.example", "--category", "finacial")
    assert r.exit_code == 2 and "did you mean 'financial'" in r.output and "government_id" in r.output
    assert cli(tmp_path, "deny", "--recipient", "Ad-Network").exit_code == 0
    assert rows(tmp_path)[0]["recipient"] == "ad_network"

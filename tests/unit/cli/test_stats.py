"""`guardian-proxy stats` on the fixture log: aggregates, the --since window, the rich tables."""

import json
import shutil
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardian_proxy.cli import app
from guardian_proxy.dashboard.stats import summarize
from guardian_proxy.decision_log import read_all

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "log"


@pytest.fixture
def log_path(tmp_path):
    for f in FIXTURE.glob("decisions.jsonl*"):
        shutil.copy(f, tmp_path / f.name)
    return tmp_path / "decisions.jsonl"


def stats_json(*args) -> dict:
    r = CliRunner().invoke(app, ["stats", "--json", *args])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_all_time_aggregates(log_path):
    s = stats_json("--log", str(log_path), "--since", "all")
    assert s["total"] == 9
    assert s["actions"] == {"allow": 4, "transform": 2, "deny": 3}
    top = s["destinations"][0]
    assert top["host"] == "ads.doubleclick.net" and top["requests"] == 3
    assert top["actions"] == {"allow": 1, "transform": 0, "deny": 2}
    assert top["as_is"] == {"financial": 1}  # the override let one through
    assert top["blocked"] == {"financial": 2, "contact": 2}
    assert top["max_R"] == 0.95
    openai = next(d for d in s["destinations"] if d["host"] == "api.openai.com")
    assert openai["rewritten"] == {"identity": 2, "health": 1} and openai["as_is"] == {}
    assert s["categories"]["financial"] == {"allow": 1, "transform": 0, "deny": 2}
    assert [b["host"] for b in s["blocked"]] == ["ads.doubleclick.net", "tracker.example.net"]
    assert s["risk_histogram"]["scored"] == 6 and sum(s["risk_histogram"]["counts"]) == 6
    assert s["risk_histogram"]["counts"][9] == 3  # 0.91, 0.95, 0.91
    assert s["overrides"] == 1


def test_since_window(log_path):
    s = stats_json("--log", str(log_path), "--since", "2025-01-01T01:00:00+00:00")
    assert s["total"] == 6 and s["actions"] == {"allow": 3, "transform": 1, "deny": 2}
    assert stats_json("--log", str(log_path), "--since", "24h")["total"] == 0  # the fixture is old


def test_since_24h_counts_recent_records(tmp_path):
    now = time.time()
    p = tmp_path / "decisions.jsonl"
    recs = [{"ts": now - 3600, "id": "a", "host": "x.example", "action": "deny", "categories": {"contact": 1}, "R": 0.7},
            {"ts": now - 2 * 86400, "id": "b", "host": "y.example", "action": "allow", "categories": {}, "R": None}]
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    s = stats_json("--log", str(p))  # the default window is 24h
    assert s["total"] == 1 and s["destinations"][0]["host"] == "x.example"


def test_table_output(log_path):
    r = CliRunner().invoke(app, ["stats", "--log", str(log_path), "--since", "all"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    out = r.output
    assert "9 decisions all time" in out and "4 allowed" in out and "2 rewritten" in out and "3 blocked" in out
    for title in ("Actions", "Top 10 destinations", "Categories sent", "Blocked"):
        assert title in out
    assert "ads.doubleclick.net" in out and "identity×2" in out and "0.95" in out
    assert "1 by override" in out


def test_summarize_matches_reader(log_path):
    s = summarize(read_all(log_path))
    assert s.total == 9 and s.latency()["p50"] == 3.5
    assert s.to_dict()["timeline"]["bucket_s"] == 60


def test_missing_log_and_bad_since(log_path):
    assert CliRunner().invoke(app, ["stats", "--log", str(log_path.parent / "nope.jsonl")]).exit_code == 2
    r = CliRunner().invoke(app, ["stats", "--log", str(log_path), "--since", "a while"])
    assert r.exit_code == 2 and "--since expects" in r.output


# --------------------------------------------------------------------------- --by app (the dashboard's Apps tab)

AGENT = {"name": "python3 agent.py", "pid": 978, "exe": "/usr/bin/python3.11", "kind": "tool"}
CURL = {"name": "curl", "pid": 977, "exe": "/usr/bin/curl", "kind": "tool"}


@pytest.fixture
def app_log(tmp_path):
    """A rotated log (decisions.jsonl.1, then decisions.jsonl) whose records name the sending program."""
    old = [{"ts": 1000.0, "id": "a1", "host": "api.openai.com", "action": "transform", "recipient": "ai_service",
            "categories": {"identity": 1}, "app": AGENT},
           {"ts": 1001.0, "id": "a2", "host": "t.broker.example", "action": "deny", "recipient": "data_broker",
            "categories": {"contact": 2}, "app": AGENT}]
    new = [{"ts": 1002.0, "id": "c1", "host": "px.tracker.example", "action": "allow", "recipient": "ad_network",
            "categories": {}, "app": CURL},
           {"ts": 1003.0, "id": "r1", "host": "www.example.org", "action": "allow", "recipient": "unknown_third_party",
            "categories": {"contact": 1}, "app": {"name": "unknown", "why": "no-permission"}},
           {"ts": 1004.0, "id": "n1", "host": "old.example", "action": "allow", "categories": {}}]
    (tmp_path / "decisions.jsonl.1").write_text("".join(json.dumps(r) + "\n" for r in old))
    (tmp_path / "decisions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in new))
    return tmp_path / "decisions.jsonl"


def test_by_app_json_reads_the_rotated_log_too(app_log):
    s = stats_json("--log", str(app_log), "--since", "all", "--by", "app")
    assert s["total"] == 5  # the destination aggregates stay
    assert [a["app"] for a in s["apps"]] == ["python3 agent.py", "curl", "unknown", None]
    agent = s["apps"][0]
    assert agent["requests"] == 2 and agent["with_data"] == 2 and agent["actions"] == {"allow": 0, "transform": 1,
                                                                                        "deny": 1}
    assert agent["rewritten"] == {"identity": 1} and agent["blocked"] == {"contact": 2} and agent["as_is"] == {}
    assert [d["domain"] for d in agent["destinations"]] == ["broker.example", "openai.com"]  # equal: by name
    assert agent["rule_app"] == "python3 agent.py"
    assert s["apps"][2]["label"].startswith("this machine, program not known: no permission")
    assert "apps" not in stats_json("--log", str(app_log), "--since", "all")  # only asked for


def test_by_app_table_uses_the_dashboards_words(app_log):
    from guardian_proxy.dashboard.apps import REMOTE, WHY

    r = CliRunner().invoke(app, ["stats", "--log", str(app_log), "--since", "all", "--by", "app"],
                           env={"COLUMNS": "250"})
    assert r.exit_code == 0, r.output
    out = r.output
    assert "Apps (the program that sent it)" in out and "Top 10 destinations" not in out
    agent = next(line for line in out.splitlines() if line.lstrip().startswith("python3 agent.py"))
    assert "openai.com×1" in agent and "broker.example×1" in agent and "identity×1" in agent
    assert "contact×2" in agent and "--app python3 agent.py" in agent
    assert WHY["no-permission"] in out and REMOTE not in out and "not recorded" in out
    bad = CliRunner().invoke(app, ["stats", "--log", str(app_log), "--by", "host"])
    assert bad.exit_code == 2 and "--by host?" in bad.output


def test_by_app_on_a_log_without_the_field(log_path):
    s = stats_json("--log", str(log_path), "--since", "all", "--by", "app")
    assert [(a["app"], a["requests"]) for a in s["apps"]] == [(None, 9)]

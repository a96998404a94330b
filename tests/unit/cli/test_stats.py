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

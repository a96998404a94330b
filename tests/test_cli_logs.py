"""`guardian-proxy log` filters and --follow on a fixture log (a rotated file, a live file, a torn line)."""

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardian_proxy.cli import app
from guardian_proxy.cli.filters import RecordFilter, parse_since

FIXTURE = Path(__file__).parent / "fixtures" / "log"
BASE = 1735689600.0  # the fixture's first timestamp


@pytest.fixture
def log_path(tmp_path):
    for f in FIXTURE.glob("decisions.jsonl*"):
        shutil.copy(f, tmp_path / f.name)
    return tmp_path / "decisions.jsonl"


def ids(output: str) -> list[str]:
    return [json.loads(x)["id"][-1] for x in output.splitlines() if x.strip()]


def run(*args):
    r = CliRunner().invoke(app, ["log", *args])
    return r


def test_all_records_rotated_first_torn_line_skipped(log_path):
    r = run("--log", str(log_path), "--json")
    assert r.exit_code == 0, r.output
    assert ids(r.output) == list("123456789")


@pytest.mark.parametrize("args, expected", [
    (["--action", "deny"], "248"),
    (["--action", "blocked"], "248"),  # the dashboard's word for deny
    (["--action", "Rewritten"], None),
    (["--category", "financial"], "247"),
    (["--min-risk", "0.9"], "247"),
    (["--host", "OPENAI"], "59"),
    (["--since", "2025-01-01T01:00:00+00:00"], "456789"),
    (["--category", "contact", "--action", "deny"], "4"),
    (["--min-risk", "0.3", "--since", "2025-01-01T01:00:30+00:00"], "57"),
])
def test_filters(log_path, args, expected):
    r = run("--log", str(log_path), "--json", *args)
    assert r.exit_code == 0, r.output
    if expected is None:  # the same records as the log's own word
        expected = "".join(ids(run("--log", str(log_path), "--json", "--action", "transform").output))
        assert expected
    assert "".join(ids(r.output)) == expected


def test_pretty_output_and_bad_arguments(log_path):
    r = run("--log", str(log_path), "--action", "deny")
    assert r.exit_code == 0
    assert "ads.doubleclick.net" in r.output and "tracker.example.net" in r.output and "openai" not in r.output
    bad = run("--log", str(log_path), "--since", "yesterday")
    assert bad.exit_code == 2 and "--since expects" in bad.output
    assert run("--log", str(log_path), "--action", "block").exit_code == 2
    assert run("--log", str(log_path.parent / "none.jsonl")).exit_code == 2


def test_parse_since_relative_and_absolute():
    now = 1_000_000.0
    assert parse_since("24h", now) == now - 86400
    assert parse_since("30m", now) == now - 1800
    assert parse_since("7d", now) == now - 7 * 86400
    assert parse_since(" 90s ", now) == now - 90
    assert parse_since("2025-01-01T00:00:00+00:00") == BASE
    assert parse_since(None) is None
    with pytest.raises(ValueError):
        parse_since("soon")


def test_record_filter_ignores_unscored_for_min_risk():
    f = RecordFilter(min_risk=0.0)
    assert f({"R": 0.0}) and not f({"R": None}) and not f({})


@pytest.mark.slow
def test_follow_prints_new_lines_across_rotation(tmp_path):
    p = tmp_path / "decisions.jsonl"
    p.write_text(json.dumps({"id": "old", "action": "allow", "ts": 1}) + "\n")
    exe = Path(sys.executable).parent / "guardian-proxy"
    proc = subprocess.Popen([str(exe), "log", "--follow", "--json", "--log", str(p), "--action", "deny"],
                            stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(2.5)  # let it start and seek to the end
        with open(p, "a") as f:
            f.write(json.dumps({"id": "a", "action": "deny", "ts": 2}) + "\n")
            f.write(json.dumps({"id": "skip", "action": "allow", "ts": 3}) + "\n")
        time.sleep(1.0)
        os.replace(p, tmp_path / "decisions.jsonl.1")  # rotation: the writer starts a new file
        p.write_text(json.dumps({"id": "b", "action": "deny", "ts": 4}) + "\n")
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()
        got = []
        deadline = time.time() + 15
        while time.time() < deadline and len(got) < 2:
            try:
                got.append(json.loads(lines.get(timeout=0.5))["id"])
            except queue.Empty:
                continue
        assert got == ["a", "b"]
    finally:
        proc.terminate()
        proc.wait(10)

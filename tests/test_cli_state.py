"""`guardian-proxy state new-key|status` and the fleet's view in `log --fleet` / `stats --fleet`, on both back
ends: the same filters and formats as the local log, a gateway per record, one-line errors, exit 1 when the
store cannot be reached."""

from __future__ import annotations

import base64
import json
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from guardian_proxy.cli import app
from guardian_proxy.config import load_factor_tables, load_settings
from guardian_proxy.decision_log import DecisionLog
from guardian_proxy.evaluator import write_line
from guardian_proxy.pipeline import Gateway
from guardian_proxy.state import feed_for, fleet_key
from guardian_proxy.types import Action, Decision, RawRequest

ROOT = Path(__file__).resolve().parents[1]


def run(*args):
    return CliRunner().invoke(app, list(args))


def config_file(tmp_path, name: str, state: dict) -> Path:
    """A settings file for gateway `name` (its own state dir) with `state` settings."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"state_dir": str(tmp_path / f"state-{name}"),
                                    "state": {"gateway_id": f"gw-{name}", **state}}))
    return path


@pytest.fixture
def fleet(tmp_path, redis_server, redis_prefix):
    """Two gateway configs of one Redis fleet (a shared key file): {name: config path}."""
    key = tmp_path / "fleet.key"
    r = run("state", "new-key")
    key.write_text(r.output)
    key.chmod(0o600)
    state = {"backend": "redis", "url": redis_server.url, "prefix": redis_prefix, "key_file": str(key)}
    return {n: config_file(tmp_path, n, state) for n in ("a", "b")}


def write(config: Path, decisions: list[tuple[str, str, dict]]) -> list[str]:
    """Log (and publish) decisions (action, host, categories) as gateway `config` does; their ids."""
    s = load_settings(config)
    dlog = DecisionLog(s.decision_log)
    dlog.feed = feed_for(s)
    g = Gateway(s, load_factor_tables(), None, None, None, None, decision_log=dlog)
    ids = []
    for i, (action, host, cats) in enumerate(decisions):
        req = RawRequest(method="GET", url=f"https://{host}/p{i}")
        d = Decision(action=action, six=Action(domain=host, host=host, categories=cats), explanation=f"#{i}")
        ids.append(write_line(g, req, d).id)
    if dlog.feed is not None:
        assert dlog.feed.flush(10)
    return ids


# ------------------------------------------------------------------ state new-key


def test_new_key_prints_a_fresh_key_the_fleet_settings_accept(tmp_path):
    keys = {run("state", "new-key").output.strip() for _ in range(3)}
    assert len(keys) == 3 and all(len(base64.b64decode(k, validate=True)) == 32 for k in keys)
    f = tmp_path / "k"
    f.write_text(keys.pop() + "\n")
    s = load_settings(state_dir=tmp_path, state={"backend": "redis", "url": "redis://127.0.0.1:1/0", "key_file": f})
    assert fleet_key(s) == base64.b64decode(f.read_text().strip())


# ------------------------------------------------------------------ state status


def test_status_local_counts_what_the_state_dir_holds(tmp_path):
    cfg = config_file(tmp_path, "a", {})
    write(cfg, [("allow", "a.example", {}), ("deny", "b.example", {"contact": 1})])
    (tmp_path / "state-a" / "overrides.yaml").write_text("- {action: deny, domain: tracker.example}\n")
    r = run("state", "status", "--config", str(cfg), "--json")
    assert r.exit_code == 0, r.output
    st = json.loads(r.output)
    assert st["backend"] == "local" and st["reachable"] is True and st["error"] is None
    assert st["where"] == f"local files in {tmp_path / 'state-a'}" and st["gateway"] == "gw-a"
    assert (st["sessions"], st["overrides"], st["decisions"], st["gateways"]) == (0, 1, 2, ["gw-a"])
    text = run("state", "status", "--config", str(cfg)).output
    assert "reachable  yes" in text and "decisions  2 in the decision log" in text


def test_status_redis_counts_the_fleet(fleet):
    write(fleet["a"], [("allow", "a.example", {})] * 3)
    write(fleet["b"], [("deny", "b.example", {})] * 2)
    r = run("state", "status", "--config", str(fleet["b"]), "--json")
    assert r.exit_code == 0, r.output
    st = json.loads(r.output)
    assert st["backend"] == "redis" and st["reachable"] and st["where"].startswith("redis 127.0.0.1:")
    assert st["decisions"] == 5 and st["gateways"] == ["gw-a", "gw-b"]
    assert st["sessions"] == 0 and st["overrides"] == 0 and st["problems"] == []
    text = run("state", "status", "--config", str(fleet["a"])).output
    assert "gateways   2 seen in the last 10 min: gw-a, gw-b" in text


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"redis://127.0.0.1:{s.getsockname()[1]}/0"


def test_status_unreachable_exits_1_with_the_error_in_one_line(tmp_path):
    cfg = config_file(tmp_path, "a", {"backend": "redis", "url": _dead_url(), "timeout_s": 0.3})
    t0 = time.perf_counter()
    r = run("state", "status", "--config", str(cfg))
    assert r.exit_code == 1 and time.perf_counter() - t0 < 5
    line = next(x for x in r.output.splitlines() if x.startswith("reachable"))
    assert "no:" in line and "127.0.0.1" in line
    st = json.loads(run("state", "status", "--config", str(cfg), "--json").output)
    assert st["reachable"] is False and "\n" not in st["error"] and st["decisions"] is None


# ------------------------------------------------------------------ log --fleet, stats --fleet


def test_log_fleet_shows_every_gateway_with_the_same_filters_and_formats(fleet):
    a = write(fleet["a"], [("allow", "shop.example", {}), ("deny", "ads.tracker.example", {"contact": 1})])
    b = write(fleet["b"], [("deny", "ads.tracker.example", {"financial": 2}), ("transform", "api.openai.com",
                                                                                {"identity": 1})])
    r = run("log", "--fleet", "--json", "--config", str(fleet["a"]))
    assert r.exit_code == 0, r.output
    recs = [json.loads(x) for x in r.output.splitlines()]
    assert [(x["id"], x["gateway"]) for x in recs] == [(a[0], "gw-a"), (a[1], "gw-a"), (b[0], "gw-b"), (b[1], "gw-b")]
    r = run("log", "--fleet", "--json", "--action", "deny", "--category", "financial", "--config", str(fleet["a"]))
    assert [json.loads(x)["id"] for x in r.output.splitlines()] == [b[0]]
    r = run("log", "--fleet", "--host", "tracker", "--no-color", "--config", str(fleet["b"]))
    lines = r.output.splitlines()
    assert len(lines) == 2 and " gw-a " in lines[0] and " gw-b " in lines[1]  # piped: one record a line
    assert all("ads.tracker.example" in x for x in lines)
    local = run("log", "--json", "--config", str(fleet["a"]))  # without --fleet: this gateway's own log
    assert [json.loads(x)["id"] for x in local.output.splitlines()] == a
    assert all("gateway" not in json.loads(x) for x in local.output.splitlines())


def test_stats_fleet_counts_per_gateway(fleet):
    write(fleet["a"], [("allow", "shop.example", {})] * 2)
    write(fleet["b"], [("deny", "ads.tracker.example", {"contact": 1})] * 3)
    r = run("stats", "--fleet", "--json", "--config", str(fleet["a"]))
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)
    assert s["total"] == 5 and s["actions"] == {"allow": 2, "transform": 0, "deny": 3}
    assert s["gateways"] == {"gw-b": {"total": 3, "allow": 0, "transform": 0, "deny": 3},
                             "gw-a": {"total": 2, "allow": 2, "transform": 0, "deny": 0}}
    text = run("stats", "--fleet", "--since", "all", "--config", str(fleet["a"])).output
    assert "Gateways" in text and any(x.replace("│", " ").split()[:5] == ["gw-b", "3", "0", "0", "3"]
                                      for x in text.splitlines())
    local = json.loads(run("stats", "--json", "--config", str(fleet["a"])).output)
    assert local["total"] == 2 and local["gateways"] == {}


def test_fleet_on_the_local_back_end_is_a_one_line_error(tmp_path):
    cfg = config_file(tmp_path, "a", {})
    write(cfg, [("allow", "a.example", {})])
    for cmd in ("log", "stats"):
        r = run(cmd, "--fleet", "--config", str(cfg))
        assert r.exit_code == 2 and "its log is the fleet" in r.output and len(r.output.strip().splitlines()) == 1
    r = run("log", "--fleet", "--log", str(tmp_path / "x.jsonl"), "--config", str(cfg))
    assert r.exit_code == 2 and "drop --log" in r.output


def test_fleet_with_redis_down_exits_1_in_one_line(tmp_path):
    cfg = config_file(tmp_path, "a", {"backend": "redis", "url": _dead_url(), "timeout_s": 0.3})
    for cmd in ("log", "stats"):
        r = run(cmd, "--fleet", "--config", str(cfg))
        assert r.exit_code == 1 and "decision feed cannot be read" in r.output, r.output
        assert len(r.output.strip().splitlines()) == 1


@pytest.mark.slow
def test_log_fleet_follow_prints_the_other_gateways_decisions_as_they_come(fleet):
    exe = Path(sys.executable).parent / "guardian-proxy"
    p = subprocess.Popen([str(exe), "log", "--fleet", "--follow", "--json", "--action", "deny",
                          "--config", str(fleet["a"])], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in p.stdout], daemon=True).start()
    try:
        time.sleep(4)  # started, and following from now on
        ids = write(fleet["b"], [("deny", "ads.tracker.example", {}), ("allow", "shop.example", {}),
                                 ("deny", "ads.tracker.example", {})])
        got = [json.loads(lines.get(timeout=15)) for _ in range(2)]
        assert [(x["id"], x["gateway"]) for x in got] == [(ids[0], "gw-b"), (ids[2], "gw-b")]  # --action applies
    finally:
        p.terminate()
        p.wait(10)

"""`guardian-proxy sessions list|wipe` on a real vault: counts by type, never values."""

import json
import time

from typer.testing import CliRunner

from guardian_proxy.cli import app
from guardian_proxy.session.registry import SessionState
from guardian_proxy.session.vault import Vault

runner = CliRunner()


def seed(state_dir, sid, last_seen):
    v = Vault(state_dir)
    s = SessionState(sid=sid, turn=3, crossed_turn=2, cpe=2.5)
    e = s.add("PERSON", "Quentin Zarkowsky", 1)
    e.surrogate = "Alex Smith"
    s.add("LOCATION", "Albuquerque", 2)
    v.save(sid, last_seen - 10, last_seen, s.meta(), [x.to_dict() for x in s.entities.values()])
    v.close()


def test_list_and_wipe(tmp_path):
    now = time.time()
    seed(tmp_path, "a1" * 16, now)
    seed(tmp_path, "b2" * 16, now - 10 * 86400)
    r = runner.invoke(app, ["sessions", "list", "--json", "--state-dir", str(tmp_path)])
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in r.output.splitlines()]
    assert [x["session"] for x in rows] == ["a1" * 16, "b2" * 16]
    assert rows[0]["types"] == {"PERSON": 1, "LOCATION": 1} and rows[0]["crossed_turn"] == 2 and not rows[0]["expired"]
    assert rows[1]["expired"] and "Zarkowsky" not in r.output and "Albuquerque" not in r.output
    table = runner.invoke(app, ["sessions", "list", "--state-dir", str(tmp_path)])
    assert "PERSON×1" in table.output and "Zarkowsky" not in table.output
    assert runner.invoke(app, ["sessions", "wipe", "--state-dir", str(tmp_path)]).exit_code == 2  # nothing chosen
    assert runner.invoke(app, ["sessions", "wipe", "%", "--state-dir", str(tmp_path)]).exit_code == 2
    r = runner.invoke(app, ["sessions", "wipe", "--expired", "--state-dir", str(tmp_path)])
    assert "wiped 1 session" in r.output
    r = runner.invoke(app, ["sessions", "wipe", "a1a1", "--state-dir", str(tmp_path)])
    assert "wiped 1 session" in r.output
    assert runner.invoke(app, ["sessions", "list", "--state-dir", str(tmp_path)]).output.strip() == "no chat sessions"


def test_no_vault_yet(tmp_path):
    r = runner.invoke(app, ["sessions", "list", "--state-dir", str(tmp_path)])
    assert r.exit_code == 0 and "no chat sessions" in r.output and not (tmp_path / "sessions.db").exists()

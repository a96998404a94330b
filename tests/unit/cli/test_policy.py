"""`guardian-proxy policy add|list|show` through typer's runner (the real store, a temp state dir)."""

import json

from typer.testing import CliRunner

from guardian_proxy.cli import app

runner = CliRunner()
POLICY = """# Privacy Policy

We collect your email address and phone number when you sign up.
We share your email address with analytics providers to measure use of the service.
We do not sell your personal information.
"""


def test_list_json_has_the_documented_shape(tmp_path):
    r = runner.invoke(app, ["policy", "list", "--json", "--state-dir", str(tmp_path)])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert len(rows) >= 60 and all({"domain", "statements", "source"} <= set(x) for x in rows)
    google = next(x for x in rows if x["domain"] == "google.com")
    assert google["source"] == "shipped" and google["statements"] > 0 and "doubleclick.net" in google["domains"]


def test_add_then_list_and_show(tmp_path):
    f = tmp_path / "policy.md"
    f.write_text(POLICY)
    r = runner.invoke(app, ["policy", "add", "example.org", str(f), "--state-dir", str(tmp_path)])
    assert r.exit_code == 0 and "stored 3 statements" in r.output, r.output
    rows = json.loads(runner.invoke(app, ["policy", "list", "--json", "--state-dir", str(tmp_path)]).stdout)
    assert {"domain": "example.org", "statements": 3, "source": "user"}.items() <= next(
        x for x in rows if x["domain"] == "example.org").items()
    r = runner.invoke(app, ["policy", "show", "www.example.org", "--json", "--state-dir", str(tmp_path)])
    data = json.loads(r.stdout)
    assert data["source"] == "user" and [s["practice"] for s in data["statements"]] == ["collect", "share", "sell"]
    assert data["statements"][2]["negated"] is True
    r = runner.invoke(app, ["policy", "show", "example.org", "--state-dir", str(tmp_path)])
    assert r.exit_code == 0 and "not sell" in r.output and "analytics" in r.output


def test_show_shipped_by_tracker_domain(tmp_path):
    r = runner.invoke(app, ["policy", "show", "doubleclick.net", "--limit", "2", "--state-dir", str(tmp_path)])
    assert r.exit_code == 0 and "Google" in r.output and "0001" in r.output and "0002" not in r.output


def test_errors_are_clean(tmp_path):
    r = runner.invoke(app, ["policy", "show", "nobody-knows.example", "--state-dir", str(tmp_path)])
    assert r.exit_code == 2 and "no policy known" in r.output
    r = runner.invoke(app, ["policy", "add", "x.org", str(tmp_path / "missing.md"), "--state-dir", str(tmp_path)])
    assert r.exit_code == 2 and "cannot read" in r.output
    empty = tmp_path / "empty.html"
    empty.write_text("<html><script>1</script></html>")
    r = runner.invoke(app, ["policy", "add", "x.org", str(empty), "--state-dir", str(tmp_path)])
    assert r.exit_code == 1 and "not stored (empty)" in r.output

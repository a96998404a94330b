import json

from guardian_proxy.decision_log import DecisionLog, read, safe_path


def test_safe_path_drops_query_values():
    assert safe_path("https://x.com/c?uid=42&email=a%40b.com") == "/c?uid=&email="


def test_lines_are_whole_and_private(tmp_path):
    p = tmp_path / "d.jsonl"
    log = DecisionLog(p)
    log.write({"a": 1})
    log.write({"b": "é"})
    assert (p.stat().st_mode & 0o777) == 0o600
    with open(p, "a") as f:
        f.write('{"torn": ')  # a crash mid-line
    assert list(read(p)) == [{"a": 1}, {"b": "é"}]
    assert json.loads(p.read_text().splitlines()[0]) == {"a": 1}

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


def test_rotation_by_size_keeps_backups_and_whole_lines(tmp_path):
    from guardian_proxy.decision_log import read_all, rotated_files

    p = tmp_path / "d.jsonl"
    log = DecisionLog(p, max_bytes=200, backups=2)
    for i in range(40):
        log.write({"i": i, "pad": "x" * 20})
    log.close()
    rotated = rotated_files(p)
    assert [f.name for f in rotated] == ["d.jsonl.2", "d.jsonl.1"]  # oldest first, no .3
    for f in [*rotated, p]:
        assert f.stat().st_size <= 200 and (f.stat().st_mode & 0o777) == 0o600
        assert all(json.loads(x) for x in f.read_text().splitlines())
    seen = [r["i"] for r in read_all(p)]
    assert seen == sorted(seen) and seen[-1] == 39 and len(seen) < 40  # oldest dropped, order kept


def test_retention_days_deletes_old_rotated_files(tmp_path):
    import os
    import time

    p = tmp_path / "d.jsonl"
    old = tmp_path / "d.jsonl.3"
    old.write_text('{"old": 1}\n')
    os.utime(old, (time.time() - 10 * 86400,) * 2)
    recent = tmp_path / "d.jsonl.1"
    recent.write_text('{"recent": 1}\n')
    DecisionLog(p, max_bytes=100, backups=5, retention_days=7).close()
    assert not old.exists() and recent.exists()


def test_no_backups_truncates(tmp_path):
    p = tmp_path / "d.jsonl"
    log = DecisionLog(p, max_bytes=50, backups=0)
    for i in range(10):
        log.write({"i": i, "pad": "y" * 10})
    log.close()
    assert list(tmp_path.iterdir()) == [p] and [r["i"] for r in read(p)][-1] == 9

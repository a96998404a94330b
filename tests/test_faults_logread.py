"""`guardian-proxy log` and `stats` on a damaged decision log (docs/security.md): a line cut inside a UTF-8
character, invalid bytes in the middle, lines that are JSON but no record, gzip-rotated files. Each bad
line is skipped and counted, the commands say so once on stderr, and every good record is still read."""

import gzip
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardian_proxy.cli import app

runner = CliRunner()


def rec(i: str, **kw) -> bytes:
    r = {"ts": 1735689600.0 + int(i), "id": f"id{i}", "method": "POST", "host": f"h{i}.example", "path": "/",
         "action": "deny", "categories": {"contact": 1}, "R": 0.5, "explanation": "é by fixture"}
    r.update(kw)
    return (json.dumps(r, ensure_ascii=False) + "\n").encode()


def ids(stdout: str) -> list[str]:
    return [json.loads(x)["id"] for x in stdout.splitlines() if x.strip()]


def warnings(result) -> list[str]:
    return [x for x in result.stderr.splitlines() if x.strip()]


@pytest.fixture
def damaged(tmp_path) -> Path:
    """Three rotated files (one gzip) and a live file, each with damage of its own kind."""
    p = tmp_path / "decisions.jsonl"
    (tmp_path / "decisions.jsonl.3.gz").write_bytes(gzip.compress(rec("1") + b"\xc3\n" + rec("2")))
    (tmp_path / "decisions.jsonl.2").write_bytes(rec("3") + rec("4")[:-8])  # rotated after a crash: torn
    (tmp_path / "decisions.jsonl.1").write_bytes(gzip.compress(rec("5")))  # gzip under the plain name
    euro = rec("8").replace(b"\xc3\xa9", "€".encode())
    p.write_bytes(rec("6") + b'{"ts": 1735689700, "id": "x\xff\xfe"}\n' + b"[1, 2]\n" + b"7\n" + rec("7")
                  + euro[: euro.index("€".encode()) + 1])  # the live file ends inside a 3-byte character
    return p


def test_files_oldest_first_gzip_included(damaged):
    from guardian_proxy.cli.logread import log_files

    names = [f.name for f in log_files(damaged)]
    assert names == ["decisions.jsonl.3.gz", "decisions.jsonl.2", "decisions.jsonl.1", "decisions.jsonl"]


def test_log_skips_and_counts_bad_lines(damaged):
    r = runner.invoke(app, ["log", "--log", str(damaged), "--json"])
    assert r.exit_code == 0, (r.output, r.exception)
    assert ids(r.stdout) == ["id1", "id2", "id3", "id5", "id6", "id7"]
    w = warnings(r)
    assert len(w) == 1 and "skipped 5" in w[0], w
    assert "decisions.jsonl.3.gz" in w[0] and "3 in decisions.jsonl," in w[0]


def test_pretty_log_survives_bad_lines_and_markup(tmp_path):
    p = tmp_path / "decisions.jsonl"
    p.write_bytes(rec("1", host="[/]evil.example", explanation="[red]x[/]", path="/[/x]")
                  + rec("2", ts=1e300) + rec("3", R=float("nan")) + b'{"ts": "yesterday", "id": "s"}\n' + rec("4"))
    r = runner.invoke(app, ["log", "--log", str(p)])
    assert r.exit_code == 0, (r.output, r.exception)
    assert "[/]evil.example" in r.stdout and "[red]x[/]" in r.stdout and "h4.example" in r.stdout
    assert "--:--:--" in r.stdout  # a time out of range still shows the line
    assert "skipped 2" in r.stderr  # NaN R and a text ts are not records the writer makes


def test_stats_skips_and_counts_bad_lines(damaged):
    r = runner.invoke(app, ["stats", "--log", str(damaged), "--since", "all", "--json"])
    assert r.exit_code == 0, (r.output, r.exception)
    s = json.loads(r.stdout)
    assert s["total"] == 6
    w = warnings(r)
    assert len(w) == 1 and "skipped 5" in w[0]
    t = runner.invoke(app, ["stats", "--log", str(damaged), "--since", "all"])
    assert t.exit_code == 0 and "6 decisions" in t.stdout, (t.output, t.exception)


def test_stats_tables_with_odd_values(tmp_path):
    p = tmp_path / "decisions.jsonl"
    p.write_bytes(rec("1", host="[/]x.example", categories={"[/]": 1}, recipient="[/]") + rec("2", R=10 ** 400)
                  + rec("3", categories={"contact": float("inf")}))
    r = runner.invoke(app, ["stats", "--log", str(p), "--since", "all"])
    assert r.exit_code == 0, (r.output, r.exception)
    assert "1 decisions" in r.stdout and "skipped 2" in r.stderr


def test_a_clean_log_says_nothing(tmp_path):
    p = tmp_path / "decisions.jsonl"
    p.write_bytes(rec("1") + rec("2"))
    r = runner.invoke(app, ["log", "--log", str(p), "--json"])
    assert r.exit_code == 0 and ids(r.stdout) == ["id1", "id2"] and r.stderr == ""


def test_the_reader_never_raises_on_a_truncated_gzip(tmp_path):
    from guardian_proxy.cli.logread import LogReader

    p = tmp_path / "decisions.jsonl"
    p.write_bytes(rec("9"))
    (tmp_path / "decisions.jsonl.1.gz").write_bytes(gzip.compress(rec("1") * 200)[:-40])
    reader = LogReader(p)
    got = [r["id"] for r in reader.records()]
    assert got[-1] == "id9" and set(got[:-1]) <= {"id1"}
    assert reader.skipped["decisions.jsonl.1.gz"] == 1 and "decisions.jsonl.1.gz" in reader.note()


@pytest.mark.slow
def test_follow_skips_a_line_with_invalid_utf8(tmp_path):
    p = tmp_path / "decisions.jsonl"
    p.write_bytes(rec("0"))
    exe = Path(sys.executable).parent / "guardian-proxy"
    proc = subprocess.Popen([str(exe), "log", "--follow", "--json", "--log", str(p)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(2.5)  # let it start and seek to the end
        with open(p, "ab") as f:
            f.write(b'{"id": "bad \xff\xfe"}\n')
            f.write(rec("1")[:5])  # a line written in two pieces, cut inside nothing in particular
            f.flush()
            time.sleep(0.6)
            f.write(rec("1")[5:] + "{\"id\": \"é\"".encode()[:-2] + b"\n" + rec("2"))
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()
        got = []
        deadline = time.time() + 15
        while time.time() < deadline and len(got) < 2:
            try:
                got.append(json.loads(lines.get(timeout=0.5))["id"])
            except queue.Empty:
                if proc.poll() is not None:
                    break
        assert got == ["id1", "id2"], proc.stderr.read() if proc.poll() is not None else got
    finally:
        proc.terminate()
        proc.wait(10)
    assert os.path.exists(p)

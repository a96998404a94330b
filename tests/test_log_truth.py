"""The log tells what was done (R-LOG-FAIL-CLOSED): a request blocked because its decision could not be logged
(failure.after_log_error: a closed tier turns a release into a block) is logged as `deny` with its rule once the
log can be written again, and never as the `allow` it was before.

The old writer kept a line it could not write in its file buffer and flushed it with the next line: the
pre-block `allow` reached the log after the disk recovered, and the block itself never did. The disk is made
full for real: a file-size limit (RLIMIT_FSIZE, in a child process) that makes writes past the log's current
size fail, lifted afterwards; or the log's name pointing at /dev/full, then at a regular file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from guardian_proxy.config import Settings, load_factor_tables
from guardian_proxy.decision_log import DecisionLog, read
from guardian_proxy.evaluator import write_line
from guardian_proxy.pipeline import Gateway
from guardian_proxy.types import Action, Decision, RawRequest

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import json, resource, signal, sys
from pathlib import Path
from guardian_proxy.config import Settings, load_factor_tables
from guardian_proxy.decision_log import DecisionLog
from guardian_proxy.evaluator import write_line
from guardian_proxy.pipeline import Gateway
from guardian_proxy.types import Action, Decision, RawRequest

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit a write fails (EFBIG) instead of killing us
path, room = Path(sys.argv[1]), int(sys.argv[2])
g = Gateway(Settings(state_dir=path.parent), load_factor_tables(), None, None, None, None,
            decision_log=DecisionLog(path))
req = RawRequest(method="POST", url="http://shop.example.com/checkout", body=b"{}",
                 headers=[("content-type", "application/json")])

def release():  # a card number to the shop: critical tier, fail_mode closed
    return Decision(action="allow", six=Action(domain="example.com", host="shop.example.com",
                                               categories={"financial": 1}), explanation="passed")

done = [write_line(g, req, release())]
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (path.stat().st_size + room, hard))  # the disk is full
done.append(write_line(g, req, release()))
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))  # room again
done.append(write_line(g, req, release()))
g.decision_log.close()
print(json.dumps([[d.id, d.action, d.rule] for d in done]))
"""


@pytest.mark.parametrize("room", [0, 25], ids=["nothing-written", "torn-line"])
def test_a_block_for_a_full_disk_is_logged_as_deny_once_the_disk_recovers(tmp_path, room):
    path = tmp_path / "decisions.jsonl"
    r = subprocess.run([sys.executable, "-c", SCRIPT, str(path), str(room)], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    done = json.loads(r.stdout.strip().splitlines()[-1])
    assert [a for _, a, _ in done] == ["allow", "deny", "allow"], done  # what the proxy did
    assert done[1][2] == "log-error-fail-closed"
    lines = list(read(path))
    by_id = {}
    for rec in lines:
        by_id.setdefault(rec["id"], []).append(rec)
    blocked = by_id.get(done[1][0], [])
    assert [x["action"] for x in blocked] == ["deny"], blocked  # once, as done: never the `allow` it was
    assert blocked[0]["rule"] == "log-error-fail-closed" and blocked[0]["fail_stage"] == "log"
    assert [x["id"] for x in lines] == [i for i, _, _ in done]  # every request once, in order
    assert [x["action"] for x in lines] == ["allow", "deny", "allow"]


def _gateway(log: DecisionLog, state: Path) -> Gateway:
    return Gateway(Settings(state_dir=state), load_factor_tables(), None, None, None, None, decision_log=log)


REQ = RawRequest(method="POST", url="http://shop.example.com/checkout", body=b"{}",
                 headers=[("content-type", "application/json")])


def _release(cats=None) -> Decision:
    return Decision(action="allow", six=Action(domain="example.com", host="shop.example.com",
                                               categories=cats if cats is not None else {"financial": 1}))


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_log_on_dev_full_then_a_file_writes_what_was_done(tmp_path):
    path = tmp_path / "decisions.jsonl"
    path.symlink_to("/dev/full")
    g = _gateway(DecisionLog(path), tmp_path)
    blocked = write_line(g, REQ, _release())  # critical tier: blocked because it cannot be logged
    kept = write_line(g, REQ, _release({"contact": 1}))  # sensitive tier (open): passes, logged when possible
    assert (blocked.action, blocked.rule, kept.action) == ("deny", "log-error-fail-closed", "allow")
    path.unlink()  # the log is writable again (a new file under the same name)
    later = write_line(g, REQ, _release())
    g.decision_log.close()
    lines = list(read(path))
    assert [(x["id"], x["action"]) for x in lines] == [(blocked.id, "deny"), (kept.id, "allow"), (later.id, "allow")]
    assert lines[0]["rule"] == "log-error-fail-closed"


def test_a_write_that_fails_keeps_nothing_and_defer_waits(tmp_path, monkeypatch):
    import errno

    import guardian_proxy.decision_log as dl

    path = tmp_path / "d.jsonl"
    log = DecisionLog(path)
    real = os.write
    monkeypatch.setattr(dl.os, "write", lambda fd, data: (_ for _ in ()).throw(OSError(errno.ENOSPC, "full")))
    with pytest.raises(OSError):
        log.write({"id": "a", "action": "allow"})
    assert log.defer({"id": "a", "action": "deny"}) is False
    monkeypatch.setattr(dl.os, "write", real)
    log.write({"id": "b", "action": "allow"})
    log.close()
    assert [(x["id"], x["action"]) for x in read(path)] == [("a", "deny"), ("b", "allow")]


def test_a_line_torn_by_a_crash_does_not_swallow_the_next_record(tmp_path):
    import json

    from guardian_proxy.decision_log import DecisionLog

    log = tmp_path / "decisions.jsonl"
    log.write_bytes(b'{"id":"a","action":"allow"}\n{"id":"b","act')
    DecisionLog(log).write({"id": "c", "action": "deny"})
    lines = log.read_bytes().split(b"\n")
    assert json.loads(lines[2]) == {"id": "c", "action": "deny"}

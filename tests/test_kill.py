"""SIGKILL a loaded proxy at random moments: every decision-log line stays complete JSON, the vault
(SQLite WAL) stays consistent and readable, and the proxy starts again on the same state dir."""

import json
import random
import sqlite3
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.support.proxy_process import start_proxy
from tests.support.upstream import start_upstream

pytestmark = pytest.mark.slow

ROUNDS = 3


def traffic(px_url: str, stop: threading.Event, seed: int, sent: list[int]) -> None:
    """A mix of every path: plain GETs, rewrites, blocks, chat turns (session + vault when wired)."""
    rnd = random.Random(seed)
    with httpx.Client(proxy=px_url, timeout=10) as c:
        k = 0
        while not stop.is_set():
            k += 1
            r = rnd.random()
            try:
                if r < 0.3:
                    c.get(f"http://www.example.org/p/{k}")
                elif r < 0.55:
                    c.post("http://support.zendesk.com/api/tickets",
                           json={"text": f"Please call John Smith back at john.smith.{k}@example.com"})
                elif r < 0.7:
                    c.post("http://ads.doubleclick.net/collect", json={"pan": "4111 1111 1111 1111"})
                else:
                    c.post("http://api.openai.com/v1/chat/completions", json={
                        "model": "gpt-4o-mini", "user": f"kill-test-{seed}",
                        "messages": [{"role": "user", "content": f"Draft a letter from Maria Garcia to her landlord "
                                                                 f"Peter Brown about flat {k}, phone 415-555-01{k % 90:02d}."}]})
                sent.append(k)
            except httpx.HTTPError:
                if stop.is_set():
                    return
                time.sleep(0.05)


def check_log(state: Path) -> int:
    n = 0
    for f in sorted(state.glob("decisions.jsonl*")):
        text = f.read_text(encoding="utf-8")
        assert not text or text.endswith("\n"), f"{f.name}: torn last line {text[-200:]!r}"
        for line in text.splitlines():
            json.loads(line)  # every line is complete JSON
            n += 1
    return n


def check_vault(state: Path) -> int:
    """Every SQLite file in the state dir passes integrity_check; the vault opens and reads its sessions."""
    dbs = [p for p in state.rglob("*.db") if p.is_file()]
    for db in dbs:
        con = sqlite3.connect(f"file:{db}?mode=rw", uri=True)  # rw: a hot WAL is recovered on open
        try:
            assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok", db
        finally:
            con.close()
    if (state / "sessions.db").exists():
        from guardian_proxy.session.vault import Vault

        v = Vault(state)
        try:
            for sid, *_ in v.sessions():
                assert v.load(sid) is not None
        finally:
            v.close()
    return len(dbs)


def test_sigkill_under_load_leaves_complete_lines_and_a_consistent_vault(tmp_path):
    up = start_upstream()
    rnd = random.Random()
    total_before = 0
    try:
        for round_ in range(ROUNDS):
            px = start_proxy(tmp_path, up.port)  # the same state dir every round
            stop = threading.Event()
            sent: list[int] = []
            threads = [threading.Thread(target=traffic, args=(px.url, stop, round_ * 10 + t, sent)) for t in range(4)]
            for t in threads:
                t.start()
            deadline = time.time() + 60
            while len(sent) < 8 and time.time() < deadline:  # loaded: requests are flowing
                time.sleep(0.05)
            time.sleep(rnd.uniform(0.0, 1.5))  # a random moment
            px.proc.kill()  # SIGKILL: no handler, no flush, no cleanup
            px.proc.wait(10)
            stop.set()
            for t in threads:
                t.join(20)
            assert len(sent) >= 8, (px.output.read_text()[-2000:])
            n = check_log(px.state_dir)
            assert n > total_before, "no new decision lines were written before the kill"
            total_before = n
            check_vault(px.state_dir)
        px = start_proxy(tmp_path, up.port)  # starts on the state a SIGKILL left behind
        try:
            assert httpx.get("http://www.example.org/after", proxy=px.url, timeout=30).status_code == 200
        finally:
            px.stop()
        assert check_log(px.state_dir) == total_before + 1
    finally:
        up.close()

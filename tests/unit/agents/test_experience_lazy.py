"""The experience log makes its directory and key at its first write, not when it (or the Gateway that holds it)
is made: a library caller's Gateway with default settings writes nothing under ~/.local/state by being built."""

from __future__ import annotations

import stat
import threading
from types import SimpleNamespace

from guardian_proxy.agents.experience import ExperienceLog


def _case(log: ExperienceLog) -> None:
    g = SimpleNamespace(text="keep the diagnosis out", relationship="coworker", withhold=[], share=[])
    res = SimpleNamespace(arguments="{}", removed=1, types=["health"])
    log.record("openai_chat", {"messages": [{"role": "user", "content": "hi"}]}, g, "send_email", "{}", res)


def test_making_the_log_or_reading_it_empty_writes_nothing(tmp_path):
    d = tmp_path / "state" / "experience"
    log = ExperienceLog(d)
    assert log.cases() == []
    assert not (tmp_path / "state").exists()


def test_the_first_write_makes_a_private_key_once_and_the_cases_read_back(tmp_path):
    d = tmp_path / "state" / "experience"
    logs = [ExperienceLog(d) for _ in range(4)]  # four processes' logs on one directory: one key for all
    threads = [threading.Thread(target=_case, args=(log,)) for log in logs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    key = d / "key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(d.stat().st_mode) == 0o700
    assert sorted(p.name for p in d.iterdir()) == ["cases.jsonl.enc", "key"]  # no temporary key left
    assert len(ExperienceLog(d).cases()) == 4


def test_a_gateway_built_with_the_experience_log_on_writes_no_key(tmp_path):
    from guardian_proxy.config import load_settings
    from guardian_proxy.pipeline import Gateway

    state = tmp_path / "state"
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"state_dir: {state}\ndetector: {{ner: false}}\nagents: {{experience_log: true}}\n")
    gw = Gateway.from_settings(load_settings(cfg), with_log=False)
    assert gw.agents.experience is not None
    assert not (state / "experience").exists()

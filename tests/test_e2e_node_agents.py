"""End to end (issue 28, the inbox scenario): the OpenAI Agents SDK from npm (@openai/agents, tests/node/agents.mjs)
in a real Node process through a real `guardian-proxy run` (cdi+guard) to the worst-case agent that copies
everything it read into `send_email`. The SDK resumes a run in which it already read the inbox (a meeting-room
change, a roster and a friend's cancer diagnosis), validates the model's `send_email` arguments against the tool's
schema and runs the tool, in a plain run and a streamed one: the diagnosis stays out, the room change and the roster
reach the tool, de-masked. The package is pinned in tests/node/package-lock.json (installed by `make test`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_e2e_agents_inbox import (
    INSTR,
    SHAPE_IDS,
    SHAPES,
    check,
    env,  # noqa: F401  (the inbox's proxy and agent, one per module)
)

pytestmark = pytest.mark.slow

NODE_DIR = Path(__file__).parent / "node"


@pytest.mark.parametrize("shape", SHAPE_IDS)
def test_openai_agents_sdk_json_and_stream(env, shape, tmp_path):  # noqa: F811
    if shutil.which("node") is None or not (NODE_DIR / "node_modules" / "@openai" / "agents").is_dir():
        pytest.skip("node or tests/node/node_modules absent: `make test` (npm ci --prefix tests/node) installs it")
    _, px, _ = env
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"instruction": INSTR, "inbox": SHAPES[shape]}))
    node_env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    node_env["NODE_EXTRA_CA_CERTS"] = str(px.ca)
    node_env["OPENAI_BASE_URL"] = "http://api.openai.com/v1"  # the local agent server speaks plain HTTP, as above
    out = subprocess.run(["node", str(NODE_DIR / "agents.mjs"), px.url, str(scenario)], cwd=NODE_DIR, env=node_env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = {x["client"]: x for x in map(json.loads, filter(None, out.stdout.splitlines()))}
    assert set(lines) == {"openai-agents", "openai-agents-stream"}, out.stdout
    for client, line in lines.items():
        assert "error" not in line and line["sent"], (client, line)
        check(line["sent"])
    agent_lines = [x for x in px.log_lines() if x.get("agent")]
    assert agent_lines and agent_lines[-1]["agent"]["withhold"] >= 1

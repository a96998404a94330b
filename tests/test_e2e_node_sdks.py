"""End to end: the AI SDKs from npm (openai, @anthropic-ai/sdk, the Vercel AI SDK with @ai-sdk/openai) in a real
Node process (tests/node/chat.mjs) through a real `guardian-proxy run` to the local chat server
(tests/support/llm_server.py, in each service's own framing): chat JSON and streams, a tool call, the Responses
API, Anthropic's Messages JSON and stream. In every case no raw name or e-mail reaches the server, the program
reads them back as if unprotected, and a factual question with no one in it reaches the server as written.

The packages are pinned in tests/node/package-lock.json and installed by `make test` (`npm ci`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.llm_server import start_llm_server
from tests.support.proxy_process import start_proxy

pytestmark = pytest.mark.slow

NODE_DIR = Path(__file__).parent / "node"
NAME, EMAIL = "Quentin Zarkowsky", "quentin.zarkowsky@gmail.com"
SAID = f"Hi, I'm {NAME} ({EMAIL}). Help me plan a week in Lisbon."
ANSWER = f"Noted, {NAME}. I will keep {NAME}'s details; {NAME.upper()} is on file. You said: {SAID}"
QUESTION = "What is the capital of France, and how far is it from Lisbon?"
CLIENTS = ["openai-chat", "openai-chat-stream", "openai-responses", "openai-responses-stream", "anthropic-messages",
           "anthropic-messages-stream", "vercel-ai-chat", "vercel-ai-chat-stream", "vercel-ai-responses"]


def _installed() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    if not (NODE_DIR / "node_modules" / "openai").is_dir():
        return "tests/node/node_modules absent: `make test` (npm ci --prefix tests/node) installs it"
    return None


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    why = _installed()
    if why:
        pytest.skip(why)
    d = tmp_path_factory.mktemp("node-sdks")
    srv = start_llm_server(d, ["api.openai.com", "api.anthropic.com"])
    px = start_proxy(d, srv.port)
    yield srv, px
    px.stop()
    srv.close()


def run_node(px, said: str, clients: list[str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["NODE_EXTRA_CA_CERTS"] = str(px.ca)
    out = subprocess.run(["node", str(NODE_DIR / "chat.mjs"), px.url, said, *clients], cwd=NODE_DIR, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]
    errors = {x["client"]: x["error"] for x in lines if "error" in x}
    assert not errors, errors
    return {x["client"]: x["text"] for x in lines}


def test_a_person_is_pseudonymised_on_the_wire_and_read_back_by_every_npm_sdk(env):
    srv, px = env
    n = len(srv.received)
    got = run_node(px, SAID, CLIENTS)
    assert got == {c: ANSWER for c in CLIENTS}
    wire = srv.bodies_text(n)
    assert len(srv.received) >= n + len(CLIENTS)
    assert NAME not in wire and EMAIL not in wire and "Zarkowsky" not in wire
    assert "Lisbon" in wire  # the trip's city is what the question is about: kept


def test_a_tool_calls_arguments_come_back_with_the_real_values(env):
    srv, px = env
    n = len(srv.received)
    args = json.loads(run_node(px, SAID, ["openai-tools"])["openai-tools"])
    assert args == {"name": NAME, "email": EMAIL, "note": f"follow up with {NAME}"}
    assert NAME not in srv.bodies_text(n) and EMAIL not in srv.bodies_text(n)


def test_a_factual_question_reaches_the_model_as_written(env):
    srv, px = env
    n = len(srv.received)
    got = run_node(px, QUESTION, ["openai-chat", "anthropic-messages-stream", "vercel-ai-responses"])
    assert all(t.endswith(f"You said: {QUESTION}") for t in got.values()), got
    assert srv.bodies_text(n).count(QUESTION) == 3

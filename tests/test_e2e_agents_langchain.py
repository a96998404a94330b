"""End to end (issue 28, the inbox scenario): a LangChain agent (langchain-openai's `ChatOpenAI` with a real
`@tool` bound) asked to e-mail a colleague a summary of an inbox that holds a meeting-room change, a roster and a
friend's cancer diagnosis, through a real `guardian-proxy run` (cdi+guard) to the worst-case agent that copies
everything it read into `send_email`. LangChain writes the conversation in its own way (its message classes, its
tool-call ids and argument strings); the guard must still withhold item by item: the diagnosis stays out, the room
change and the roster reach the tool, in JSON and in a stream, and the tool runs on the de-masked arguments."""

from __future__ import annotations

import pytest

from tests.test_e2e_agents_inbox import (
    INSTR,
    SHAPE_IDS,
    SHAPES,
    check,
    env,  # noqa: F401  (the inbox's proxy and agent, one per module)
)

pytestmark = pytest.mark.slow


def conversation(shape: str) -> list:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    return [HumanMessage(INSTR),
            AIMessage("", tool_calls=[{"id": "call_inbox", "name": "read_inbox", "args": {}}]),
            ToolMessage(SHAPES[shape], tool_call_id="call_inbox")]


@pytest.mark.parametrize("shape", SHAPE_IDS)
def test_langchain_agent_json_and_stream(env, shape):  # noqa: F811
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    sent: list[dict] = []

    @tool
    def send_email(to: str, body: str) -> str:
        """Send an e-mail."""
        sent.append({"to": to, "body": body})
        return "sent"

    @tool
    def read_inbox() -> str:
        """Read the user's inbox."""
        return SHAPES[shape]

    llm = ChatOpenAI(model="agent", api_key="sk-agent", base_url="http://api.openai.com/v1", http_client=env[2],
                     max_retries=0).bind_tools([read_inbox, send_email])
    reply = llm.invoke(conversation(shape))
    call = reply.tool_calls[0]
    assert call["name"] == "send_email"
    send_email.invoke(call)  # LangChain validates the arguments against the tool's schema and runs it
    check(sent[-1])

    streamed = None
    for chunk in llm.stream(conversation(shape)):
        streamed = chunk if streamed is None else streamed + chunk
    call = streamed.tool_calls[0]
    assert call["name"] == "send_email"
    send_email.invoke(call)
    check(sent[-1])

    line = [x for x in env[1].log_lines() if x.get("agent")][-1]
    assert line["agent"]["withhold"] >= 1 and line["agent"]["shareable"] >= 4

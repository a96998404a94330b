"""The agent stage on a chat request: its guidance goes into the body that will leave, in a new decision."""

import json

from guardian_proxy import chatapi
from guardian_proxy.agents import AgentStage
from guardian_proxy.config import AgentSettings
from guardian_proxy.types import Action, Decision, RawRequest

URL = "https://api.openai.com/v1/chat/completions"
TOOLS = [{"type": "function", "function": {"name": "send_email", "parameters": {"type": "object"}}}]
STEP = [{"role": "system", "content": "You are an assistant that books doctor appointments for the user."},
        {"role": "user", "content": "Book me a dentist appointment and email my boss."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                               "function": {"name": "read_notes", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Notes: HIV positive, lives at 4 Sample Road, dentist "
                                                          "Dr. Amy Lee, boss is Margaret Okafor."}]


def step(mode: str):
    body = {"model": "m", "messages": json.loads(json.dumps(STEP)), "tools": TOOLS}
    req = RawRequest(method="POST", url=URL, body=json.dumps(body).encode(),
                     headers=[("content-type", "application/json")])
    return AgentStage(AgentSettings(mode=mode)), req, chatapi.recognise("/v1/chat/completions", body)


def test_guidance_is_added_in_a_new_decision_and_the_given_one_stays():
    stage, req, chat = step("cdi+guard")
    given = Decision(action="allow", six=Action(domain="openai.com", host="api.openai.com", recipient="ai_service"),
                     extra={"chat_api": "openai_chat"})
    d = stage.apply(req, chat, given)
    assert given.action == "allow" and given.rewrite is None and given.extra == {"chat_api": "openai_chat"}
    assert d.id == given.id and d.action == "transform" and d.extra["chat_api"] == "openai_chat"
    assert d.extra["agent"]["mode"] == "cdi+guard" and d.extra["agent"]["injected"] and d.extra["agent"]["withhold"]
    sent = json.loads(d.rewrite.body)["messages"]
    assert sent[0]["role"] == "system" and sent[0]["content"] != STEP[0]["content"] and sent[1:] == STEP[1:]
    assert stage.handoff(d.id) is not None  # kept for the reply's guard, under the decision's id


def test_a_blocked_request_or_mode_off_is_left_as_it_is():
    stage, req, chat = step("off")
    given = Decision(action="allow", six=Action(domain="openai.com", host="api.openai.com"))
    assert stage.apply(req, chat, given) is given
    stage, req, chat = step("cdi+guard")
    blocked = Decision(action="deny", six=Action(domain="openai.com", host="api.openai.com"))
    assert stage.apply(req, chat, blocked) is blocked

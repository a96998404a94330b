"""The optional LLM record judge (`agents.judge: llm`) through the `openai_compatible` back end, against the local
server of tests/support/openai_compatible_server.py: it decides the records the record model is unsure of, its
word is final on them, and a slow or broken back end leaves the record model's decisions."""

import json

import pytest

from guardian_proxy.agents import (
    Guard,
    Instructor,
    RecordModel,
    default_norms,
    default_record_model,
    detect_step,
)
from guardian_proxy.agents.instructor import judge_band
from guardian_proxy.config import LLMSettings, load_settings
from guardian_proxy.llm import make_backend
from tests.support.openai_compatible_server import start_server
from tests.unit.agents.test_items import INSTR, ROOM, ROSTER, SHAPES, copy_all, request


@pytest.fixture
def server():
    srv = start_server()
    yield srv
    srv.close()


def backend(srv):
    return make_backend(LLMSettings(backend="openai_compatible", base_url=srv.base_url, model="test-model"))


def centred() -> RecordModel:
    """The shipped model with its threshold amid its scores of the three e-mails, so that all three are unsure."""
    model = RecordModel(default_record_model().to_dict())
    g = Instructor(default_norms(), records=model).guide(detect_step("openai_chat", request(SHAPES["json"])))
    scores = sorted({j.score for j in g.judged})
    assert len(scores) == 3 and scores[-1] - scores[0] < 0.5
    model.threshold = (scores[0] + scores[-1]) / 2
    lo, hi = judge_band(model.threshold)
    assert all(lo <= p < hi for p in scores)
    return model


def instructor(judge=None, timeout=5.0):
    return Instructor(default_norms(), records=centred(), judge=judge, llm_timeout=timeout)


def test_the_judge_decides_the_unsure_records(server):
    step = detect_step("openai_chat", request(SHAPES["json"]))
    ins = instructor(backend(server))
    g = ins.guide(step)
    [ask] = server.chats()
    prompt = ask["messages"][-1]["content"]
    assert INSTR in prompt and "coworker" in prompt and "[3]" in prompt  # the three e-mails are all unsure
    assert any("chemotherapy" in j.item.text for j in g.withhold) and not any("2A" in j.item.text for j in g.withhold)
    assert all(j.score in (0.0, 1.0) for j in g.judged)  # the judge's word replaced the model's
    body = Guard(ins).check_call("send_email", json.dumps({"body": copy_all(SHAPES["json"])}), g).arguments
    body = json.loads(body)["body"]
    assert ROOM in body and ROSTER in body and "cancer" not in body


def test_the_judge_is_final_even_against_the_norms_allow_lists(server):
    server.cfg.answer = json.dumps({"withhold": [1, 2, 3]})  # a strict judge: everything unsure is withheld
    step = detect_step("openai_chat", request(SHAPES["json"]))
    g = instructor(backend(server)).guide(step)
    assert not any("2A" in j.item.text for j in g.share) and any("2A" in j.item.text and j.types for j in g.withhold)  # schedule to a coworker is allowed by the norms


@pytest.mark.parametrize("knob", [{"delay_s": 3.0}, {"answer": "no idea"}, {"answer": '{"withhold": ["x"]}'}])
def test_a_failing_judge_leaves_the_record_model(server, knob):
    for k, v in knob.items():
        setattr(server.cfg, k, v)
    step = detect_step("openai_chat", request(SHAPES["json"]))
    plain = instructor().guide(step)
    g = instructor(backend(server), timeout=1.0).guide(step)
    assert [(j.item.text, j.types) for j in g.judged] == [(j.item.text, j.types) for j in plain.judged]


def test_settings_wire_the_judge(server, tmp_path):
    from guardian_proxy.agents import AgentStage

    s = load_settings(state_dir=tmp_path, agents={"judge": "llm"},
                      llm={"backend": "openai_compatible", "base_url": server.base_url, "model": "test-model"})
    stage = AgentStage(s.agents, llm=make_backend(s.llm))
    assert stage.instructor.judge_llm is not None and stage.instructor.llm is None
    assert AgentStage(load_settings(state_dir=tmp_path).agents).instructor.judge_llm is None

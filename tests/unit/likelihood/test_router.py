"""Routing with the shipped weights: fast path, LLM slow path, conservative fallback, bad outputs."""

import math

import pytest

from guardian_proxy.config import load_settings
from guardian_proxy.errors import BackendError
from guardian_proxy.likelihood import make_stage, model_path, status
from guardian_proxy.likelihood.router import EvidentialLikelihood, fallback_value, split_items
from guardian_proxy.likelihood.slow import SCHEMA, messages, parse_answer
from guardian_proxy.types import Action, Evidence, ScoredStatement, Statement, TextField

SHIPPED = model_path(load_settings())


def action(cats=None, rec="ad_network", purs=("advertising",)):
    return Action(domain="x.com", host="x.com", categories=cats or {"contact": 1}, recipient=rec, purposes=list(purs),
                  fields=[TextField(path="json:$.e", text="jane.doe@example.com")])


COVER = Statement(id="x.com:0001", domain="x.com", practice="share", text="We share your email address with "
                  "advertising partners to show you ads.", data_categories=["contact"], recipients=["ad_network"],
                  purposes=["advertising"])
DISCLOSED = Evidence(statements=[ScoredStatement(statement=COVER, score=0.9)], transparency="full")


class FakeLLM:
    """Unit-test double; the real llama.cpp path is tested in test_llm_llamacpp.py."""

    name = "fake"

    def __init__(self, answer):
        self.answer, self.calls = answer, []

    def chat_json(self, messages, schema, max_tokens=256, timeout=20.0):
        self.calls.append((messages, schema, timeout))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_fast_path_separates_disclosed_from_undisclosed():
    stage = EvidentialLikelihood(SHIPPED)
    ok = stage.estimate(action(), DISCLOSED)
    bad = stage.estimate(action({"health": 1}, "data_broker"), DISCLOSED)
    none = stage.estimate(action(), Evidence())
    assert ok.path == "fast" and ok.u is not None and ok.u < stage.u_threshold
    assert ok.value < 0.5 < bad.value and none.value > 0.5
    assert ok.value == ok.risky_mass


def test_no_llm_means_the_stated_fallback():
    stage = EvidentialLikelihood(SHIPPED, u_threshold=1e-6)  # everything is "uncertain"
    lk = stage.estimate(action(), DISCLOSED)
    assert lk.path == "fallback" and "no LLM" in lk.reason
    assert math.isclose(lk.value, fallback_value(lk.risky_mass, lk.u))
    assert lk.value >= lk.risky_mass


def test_slow_path_asks_the_llm_for_l_only():
    llm = FakeLLM({"likelihood": 0.25, "reason": "statement 1 permits it"})
    stage = EvidentialLikelihood(SHIPPED, u_threshold=1e-6, backend=llm, timeout=3.0)
    lk = stage.estimate(action(), DISCLOSED)
    assert lk.path == "slow" and lk.value == 0.25 and "statement 1 permits it" in lk.reason
    msgs, schema, timeout = llm.calls[0]
    assert schema == SCHEMA and timeout == 3.0
    prompt = " ".join(m["content"] for m in msgs)
    assert "We share your email address" in prompt and "jane.doe@example.com" not in prompt


@pytest.mark.parametrize("answer", [
    BackendError("timeout after 3s"), RuntimeError("segfault-ish"), {"likelihood": 1.7, "reason": "x"},
    {"likelihood": "high", "reason": "x"}, {"reason": "x"}, {"likelihood": float("nan"), "reason": ""}, ["no"],
])
def test_llm_failures_fall_back(answer):
    stage = EvidentialLikelihood(SHIPPED, u_threshold=1e-6, backend=FakeLLM(answer))
    lk = stage.estimate(action(), DISCLOSED)
    assert lk.path == "fallback" and "LLM failed" in lk.reason
    assert math.isclose(lk.value, fallback_value(lk.risky_mass, lk.u))


def test_a_model_producing_nan_falls_back_to_one():
    stage = EvidentialLikelihood(SHIPPED)
    stage.loaded.model.w["head.3.bias"][:] = float("nan")
    lk = stage.estimate(action(), DISCLOSED)
    assert lk.path == "fallback" and lk.value == 1.0 and "model failed" in lk.reason


def test_several_categories_take_the_riskiest():
    stage = EvidentialLikelihood(SHIPPED)
    one = stage.estimate(action(), DISCLOSED)
    both = stage.estimate(action({"contact": 2, "health": 1}), DISCLOSED)
    assert both.value >= one.value
    items = split_items(action({"contact": 1, "health": 1, "unparsed": 1}, purs=("advertising", "analytics")))
    assert len(items) == 4 and all(len(a.categories) == 1 and len(a.purposes) == 1 for a in items)


def test_prompt_and_answer_parsing():
    msgs = messages(action(), Evidence())
    assert msgs[0]["role"] == "system" and "none known" in msgs[1]["content"]
    assert parse_answer({"likelihood": 1, "reason": "  a   b "}) == (1.0, "a b")
    with pytest.raises(BackendError):
        parse_answer({"likelihood": True, "reason": ""})


def test_status_and_stage_from_settings(tmp_path):
    s = load_settings(state_dir=tmp_path)
    st = status(s)
    assert st["ok"] and "opp115" in st["trained_on"] and st["slow_path"] == "fallback" and "u threshold" in st["detail"]
    assert status(load_settings(likelihood={"mode": "fixed"}))["detail"] == "fixed L = 0.7"
    bad = status(load_settings(likelihood={"model_file": str(tmp_path / "x.pt")}))
    assert not bad["ok"] and "x.pt" in bad["error"]
    assert isinstance(make_stage(s), EvidentialLikelihood)


def test_shipped_model_on_the_shipped_corpus():
    """Real evidence from policies/: a practice Google's policy discloses vs one nothing discloses."""
    from guardian_proxy.policy import EvidenceStage
    from guardian_proxy.resources import policies_dir

    ev = EvidenceStage.from_dirs(policies_dir(), None)
    stage = EvidentialLikelihood(SHIPPED)

    def L(cats, rec, purs):
        a = Action(domain="google.com", host="google.com", categories=cats, recipient=rec, purposes=purs)
        return stage.estimate(a, ev.retrieve(a))

    disclosed, undisclosed = L({"cookie": 1}, "ad_network", ["advertising"]), L({"health": 1}, "data_broker", ["unknown"])
    assert disclosed.path == undisclosed.path == "fast"
    assert disclosed.value < 0.2 and undisclosed.value > 0.8


def test_the_fast_path_gives_the_torch_models_values():
    """The fast path runs the network in numpy (infer.py, no torch in the workers); its (m, u) equal the
    torch model's, read from the .pt the npz was written beside (tests/test_likelihood_numpy.py covers more)."""
    torch = pytest.importorskip("torch")
    import numpy as np

    from guardian_proxy.likelihood.features import featurize
    from guardian_proxy.likelihood.model import EvidentialMLP, dirichlet_outputs
    from guardian_proxy.likelihood.router import split_items as split

    stage = EvidentialLikelihood(SHIPPED)
    ck = torch.load(SHIPPED.with_suffix(".pt"), map_location="cpu", weights_only=True)
    ref = EvidentialMLP(ck["model"]["dim"], ck["model"]["hidden"], 0.0, ck["model"]["layout"])
    ref.load_state_dict({k: v.float() for k, v in ck["state_dict"].items()})
    ref.eval()
    items = [action(), action({"health": 1, "contact": 1}, "data_broker", ("advertising", "analytics"))]
    for a in items:
        mass, u = stage.fast(a, DISCLOSED)
        x = np.stack([featurize(i, DISCLOSED, stage.loaded.spec) for i in split(a)])
        with torch.no_grad():
            m, uu = dirichlet_outputs(ref(torch.from_numpy(x)))
        assert abs(mass - max(m.tolist())) <= 1e-5 and abs(u - max(uu.tolist())) <= 1e-5

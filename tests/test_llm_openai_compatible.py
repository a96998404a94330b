"""The `openai_compatible` back end against a real local server speaking the OpenAI chat API
(tests/support/openai_compatible_server.py): every caller works through it, the deadline and the callers'
fallbacks hold, HTTP(S)_PROXY never routes it, remote base URLs are refused, the key is a Bearer header
that never reaches a log."""

import json
import logging
import socket
import time

import pytest

from guardian_proxy.config import LLMSettings, load_settings
from guardian_proxy.errors import BackendError, ConfigError, ModelLoadError
from guardian_proxy.likelihood.slow import SCHEMA as L_SCHEMA
from guardian_proxy.llm import make_backend, status
from guardian_proxy.llm.openai_compatible import OpenAICompatibleBackend, check_base_url, is_local_host
from tests.support.openai_compatible_server import GUESS, PROSE, start_server

KEY = "sk-test-9f3b1c7e2a5d4e60b8a1"


@pytest.fixture
def server():
    srv = start_server()
    yield srv
    srv.close()


def backend(srv, **kw) -> OpenAICompatibleBackend:
    return make_backend(LLMSettings(backend="openai_compatible", base_url=srv.base_url, model="test-model", **kw))


def dead_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


ASK = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}]
FLAT = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


# --------------------------------------------------------------------------- configuration


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:11434/v1", "http://localhost:8080/v1", "http://[::1]:1234/v1", "http://127.1.2.3/v1",
    "http://10.0.0.5:8000/v1", "http://192.168.1.20:1234/v1", "http://172.16.4.4/v1", "http://[fd00::5]/v1",
    "http://ollama.localhost:11434/v1", "https://127.0.0.1/v1/", "http://[::ffff:127.0.0.1]:8080/v1",
])
def test_loopback_and_private_base_urls_are_accepted(url):
    assert check_base_url(url) == url.rstrip("/")


@pytest.mark.parametrize("url", [
    "https://api.openai.com/v1", "http://8.8.8.8/v1", "http://[::ffff:8.8.8.8]/v1", "http://ollama.lan:11434/v1",
    "http://172.32.0.1/v1", "http://100.64.1.1/v1", "http://[2606:4700:4700::1111]/v1",
])
def test_a_remote_base_url_is_refused_unless_allow_remote(url):
    with pytest.raises(ConfigError, match="allow_remote: true"):
        make_backend(LLMSettings(backend="openai_compatible", base_url=url, model="m"))
    b = make_backend(LLMSettings(backend="openai_compatible", base_url=url, model="m", allow_remote=True))
    assert b.base_url == url


@pytest.mark.parametrize("settings, needle", [
    (dict(model="m"), "needs llm.base_url"),
    (dict(base_url="http://127.0.0.1:1/v1"), "needs llm.model"),
    (dict(base_url="ftp://127.0.0.1/v1", model="m"), "not an http"),
    (dict(base_url="http://user:pw@127.0.0.1/v1", model="m"), "must not carry credentials"),
    (dict(base_url="http://127.0.0.1/v1", model="m", api_key_env="GP_TEST_NO_SUCH_KEY"), "GP_TEST_NO_SUCH_KEY"),
    (dict(base_url="http://127.0.0.1/v1", model="m", api_key="two\nlines"), "HTTP header"),
])
def test_configuration_errors_are_clear(settings, needle, monkeypatch):
    monkeypatch.delenv("GP_TEST_NO_SUCH_KEY", raising=False)
    with pytest.raises(ConfigError, match=needle):
        make_backend(LLMSettings(backend="openai_compatible", **settings))


def test_is_local_host_names():
    assert is_local_host("LOCALHOST.") and is_local_host("fe80::1%eth0") and is_local_host("0.0.0.0")
    assert not is_local_host("localhost.example.com") and not is_local_host("example.com")


def test_the_settings_accept_the_backend_from_yaml(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("llm:\n  backend: openai_compatible\n  base_url: http://127.0.0.1:11434/v1\n"
                   f"  model: llama3.2:3b\n  api_key: {KEY}\n")
    s = load_settings(cfg, state_dir=tmp_path)
    assert s.llm.backend == "openai_compatible" and s.llm.model == "llama3.2:3b"
    assert KEY not in repr(s) and KEY not in s.model_dump_json() and KEY not in str(s.llm)
    with pytest.raises(ConfigError, match="timeout_s"):
        load_settings(state_dir=tmp_path, llm={"timeout_s": 0})


# --------------------------------------------------------------------------- the interface


def test_chat_and_json_through_the_server(server):
    b = backend(server)
    assert b.chat(ASK, max_tokens=32, timeout=5) == "ok: hello"
    assert b.chat_json(ASK, FLAT, max_tokens=32, timeout=5) == {"ok": True}
    free, asked = server.chats()
    assert free["model"] == "test-model" and free["temperature"] == 0 and free["max_tokens"] == 32
    assert free["stream"] is False and "response_format" not in free
    assert asked["response_format"] == {"type": "json_schema", "json_schema": {"name": "answer", "schema": FLAT}}
    assert "matching this JSON schema" in asked["messages"][0]["content"]  # the schema is asked for in words too


def test_a_server_without_response_format_gets_plain_requests_and_prose_is_parsed(server):
    server.cfg.json_modes = set()
    b = backend(server)
    assert b.chat_json(ASK, FLAT, timeout=5) == {"ok": True}
    kinds = [(c.get("response_format") or {}).get("type") for c in server.chats()]
    assert kinds == ["json_schema", "json_object", None]
    assert b.chat_json(ASK, FLAT, timeout=5) == {"ok": True}  # remembered: asked plainly at once
    assert [(c.get("response_format") or {}).get("type") for c in server.chats()][3:] == [None]


def test_a_json_object_only_server_is_asked_with_json_object_from_then_on(server):
    server.cfg.json_modes = {"json_object"}
    b = backend(server)
    b.chat_json(ASK, FLAT, timeout=5)
    b.chat_json(ASK, FLAT, timeout=5)
    assert [c["response_format"]["type"] for c in server.chats()] == ["json_schema", "json_object", "json_object"]


def test_a_think_block_is_dropped(server):
    server.cfg.think = True
    b = backend(server)
    assert b.chat(ASK, timeout=5) == "ok: hello"
    server.cfg.json_modes = set()  # the decoy JSON inside <think> must not be taken for the answer
    slow = [{"role": "system", "content": "privacy policy"}, {"role": "user", "content": "x"}]
    assert b.chat_json(slow, L_SCHEMA, timeout=5) == {"likelihood": 0.15, "reason": "statement 1 permits it"}


@pytest.mark.parametrize("answer", ["I cannot help with that.", '{"ok": "yes"}', '{"other": 1}', "[1, 2]"])
def test_a_bad_json_answer_is_a_backend_error(server, answer):
    server.cfg.answer = answer
    with pytest.raises(BackendError):
        backend(server).chat_json(ASK, FLAT, timeout=5)


def test_http_errors_are_backend_errors_that_say_what_is_wrong(server):
    b = make_backend(LLMSettings(backend="openai_compatible", base_url=server.base_url, model="not-pulled"))
    with pytest.raises(BackendError, match="HTTP 404.*not-pulled"):
        b.chat(ASK, timeout=5)


def test_a_refused_connection_is_a_backend_error_at_once():
    b = make_backend(LLMSettings(backend="openai_compatible", base_url=f"http://127.0.0.1:{dead_port()}/v1",
                                 model="m"))
    t0 = time.monotonic()
    with pytest.raises(BackendError, match="cannot reach"):
        b.chat(ASK, timeout=10)
    with pytest.raises(BackendError, match="cannot reach"):
        b.chat_json(ASK, FLAT, timeout=10)
    assert time.monotonic() - t0 < 3


def test_a_slow_server_hits_the_deadline(server):
    server.cfg.delay_s = 3.0
    b = backend(server)
    t0 = time.monotonic()
    with pytest.raises(BackendError, match="timeout after 0.5s"):
        b.chat(ASK, timeout=0.5)
    assert time.monotonic() - t0 < 1.5


def test_an_answer_still_trickling_in_at_the_deadline_is_dropped(server):
    server.cfg.trickle_s = 0.05  # ~40 pieces: 2 s in all, never a pause as long as the deadline
    t0 = time.monotonic()
    with pytest.raises(BackendError, match="timeout after 0.6s"):
        backend(server).chat(ASK, timeout=0.6)
    assert time.monotonic() - t0 < 1.2


def test_the_deadline_covers_the_retries(server):
    server.cfg.json_modes = set()
    server.cfg.delay_s = 0.4
    t0 = time.monotonic()
    with pytest.raises(BackendError, match="timeout after 1.0s"):
        backend(server).chat_json(ASK, FLAT, timeout=1.0)  # three tries of 0.4 s do not fit in 1 s
    assert time.monotonic() - t0 < 1.6


def test_proxy_variables_pointing_at_a_dead_port_are_ignored(server, monkeypatch):
    dead = f"http://127.0.0.1:{dead_port()}"
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.setenv(var, dead)
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(var, raising=False)
    b = backend(server)
    assert b.chat(ASK, timeout=5) == "ok: hello"
    assert b.chat_json(ASK, FLAT, timeout=5) == {"ok": True}
    b.load()
    assert len(server.received) == 3  # every call reached the server directly


# --------------------------------------------------------------------------- the key


def test_the_key_is_a_bearer_header_and_never_reaches_a_log(server, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)  # httpx / httpcore debug logging included
    server.cfg.api_key = KEY
    monkeypatch.setenv("GP_TEST_LLM_KEY", KEY)
    b = backend(server, api_key_env="GP_TEST_LLM_KEY")
    assert b.chat(ASK, timeout=5) == "ok: hello"
    assert server.received[-1].headers["authorization"] == f"Bearer {KEY}"
    assert backend(server, api_key=KEY).chat_json(ASK, FLAT, timeout=5) == {"ok": True}
    assert server.received[-1].headers["authorization"] == f"Bearer {KEY}"
    # a wrong key: the server echoes what it got; our error and everything logged hides the configured one
    server.cfg.api_key = "sk-other"
    with pytest.raises(BackendError) as e:
        b.chat(ASK, timeout=5)
    assert "HTTP 401" in str(e.value) and "refused the key" in str(e.value) and "***" in str(e.value)
    logging.getLogger("guardian_proxy.test").warning("LLM failed (%s)", e.value)
    with pytest.raises(ModelLoadError) as le:
        b.load()
    st = status(LLMSettings(backend="openai_compatible", base_url=server.base_url, model="test-model",
                            api_key_env="GP_TEST_LLM_KEY"))
    assert not st["ok"] and "401" in st["error"]
    seen = [str(e.value), repr(e.value.__cause__), str(le.value), json.dumps(st), repr(b), caplog.text,
            *(repr(r.__dict__) for r in caplog.records)]
    assert all(KEY not in s for s in seen)
    assert "127.0.0.1" in caplog.text  # the debug log was captured, and it holds no key


def test_no_key_sends_no_authorization_header(server):
    backend(server).chat(ASK, timeout=5)
    assert "authorization" not in server.received[-1].headers


# --------------------------------------------------------------------------- status (doctor)


def test_status_probes_the_server_and_names_the_problem(server):
    ok = status(LLMSettings(backend="openai_compatible", base_url=server.base_url, model="test-model"))
    assert ok["ok"] and "test-model" in ok["detail"] and "reachable" in ok["detail"]
    wrong = status(LLMSettings(backend="openai_compatible", base_url=server.base_url, model="llama3.2"))
    assert not wrong["ok"] and "'llama3.2'" in wrong["error"] and "test-model" in wrong["error"]
    server.cfg.models = ["llama3.2:latest"]
    assert status(LLMSettings(backend="openai_compatible", base_url=server.base_url, model="llama3.2"))["ok"]
    down = status(LLMSettings(backend="openai_compatible", base_url=f"http://127.0.0.1:{dead_port()}/v1", model="m"))
    assert not down["ok"] and "ollama serve" in down["error"]
    remote = status(LLMSettings(backend="openai_compatible", base_url="https://api.openai.com/v1", model="m"))
    assert not remote["ok"] and "allow_remote" in remote["error"]


# --------------------------------------------------------------------------- every caller


def _slow_path_stage(b, timeout=5.0):
    from guardian_proxy.likelihood import model_path
    from guardian_proxy.likelihood.router import EvidentialLikelihood

    return EvidentialLikelihood(model_path(load_settings()), u_threshold=1e-6, backend=b, timeout=timeout)


def _action_and_evidence():
    from tests.unit.likelihood.test_router import DISCLOSED, action

    return action(), DISCLOSED


def test_the_likelihood_slow_path_asks_the_server_for_l(server):
    lk = _slow_path_stage(backend(server)).estimate(*_action_and_evidence())
    assert lk.path == "slow" and lk.value == 0.15 and "openai_compatible" in lk.reason
    sent = json.dumps(server.chats()[-1])
    assert "We share your email address" in sent and "jane.doe@example.com" not in sent


def test_the_likelihood_slow_path_falls_back_on_a_slow_or_dead_server(server):
    server.cfg.delay_s = 3.0
    t0 = time.monotonic()
    lk = _slow_path_stage(backend(server), timeout=0.5).estimate(*_action_and_evidence())
    assert lk.path == "fallback" and "timeout" in lk.reason and time.monotonic() - t0 < 2
    dead = make_backend(LLMSettings(backend="openai_compatible", base_url=f"http://127.0.0.1:{dead_port()}/v1",
                                    model="m"))
    assert _slow_path_stage(dead).estimate(*_action_and_evidence()).path == "fallback"
    server.cfg.delay_s, server.cfg.likelihood = 0.0, 1.7  # out of [0, 1]: a bad answer, the same fallback
    assert _slow_path_stage(backend(server)).estimate(*_action_and_evidence()).path == "fallback"


def test_l4_l5_rewriting_through_the_server_and_its_fallback(server):
    from guardian_proxy.anonymize.llm_rewrite import LLMRewriter

    base = {"json:$.m": "Please ask [PERSON_1] whether Mary Jones can join the trip next week."}
    out4 = LLMRewriter(backend(server), timeout=5).rewrite(base, 4)
    assert out4["json:$.m"] == "REWRITE: Please ask [PERSON_1] whether a person can join the trip next week."
    assert LLMRewriter(backend(server), timeout=5).rewrite(base, 5)["json:$.m"].startswith("PARAPHRASE: ")
    server.cfg.delay_s = 3.0
    assert LLMRewriter(backend(server), timeout=0.5).rewrite(base, 4) == base  # deterministic text kept


def test_the_adversarial_guesser_through_the_server_and_its_fallback(server):
    from guardian_proxy.anonymize.guesser import LLMGuesser

    guesses = LLMGuesser(backend(server), timeout=5).guess("[PERSON_1] lives in [LOCATION] near the river.")
    assert [(g.value, g.confidence) for g in guesses] == [(GUESS["value"], GUESS["confidence"])]
    server.cfg.json_modes = set()  # an old server: prose around the JSON
    assert LLMGuesser(backend(server), timeout=5).guess("[PERSON_1] lives in [LOCATION].")[0].value == GUESS["value"]
    server.cfg.delay_s = 3.0
    assert LLMGuesser(backend(server), timeout=0.5).guess("[PERSON_1] lives in [LOCATION].") == []


def test_the_agent_instructor_through_the_server_and_its_fallback(server):
    from guardian_proxy.agents import Instructor, default_norms, default_record_model, detect_step
    from tests.test_agents import openai_request

    step = detect_step("openai_chat", openai_request())
    rules = Instructor(default_norms(), records=default_record_model()).guide(step).text
    ins = Instructor(default_norms(), records=default_record_model(), llm=backend(server), llm_timeout=5)
    assert ins.guide(step).text == f"{PROSE}\n\n{rules}"
    server.cfg.delay_s = 3.0
    slow = Instructor(default_norms(), records=default_record_model(), llm=backend(server), llm_timeout=0.5)
    assert slow.guide(step).text == rules


def test_gateway_from_settings_uses_the_server_everywhere(server, tmp_path):
    from guardian_proxy.pipeline import Gateway
    from guardian_proxy.types import RawRequest

    s = load_settings(state_dir=tmp_path, detector={"ner": False}, likelihood={"u_threshold": 1e-6},
                      llm={"backend": "openai_compatible", "base_url": server.base_url, "model": "test-model",
                           "timeout_s": 5})
    gw = Gateway.from_settings(s, with_log=False)
    llm = gw.likelihood.backend
    assert isinstance(llm, OpenAICompatibleBackend) and gw.transformer.llm is llm
    body = json.dumps({"ticket": {"text": "Please write to jane.doe@example.com about the refund"}}).encode()
    d = gw.evaluate(RawRequest(method="POST", url="https://www.google-analytics.com/collect", body=body,
                               headers=[("content-type", "application/json")]), log=False)
    assert d.likelihood.path == "slow" and d.likelihood.value == 0.15 and "openai_compatible" in d.likelihood.reason
    systems = [c["messages"][0]["content"] for c in server.chats()]
    assert any("privacy policy" in t for t in systems)  # stage 3, the slow path
    assert d.action == "transform" and any("adversary" in t for t in systems)  # the rewrite's verifier

"""Conversation sessions behind the state interface (guardian_proxy/state/sessions*.py, session/store.py):
every test body runs on both back ends (local SQLite + flock, Redis); several stores built from the same
settings are several processes (or gateways) sharing one store, and a few tests start real processes."""

from __future__ import annotations

import functools
import json
import multiprocessing
import re
import sqlite3
import threading
import time

import pytest
from typer.testing import CliRunner

from guardian_proxy.config import load_factor_tables
from guardian_proxy.session import SessionStage
from guardian_proxy.session.store import SessionStore
from guardian_proxy.session.vault import Vault
from guardian_proxy.state import StateUnavailable, redis_client
from guardian_proxy.types import ENTITIES, Action, Decision, RawRequest, Span
from tests.support.state_backends import backend_settings, key_file, unreachable_settings

BACKENDS = ["local", "redis"]
SID = "5e" * 16

# ---------------------------------------------------------------------------------------------- helpers

VALUES = {"Quentin Zarkowsky": "PERSON", "Margaret Okafor": "PERSON", "Albuquerque": "LOCATION",
          "diabetes": "MEDICAL_CONDITION", "$85,000": "AMOUNT"}
TURNS = ["Hi, I'm Quentin Zarkowsky and I live in Albuquerque.",
         "My colleague Margaret Okafor says hello.",
         "I was diagnosed with diabetes and I earn $85,000 a year.",
         "What should Quentin Zarkowsky ask Margaret Okafor?",
         "Summarise everything for Quentin Zarkowsky."]


def detect(fields):
    """A stand-in for the NER: the values above, wherever they occur (no models to load)."""
    out = []
    for f in fields:
        for value, entity in VALUES.items():
            for m in re.finditer(re.escape(value), f.text):
                cat, direct = ENTITIES[entity]
                out.append(Span(path=f.path, start=m.start(), end=m.end(), entity=entity, category=cat, text=value,
                                direct=direct))
    return out


@functools.lru_cache(maxsize=1)
def tables():
    return load_factor_tables(None)


def make_stage(settings) -> SessionStage:
    return SessionStage(settings, tables(), detect=detect)


def chat_request(msgs, key="sk-state", url="https://api.openai.com/v1/chat/completions", body=None) -> RawRequest:
    raw = body if body is not None else {"model": "m", "messages": msgs}
    return RawRequest(method="POST", url=url, body=json.dumps(raw).encode(),
                      headers=[("content-type", "application/json"), ("authorization", f"Bearer {key}")])


def apply(stage: SessionStage, req: RawRequest) -> Decision:
    action = Action(domain="openai.com", host="api.openai.com", recipient="ai_service")
    chat = stage.recognise(req, action)
    assert chat is not None
    return stage.decide(req, chat, action, None)


def reply(text: str) -> bytes:
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()


def reply_text(body: bytes) -> str:
    return json.loads(body)["choices"][0]["message"]["content"]


def converse(send, demask) -> list[tuple[str, dict, str, bytes]]:
    """The conversation of TURNS: turn i is rewritten by send(i, msgs) → (sent body, extra) and its reply
    de-masked by demask(i, extra, reply) (the client only ever sees de-masked replies, and sends them back as
    its history). Per turn: (the user text sent, extra, the de-masked reply, the reply as the model wrote it)."""
    msgs, out = [], []
    for i, text in enumerate(TURNS):
        msgs.append({"role": "user", "content": text})
        body, extra = send(i, msgs)
        sent = json.loads(body)["messages"][-1]["content"] if body else text
        model = reply(f"You said: {sent}")
        back = demask(i, extra, model)
        content = reply_text(back) if back is not None else reply_text(model)
        msgs.append({"role": "assistant", "content": content})
        out.append((sent, extra, content, model))
    return out


def stage_send(stages):
    def send(i, msgs):
        d = apply(stages[i % len(stages)], chat_request(msgs))
        return (d.rewrite.body if d.rewrite else None), dict(d.extra)
    return send


def stage_demask(stages, offset=0):
    def demask(i, extra, model):
        return stages[(i + offset) % len(stages)].demask_response(extra, model, "application/json")
    return demask


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture
def settings(request, backend, tmp_path):
    return backend_settings(request, backend, tmp_path)


def same_key_settings(request, backend, tmp_path, name, suffix):
    """Settings of another store with the same vault key (local: the key file copied), for a reference run."""
    s = backend_settings(request, backend, tmp_path, name=name, suffix=suffix)
    if backend == "local":
        src = tmp_path / "state" / "vault.key"
        s.state_dir.mkdir(mode=0o700, exist_ok=True)
        (s.state_dir / "vault.key").write_bytes(src.read_bytes())
        (s.state_dir / "vault.key").chmod(0o600)
    return s


# ---------------------------------------------------------------------------------------------- the rows


def test_rows_round_trip_rev_aliases_listing_and_wipes(settings):
    v = Vault.for_settings(settings)
    assert v.head(SID) is None and v.load(SID) is None and v.resolve("resp_1") is None
    ent = {"e": "PERSON", "o": "Quentin Zarkowsky", "n": "quentin zarkowsky", "t": 1, "s": "Alex Smith", "b": False}
    now = time.time()
    assert v.save(SID, now - 5, now, {"turn": 1}, [ent]) == 1
    assert v.save(SID, now - 5, now + 1, {"turn": 2}, []) == 2  # a meta-only save bumps the rev too
    assert v.head(SID) == (2, now + 1)
    rev, (created, last_seen, meta, ents) = v.load_rev(SID)
    assert rev == 2 and created == pytest.approx(now - 5) and meta == {"turn": 2} and ents == [ent]
    v.add_alias("resp_1", SID)
    assert v.resolve("resp_1") == SID and v.resolve("resp_2") is None
    v.save("ab" * 16, now - 100, now - 50, {"turn": 7}, [])
    assert [(s[0], s[3]["turn"], s[4]) for s in v.sessions()] == [(SID, 2, 1), ("ab" * 16, 7, 0)]
    assert v.entity_types(SID) == {"PERSON": 1}
    assert v.wipe("%") == 0 and v.wipe(older_than=now - 10) == 1 and [s[0] for s in v.sessions()] == [SID]
    assert v.wipe("5e5e") == 1 and v.head(SID) is None and v.resolve("resp_1") is None
    v.save(SID, now, now, {}, [ent])
    assert v.wipe() == 1 and v.sessions() == []
    v.close()


def test_two_vaults_of_one_settings_read_each_others_rows(settings):
    a, b = Vault.for_settings(settings), Vault.for_settings(settings)
    assert a.mac("session", "x") == b.mac("session", "x")  # one key: the same ids and lookups everywhere
    a.save(SID, time.time(), time.time(), {"turn": 1}, [{"n": "v", "e": "PERSON"}])
    a.add_alias("resp_9", SID)
    assert b.load(SID)[3] == [{"n": "v", "e": "PERSON"}] and b.resolve("resp_9") == SID
    a.close()
    b.close()


def test_a_database_of_an_earlier_version_gains_the_rev_column(tmp_path):
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    db = sqlite3.connect(state / "sessions.db")
    db.executescript("CREATE TABLE sessions(sid TEXT PRIMARY KEY, created REAL, last_seen REAL, meta BLOB);"
                     "CREATE TABLE entities(sid TEXT, lookup TEXT, blob BLOB, PRIMARY KEY(sid, lookup));"
                     "CREATE TABLE aliases(alias TEXT PRIMARY KEY, sid TEXT, created REAL);")
    db.execute("INSERT INTO sessions VALUES(?, 1, 2, X'00')", (SID,))
    db.commit()
    db.close()
    key_file(state / "vault.key")
    v = Vault(state)
    assert v.head(SID) == (0, 2.0)
    assert v.save(SID, 1, 3, {"turn": 1}, []) == 1 and v.load(SID)[2] == {"turn": 1}
    v.close()


def test_redis_keys_and_values_hold_no_value(request, tmp_path):
    settings = backend_settings(request, "redis", tmp_path)
    stage = make_stage(settings)
    out = converse(stage_send([stage]), stage_demask([stage]))
    stage.store.alias("resp_secret_id", out[0][1]["session"])
    stage.store.flush()
    r = redis_client(settings)
    keys = list(r.scan_iter(match=settings.state.prefix + ":*"))
    assert len(keys) >= 4
    blobs = []
    for k in keys:
        kind = r.type(k).decode()
        if kind == "hash":
            blobs += [x for kv in r.hgetall(k).items() for x in kv]
        elif kind == "string":
            blobs.append(r.get(k))
        elif kind == "set":
            blobs += list(r.smembers(k))
        elif kind == "zset":
            blobs += [m for m, _ in r.zrange(k, 0, -1, withscores=True)]
        ttl = r.ttl(k)
        assert kind == "zset" or 0 < ttl <= settings.session.idle_expiry_s, k  # idle expiry as a TTL
    raw = b"\n".join(keys + blobs)
    for secret in (b"Zarkowsky", b"Quentin", b"quentin", b"Okafor", b"Albuquerque", b"diabetes", b"85,000", b"PERSON",
                   b"resp_secret_id", b"sk-state"):
        assert secret not in raw, secret
    stage.close()


# ---------------------------------------------------------------------------------------------- the store


def test_a_store_sees_another_stores_writes_at_its_next_turn(settings):
    a = SessionStore(settings.state_dir, 3600, settings)
    b = SessionStore(settings.state_dir, 3600, settings)
    with a.lock(SID):
        st = a.state(SID)
        st.set_surrogate(st.add("PERSON", "Quentin Zarkowsky", 1), "Alex Smith")
        st.turn = 1
        a.persist(st)
        a.refresh(st)
    assert b.demasker(SID).full("Alex Smith") == "Quentin Zarkowsky"  # b never ran the turn
    with b.lock(SID):
        st = b.state(SID)
        assert st.turn == 1 and set(st.entities) == {"quentin zarkowsky"}
        st.set_surrogate(st.add("PERSON", "Margaret Okafor", 2), "Jane Roe")
        st.turn = 2
        b.persist(st)
    assert a.demasker(SID).full("Jane Roe and Alex Smith") == "Margaret Okafor and Quentin Zarkowsky"  # rebuilt
    with a.lock(SID):
        st = a.state(SID)  # a's cached copy is stale: read again
        assert st.turn == 2 and set(st.entities) == {"quentin zarkowsky", "margaret okafor"}
    b.wipe(SID[:8])  # `sessions wipe` elsewhere: a starts the conversation afresh
    with a.lock(SID):
        assert a.state(SID).entities == {}
    assert a.demasker(SID).full("Alex Smith") == "Alex Smith"
    a.close()
    b.close()


def test_the_session_lock_holds_across_stores(settings):
    a = SessionStore(settings.state_dir, 3600, settings)
    b = SessionStore(settings.state_dir, 3600, settings)
    held, waited = threading.Event(), []

    def hold():
        with a.lock(SID):
            held.set()
            time.sleep(0.3)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(5)
    start = time.monotonic()
    with b.lock(SID):
        waited.append(time.monotonic() - start)
    t.join()
    assert waited[0] >= 0.2
    a.close()
    b.close()


def bump(settings, tag: str, n: int) -> None:
    """n turns of one conversation, each adding a value and counting the turn: a lost update shows."""
    store = SessionStore(settings.state_dir, 3600, settings)
    for i in range(n):
        with store.lock(SID):
            st = store.state(SID)
            st.turn += 1
            st.set_surrogate(st.add("PERSON", f"Person {tag}{i}", st.turn), f"Sur {tag}{i}")
            store.persist(st)
        time.sleep(0.03)  # past the lock poll's longest pause: the other one gets in
    store.close()


def test_turns_racing_from_two_stores_lose_nothing(settings):
    threads = [threading.Thread(target=bump, args=(settings, tag, 15)) for tag in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _, _, meta, ents = Vault.for_settings(settings).load(SID)
    assert meta["turn"] == 30 and len(ents) == 30


@pytest.mark.slow
def test_turns_racing_from_two_processes_lose_nothing(settings):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=bump, args=(settings, tag, 20)) for tag in "ab"]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    _, _, meta, ents = Vault.for_settings(settings).load(SID)
    assert meta["turn"] == 40 and len(ents) == 40


# ---------------------------------------------------------------------------------------------- the stage


def test_a_conversation_alternating_between_two_stages_keeps_one_session(request, backend, tmp_path):
    """Turns alternate between two stages (two worker processes, or two gateways on one Redis); the replies
    are de-masked by the stage that did not rewrite the request. Everything matches one stage's run of the
    same conversation under the same key: the surrogates, CPE, the crossed turn, the de-masked replies."""
    s = backend_settings(request, backend, tmp_path)
    two = [make_stage(s), make_stage(s)]
    alt = converse(stage_send(two), stage_demask(two, offset=1))
    ref_stage = make_stage(same_key_settings(request, backend, tmp_path, "ref", "-ref"))
    ref = converse(stage_send([ref_stage]), stage_demask([ref_stage]))
    assert [(sent, extra) for sent, extra, _, _ in alt] == [(sent, extra) for sent, extra, _, _ in ref]
    assert len({extra["session"] for _, extra, _, _ in alt}) == 1
    assert [extra["turn"] for _, extra, _, _ in alt] == [1, 2, 3, 4, 5]
    crossed = alt[-1][1]["crossed_turn"]
    assert crossed == 3 and alt[2][1]["retroactive"] and not alt[1][1]["retroactive"]
    first = alt[0][0]
    assert "Zarkowsky" not in first and "Albuquerque" in first  # a quasi-identifier waits for the crossing
    sur = first[len("Hi, I'm "):first.index(" and I live")]
    assert all(sur in sent for sent, *_ in (alt[0], alt[3], alt[4]))  # one surrogate every turn
    for real, entity in VALUES.items():  # a condition and an amount are what it is about: session.keep_after_tau
        if entity in ("MEDICAL_CONDITION", "AMOUNT"):
            assert real in alt[2][0]
        else:
            assert all(real not in sent for sent, *_ in alt[2:]), real
    for i, (_, extra, content, model) in enumerate(alt):  # the client reads its own words back
        assert content == f"You said: {TURNS[i]}"
        for st in two:  # either stage de-masks the reply of any turn
            assert reply_text(st.demask_response(extra, model, "application/json") or model) == content
    for st in [*two, ref_stage]:
        st.close()


def test_a_response_id_continues_the_session_in_another_stage(settings):
    a, b, proxy = make_stage(settings), make_stage(settings), make_stage(settings)
    url = "https://api.openai.com/v1/responses"
    d1 = apply(a, chat_request(None, url=url, body={"model": "o", "input": "I am Quentin Zarkowsky"}))
    sur = json.loads(d1.rewrite.body)["input"][len("I am "):]
    answer = json.dumps({"id": "resp_77", "output": [{"type": "message", "content": [
        {"type": "output_text", "text": f"Hi {sur}"}]}]}).encode()
    meta = {"session": d1.extra["session"], "chat_api": d1.extra["chat_api"]}
    assert b"Quentin Zarkowsky" in proxy.demask_response(meta, answer, "application/json")
    proxy.store.flush()  # the alias is written off the request path, by the process that read the reply
    d2 = apply(b, chat_request(None, url=url, body={"model": "o", "previous_response_id": "resp_77",
                                                     "input": "Quentin Zarkowsky again"}))
    assert d2.extra["session"] == d1.extra["session"] and d2.extra["turn"] == 2
    assert json.loads(d2.rewrite.body)["input"] == f"{sur} again"
    for st in (a, b, proxy):
        st.close()


def test_turns_without_history_alternating_between_stages_know_the_earlier_turns(settings):
    """The Responses API sends only the new input: what an earlier turn registered (a name introduced in
    the other stage, the turn count) is only in the store, and each stage reads it there."""
    a, b, proxy = make_stage(settings), make_stage(settings), make_stage(settings)
    url = "https://api.openai.com/v1/responses"
    inputs = ["I am Quentin Zarkowsky", "My colleague is Margaret Okafor", "Margaret says hi to Quentin",
              "Quentin thanks Margaret"]
    previous, sent = None, []
    for i, text in enumerate(inputs):
        body = {"model": "o", "input": text, **({"previous_response_id": previous} if previous else {})}
        d = apply((a, b)[i % 2], chat_request(None, url=url, body=body))
        assert d.extra["turn"] == i + 1
        sent.append(json.loads(d.rewrite.body)["input"] if d.rewrite else text)
        previous = f"resp_{i}"
        answer = json.dumps({"id": previous, "output": [{"type": "message", "content": [
            {"type": "output_text", "text": sent[-1]}]}]}).encode()
        out = proxy.demask_response({"session": d.extra["session"], "chat_api": d.extra["chat_api"]}, answer,
                                    "application/json")
        assert json.loads(out)["output"][0]["content"][0]["text"] == text
        proxy.store.flush()
    for text in sent[2:]:
        assert "Margaret" not in text and "Quentin" not in text, text
    for st in (a, b, proxy):
        st.close()


def _stage_worker(settings, inbox, outbox) -> None:
    stage = make_stage(settings)
    for msgs in iter(inbox.get, None):
        d = apply(stage, chat_request(msgs))
        outbox.put((d.rewrite.body if d.rewrite else None, dict(d.extra)))
    stage.close()


@pytest.mark.slow
def test_two_worker_processes_and_the_proxy_keep_one_session(request, backend, tmp_path):
    """Two spawned processes rewrite alternate turns; this process (the proxy's role) de-masks every reply."""
    s = backend_settings(request, backend, tmp_path)
    ctx = multiprocessing.get_context("spawn")
    queues = [(ctx.Queue(), ctx.Queue()) for _ in range(2)]
    procs = [ctx.Process(target=_stage_worker, args=(s, *q)) for q in queues]
    for p in procs:
        p.start()
    proxy = make_stage(s)
    try:
        def send(i, msgs):
            inbox, outbox = queues[i % 2]
            inbox.put(msgs)
            return outbox.get(timeout=120)

        alt = converse(send, lambda i, extra, model: proxy.demask_response(extra, model, "application/json"))
    finally:
        for inbox, _ in queues:
            inbox.put(None)
        for p in procs:
            p.join(60)
    ref_stage = make_stage(same_key_settings(request, backend, tmp_path, "ref", "-ref"))
    ref = converse(stage_send([ref_stage]), stage_demask([ref_stage]))
    assert [(sent, extra) for sent, extra, _, _ in alt] == [(sent, extra) for sent, extra, _, _ in ref]
    assert [content for _, _, content, _ in alt] == [f"You said: {t}" for t in TURNS]
    assert alt[-1][1]["crossed_turn"] == 3 and len({extra["session"] for _, extra, _, _ in alt}) == 1
    proxy.close()
    ref_stage.close()


# ---------------------------------------------------------------------------------------------- failures


def test_an_unreachable_redis_raises_in_time_and_replies_keep_the_known_mapping(tmp_path, settings):
    down = unreachable_settings(tmp_path / "down", timeout_s=0.2)
    stage = make_stage(down)
    start = time.monotonic()
    with pytest.raises(StateUnavailable):
        apply(stage, chat_request([{"role": "user", "content": "I'm Quentin Zarkowsky."}]))
    assert time.monotonic() - start < 3  # the stage's fail rule applies (blocked), not a hang
    with pytest.raises(StateUnavailable):
        stage.store.demasker(SID)  # nothing known here: the response path's rule (passes as received)
    stage.close()
    store = SessionStore(settings.state_dir, 3600, settings)  # a working store whose back end then fails
    with store.lock(SID):
        st = store.state(SID)
        st.set_surrogate(st.add("PERSON", "Quentin Zarkowsky", 1), "Alex Smith")
        store.persist(st)
        store.refresh(st)

    def fail(sid):
        raise StateUnavailable("down")

    store.vault.rows.head = fail
    assert store.demasker(SID).full("Alex Smith") == "Quentin Zarkowsky"
    store.close()


# ---------------------------------------------------------------------------------------------- the CLI


def test_sessions_list_and_wipe_read_the_configured_back_end(request, backend, tmp_path):
    from guardian_proxy.cli import app

    s = backend_settings(request, backend, tmp_path)
    config = tmp_path / "config.yaml"
    state = s.state.model_dump(mode="json", exclude_none=True)
    config.write_text(json.dumps({"state_dir": str(s.state_dir), "state": state}))
    v = Vault.for_settings(s)
    now = time.time()
    v.save("a1" * 16, now - 10, now, {"turn": 3, "cpe": 2.5, "crossed": 2},
           [{"e": "PERSON", "o": "Quentin Zarkowsky", "n": "quentin zarkowsky", "t": 1, "s": "Alex Smith"}])
    v.save("b2" * 16, now - 9 * 86400, now - 8 * 86400, {"turn": 1}, [])
    runner = CliRunner()
    r = runner.invoke(app, ["sessions", "list", "--json", "--config", str(config)])
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in r.output.splitlines()]
    assert [x["session"] for x in rows] == ["a1" * 16, "b2" * 16]
    assert rows[0]["types"] == {"PERSON": 1} and rows[0]["crossed_turn"] == 2 and "Zarkowsky" not in r.output
    r = runner.invoke(app, ["sessions", "wipe", "--expired", "--config", str(config)])
    assert "wiped 1 session" in r.output, r.output
    r = runner.invoke(app, ["sessions", "wipe", "a1a1", "--config", str(config)])
    assert "wiped 1 session" in r.output and v.sessions() == []
    v.close()


def test_sessions_list_names_an_unreachable_store(tmp_path):
    from guardian_proxy.cli import app

    s = unreachable_settings(tmp_path)
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({"state_dir": str(s.state_dir), "state": s.state.model_dump(mode="json",
                                                                                             exclude_none=True)}))
    r = CliRunner().invoke(app, ["sessions", "list", "--config", str(config)])
    assert r.exit_code == 1 and "cannot be reached" in r.output and "redis 127.0.0.1" in r.output

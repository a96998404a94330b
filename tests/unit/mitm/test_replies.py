"""The reply hooks driven in-process (mitmproxy's `taddons`/`tflow`, a real SessionStage with a stand-in detector):
each route of guardian_proxy/mitm/replies.py hands mitmproxy's bytes to the one reply filter
(guardian_proxy/session/reply.py) and sets the headers its route needs."""

from __future__ import annotations

import asyncio
import gzip
import json
import logging

import pytest
from mitmproxy.test import taddons, tflow

from guardian_proxy.config import load_factor_tables, load_settings
from guardian_proxy.mitm.hooks import GuardianAddon
from guardian_proxy.session import SessionStage
from guardian_proxy.testing import FakeGateway, decision
from tests.support import llm_server as srv
from tests.unit.session.test_reply import NAME, detect, session, sse_text


class ChatGateway(FakeGateway):
    """A FakeGateway with a real session stage (and no agent stage) for the reply hooks."""

    def __init__(self, stage: SessionStage, limits):
        super().__init__(decision("allow"))
        self.session, self.agents = stage, None
        self.settings = type("S", (), {"limits": limits})()


@pytest.fixture(scope="module")
def stage(tmp_path_factory):
    st = SessionStage(load_settings(state_dir=tmp_path_factory.mktemp("state")), load_factor_tables(None),
                      detect=detect)
    yield st
    st.close()


def addon(stage, bound: int = 4096) -> GuardianAddon:
    limits = load_settings().limits.model_copy(update={"max_inspected_response_bytes": bound})
    return GuardianAddon(ChatGateway(stage, limits))


def reply_flow(meta: dict, body: bytes, ctype: str, coding: str | None = None, length: bool = True):
    f = tflow.tflow(resp=True)
    f.metadata["guardian"] = meta
    r = f.response
    r.headers.clear()
    r.headers["content-type"] = ctype
    if coding:
        r.headers["content-encoding"] = coding
    if length:
        r.headers["content-length"] = str(len(body))
    r.raw_content = body
    return f


def sent_on(f, chunk: bytes) -> bytes:
    """What the stream callable hands mitmproxy for one chunk (bytes, or [] for nothing: never b"")."""
    out = f.response.stream(chunk)
    assert out != b""
    return out if isinstance(out, bytes) else b"".join(out)


def streamed(f, body: bytes, step: int = 5) -> bytes:
    return b"".join(sent_on(f, body[i:i + step]) for i in range(0, len(body), step)) + sent_on(f, b"")


def test_a_compressed_chat_stream_passes_through_the_filter_uncompressed(stage):
    meta, sent = session(stage)
    raw = b"".join(srv.openai_chat(sent, True))
    with taddons.context():
        a = addon(stage)
        f = reply_flow(meta, gzip.compress(raw), "text/event-stream", "gzip")
        a.responseheaders(f)
        h = f.response.headers
        assert callable(f.response.stream) and "content-encoding" not in h and "content-length" not in h
        assert h["transfer-encoding"] == "chunked"
        out = streamed(f, gzip.compress(raw))
    assert sse_text(out).startswith(f"Noted, {NAME}.")
    assert out.endswith(b"data: [DONE]\n\n")


def test_a_whole_answer_with_a_length_is_read_in_the_pool_and_encoded_as_it_came(stage):
    meta, sent = session(stage)
    wire = gzip.compress(json.dumps(srv.openai_chat(sent, False)).encode())
    with taddons.context():
        a = addon(stage)
        f = reply_flow(meta, wire, "application/json", "gzip")
        a.responseheaders(f)
        assert not f.response.stream  # mitmproxy holds it
        asyncio.run(a.response(f))
    r = f.response
    assert r.headers["content-encoding"] == "gzip" and r.headers["content-length"] == str(len(r.raw_content))
    assert json.loads(gzip.decompress(r.raw_content))["choices"][0]["message"]["content"].startswith(f"Noted, {NAME}.")


def test_a_whole_answer_without_a_length_is_held_by_the_filter_within_the_bound(stage):
    meta, sent = session(stage)
    raw = json.dumps(srv.openai_chat(sent, False)).encode()
    with taddons.context():
        a = addon(stage)
        f = reply_flow(meta, raw, "application/json", length=False)
        a.responseheaders(f)
        assert callable(f.response.stream) and f.response.headers["transfer-encoding"] == "chunked"
        assert f.response.stream(raw[:20]) == []  # held, and no empty chunk (the HTTP/1 terminator)
        out = sent_on(f, raw[20:]) + sent_on(f, b"")
    assert json.loads(out)["choices"][0]["message"]["content"].startswith(f"Noted, {NAME}.")


def test_an_answer_over_the_bound_passes_as_it_comes_with_one_log_line(stage, caplog):
    meta, sent = session(stage)
    raw = json.dumps(srv.openai_chat(sent, False)).encode()
    with taddons.context(), caplog.at_level(logging.WARNING, "guardian_proxy"):
        a = addon(stage, bound=100)
        f = reply_flow(meta, raw, "application/json")
        a.responseheaders(f)
        assert f.response.stream is True
        asyncio.run(a.response(f))
    assert f.response.raw_content == raw
    assert [r.getMessage() for r in caplog.records if "over the 100-byte bound" in r.getMessage()]


def test_what_no_stage_reads_streams_untouched(stage):
    meta, _ = session(stage)
    with taddons.context():
        a = addon(stage)
        page = reply_flow(meta, b"<p>hi</p>", "text/html")
        a.responseheaders(page)
        other = reply_flow({"id": "x"}, b"{}", "application/json")
        a.responseheaders(other)
        head = reply_flow(meta, b"", "application/json")
        head.request.method = "HEAD"
        a.responseheaders(head)
    assert page.response.stream is True and other.response.stream is True
    assert page.response.headers["content-length"] == "9"
    assert not head.response.stream


def test_whether_a_reply_is_a_stream_is_decided_in_one_place():
    """The one reply filter (session/reply.py `is_stream`) decides it; the mitm edge keeps no copy of the types."""
    import guardian_proxy.mitm.flows as flows
    from guardian_proxy.session import reply

    assert not hasattr(flows, "is_stream") and not hasattr(flows, "_STREAM_TYPES")
    assert reply.is_stream("text/event-stream; charset=utf-8") and not reply.is_stream("application/json")

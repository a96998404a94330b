"""The console, mitmproxy users and the command line (docs/cli.md), the parts that need no process: the
console's decision line (never a value), mitmweb's marks, `--set` checked before the models load, the
dashboard moving off a taken port, the worker's process name, the console's masking of paths. The processes:
tests/test_e2e_console.py."""

from __future__ import annotations

import logging
import os
import socket
import sys
from pathlib import Path

import pytest

from guardian_proxy import console, proctitle
from guardian_proxy.errors import GuardianError
from guardian_proxy.logmask import mask
from guardian_proxy.types import Action, Decision, RawRequest, Rewrite, Span

EMAIL = "jane.doe.1987@gmail.com"


def _decision(action: str, spans=(), recipient="analytics", host="www.google-analytics.com", **kw) -> Decision:
    a = Action(domain="google-analytics.com", host=host, recipient=recipient,
               categories={"contact": len(spans)} if spans else {}, spans=list(spans))
    return Decision(action=action, six=a, **kw)


def _email_span() -> Span:
    return Span(path="query:uid", start=0, end=len(EMAIL), entity="EMAIL_ADDRESS", category="contact", text=EMAIL)


def _raw(app=None) -> RawRequest:
    return RawRequest(method="GET", url=f"https://www.google-analytics.com/collect?uid={EMAIL}", app=app)


def test_a_blocked_line_names_program_method_host_and_why_never_the_value():
    d = _decision("deny", [_email_span()], explanation=f"uid={EMAIL} → R 0.9")
    line = console.line(_raw({"name": "curl", "pid": 1, "exe": "/usr/bin/curl", "kind": "tool"}), d)
    assert line == "curl  GET  www.google-analytics.com  blocked: e-mail address to analytics"
    assert "jane" not in line and "1987" not in line


def test_a_rewritten_line_says_the_level_and_the_data():
    d = _decision("transform", [_email_span()], final_level=2, rewrite=Rewrite(span_counts={"EMAIL_ADDRESS": 1}))
    assert console.why(d) == "rewrote (L2): e-mail address to analytics"
    assert console.line(_raw(), d).startswith("?  GET  www.google-analytics.com  rewrote (L2)")  # app not known


def test_an_override_and_a_rule_are_named_not_guessed():
    assert console.why(_decision("deny", override="deny ads.example")) == "blocked: your rule"
    assert console.why(_decision("deny", rule="unparsed-high-risk")) == "blocked: unparsed high risk"
    assert console.why(_decision("allow")) == "allowed"
    assert console.why(_decision("allow", rule="no-personal-data")) == "allowed: no personal data"


def test_the_host_is_masked_as_in_the_log():
    d = _decision("deny", host="jane-doe-1987-gmail-com.tracker.example")
    host = "4111-1111-1111-1111.tracker.example"
    d = _decision("deny", host=host)
    assert "4111" not in console.line(_raw(), d)


def test_levels_blocked_and_rewritten_are_warnings_allowed_is_info(caplog):
    caplog.set_level(logging.DEBUG, logger="guardian_proxy.decisions")
    console.say(_raw(), _decision("deny", [_email_span()]), ("127.0.0.1", 5000))
    console.say(_raw(), _decision("allow"))
    console.say(_raw(), _decision("allow"), standalone=True)  # mitmdump's own flow line says it
    levels = [(r.levelno, r.getMessage().split("  ")[-1]) for r in caplog.records]
    assert levels == [(logging.WARNING, "blocked: e-mail address to analytics"), (logging.INFO, "allowed"),
                      (logging.DEBUG, "allowed")]
    assert caplog.records[0].client == ("127.0.0.1", 5000)  # mitmproxy's formatter prints it as mitmdump does


def test_mitmweb_marks_a_blocked_and_a_rewritten_flow_and_leaves_an_allowed_one():
    from mitmproxy.test import tflow

    from guardian_proxy.mitm.blocking import apply_decision

    f = tflow.tflow()
    f.request.headers["sec-fetch-dest"] = "image"
    f.request.headers["sec-fetch-mode"] = "no-cors"
    d = _decision("deny", [_email_span()])
    apply_decision(f, d)
    console.mark(f, _raw(), d)
    assert f.response.status_code == 200 and f.response.reason == "Blocked by guardian-proxy"  # the pixel
    assert f.marked == ":no_entry:" and f.comment == "guardian-proxy blocked: e-mail address to analytics"
    g = tflow.tflow()
    console.mark(g, _raw(), _decision("transform", [_email_span()], final_level=1))
    assert g.marked == ":pencil2:" and "rewrote (L1)" in g.comment
    h = tflow.tflow()
    console.mark(h, _raw(), _decision("allow"))
    assert h.marked == "" and h.comment == ""


def test_tell_marks_and_says_with_one_wording_of_the_reason(caplog, monkeypatch):
    from mitmproxy.test import tflow

    caplog.set_level(logging.DEBUG, logger="guardian_proxy.decisions")
    worded = []
    real = console.why
    monkeypatch.setattr(console, "why", lambda d: worded.append(d.id) or real(d))
    f, d = tflow.tflow(), _decision("deny", [_email_span()])
    console.tell(f, _raw(), d, ("127.0.0.1", 5000))
    assert worded == [d.id]  # once for the mark and the line
    assert f.comment == "guardian-proxy blocked: e-mail address to analytics"
    assert caplog.records[-1].getMessage().endswith("  blocked: e-mail address to analytics")
    g, allowed = tflow.tflow(), _decision("allow")
    console.tell(g, _raw(), allowed, standalone=True)
    assert g.comment == "" and caplog.records[-1].getMessage().endswith("  allowed")


@pytest.mark.parametrize("spec, said", [
    ("upstream_certs=false", "--set upstream_certs=false: no option 'upstream_certs' (did you mean upstream_cert"),
    ("stream_large_bodies=xyz", "--set stream_large_bodies=xyz: Invalid stream_large_bodies specification"),
    ("http2=maybe", "--set http2=maybe: Boolean must be"),
    ("body_size_limit=12q", "--set body_size_limit=12q: Invalid body_size_limit"),
])
def test_a_bad_set_names_its_key(spec, said):
    from guardian_proxy.mitm.serve import check_sets

    with pytest.raises(GuardianError) as e:
        check_sets([spec])
    assert str(e.value).startswith(said), str(e.value)
    assert "\n" not in str(e.value)


def test_good_sets_pass_and_leave_no_log_handler():
    from guardian_proxy.mitm.serve import check_sets

    before = list(logging.getLogger().handlers)
    check_sets(["ignore_hosts=example.com", "termlog_verbosity=debug", "upstream_cert=false"])
    assert logging.getLogger().handlers == before


def test_the_dashboard_moves_off_a_taken_port():
    from guardian_proxy.mitm.app import dashboard_port_free

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        got = dashboard_port_free(port)
        assert got != port
        with socket.socket() as s:
            s.bind(("127.0.0.1", got))  # free indeed
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    assert dashboard_port_free(free) == free


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(PR_SET_NAME) is Linux's")
def test_a_worker_is_named_in_ps():
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    p = ctx.Process(target=_named_child, args=(child,), name="guardian-worker-0")
    p.start()
    try:
        pid, name = parent.recv()
        assert name in ("guardian wkr 1", "guardian-proxy: worker 1")
        assert Path(f"/proc/{pid}/comm").read_text().strip() == proctitle.comm(1)
    finally:
        parent.send("stop")
        p.join(30)


def _named_child(conn) -> None:
    import multiprocessing

    name = proctitle.name_worker((proctitle.worker_index(multiprocessing.current_process().name) or 0) + 1)
    conn.send((os.getpid(), name))
    conn.recv()


@pytest.mark.parametrize("user", ["alice", "jdoe", "tester", "me", "ubuntu", "jane.doe", "bob2024", "a_b"])
def test_console_masking_keeps_every_segment_of_a_path(user):
    """`/home/[USERNAME]/state` where `.local` was: only the user name may go, never a segment after it."""
    for tail in (".local/state/guardian-proxy/decisions.jsonl", ".mitmproxy/mitmproxy-ca-cert.pem",
                 ".config/guardian-proxy/config.yaml"):
        text = f"guardian-proxy: deciding every request; decision log /home/{user}/{tail}; dashboard http://x/"
        out = mask(text)
        assert out.endswith(f"/{tail}; dashboard http://x/"), out
        assert out.replace("[USERNAME]", user) == text, out

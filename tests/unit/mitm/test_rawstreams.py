"""Raw TCP/UDP hooks (guardian_proxy/mitm/rawstreams.py) driven in-process: a connection is decided on its
destination, each client message like an opaque body; the evaluator writes each message's one line when it carries
personal data, is not allowed, or was decided by a fail rule; binary messages that pass get none."""

from __future__ import annotations

from mitmproxy import tcp
from mitmproxy.test import taddons, tflow

from guardian_proxy.config import load_factor_tables, load_settings
from guardian_proxy.decision_log import DecisionLog, read
from guardian_proxy.failure import FailureRules
from guardian_proxy.mitm.hooks import GuardianAddon
from guardian_proxy.mitm.rawstreams import worth_a_line
from guardian_proxy.testing import run_hook
from guardian_proxy.types import Action, Decision


class StreamGateway:
    """Decides each raw message by its bytes: `personal` → allowed with contact data, `tracker` → denied,
    `broken` → a stage failed (the fail rules, with the contact tier found: open), anything else → allowed."""

    def __init__(self, tmp_path):
        self.settings = load_settings(state_dir=tmp_path)
        self.decision_log = DecisionLog(tmp_path / "decisions.jsonl")
        self.failures = FailureRules(load_factor_tables())
        self.agents = None

    def evaluate_inline(self, raw, ticket=None):
        return None

    def evaluate(self, raw, ticket=None, log=True, **kw):
        six = Action(domain="example.net", host=raw.host)
        if b"personal" in raw.body or b"broken" in raw.body:
            six.categories = {"contact": 1}
        if b"broken" in raw.body:
            return self.failures.decision(raw, "likelihood", RuntimeError("model"), six)
        kind = "deny" if b"tracker" in raw.body else "allow"
        return Decision(action=kind, six=six, explanation="by its bytes")

    def lines(self) -> list[dict]:
        return list(read(self.decision_log.path)) if self.decision_log.path.exists() else []


def _send(addon, flow, content: bytes):
    flow.messages.append(tcp.TCPMessage(True, content))
    run_hook(addon, "tcp_message", flow)
    return flow.messages[-1]


def test_worth_a_line():
    six = Action(domain="x", host="x")
    assert not worth_a_line(Decision(action="allow", six=six))
    assert worth_a_line(Decision(action="deny", six=six))
    assert worth_a_line(Decision(action="allow", six=Action(domain="x", host="x", categories={"contact": 1})))


def test_each_raw_message_gets_its_line_only_when_it_matters(tmp_path):
    gw = StreamGateway(tmp_path)
    with taddons.context():
        addon = GuardianAddon(gw)
        f = tflow.ttcpflow(messages=[])
        run_hook(addon, "tcp_start", f)  # the connection: one line, allowed
        assert f.client_conn.id not in addon._refused
        plain = _send(addon, f, b"\x00\x01binary that passes")
        assert plain.content == b"\x00\x01binary that passes"
        _send(addon, f, b"personal bytes")
        failed = _send(addon, f, b"broken bytes")
        assert failed.content == b"broken bytes"  # the contact tier fails open: it passes, and it is logged
        blocked = _send(addon, f, b"tracker bytes")
        assert blocked.content == b"" and f.client_conn.id in addon._refused
        later = _send(addon, f, b"personal again")
        assert later.content == b""  # the connection was refused: nothing more leaves
        addon.done()
    lines = gw.lines()
    assert [(x["action"], x.get("rule")) for x in lines] == [
        ("allow", None), ("allow", None), ("allow", "likelihood-error-fail-open"), ("deny", None)]
    assert [x["method"] for x in lines] == ["OPEN", "SEND", "SEND", "SEND"]

"""No raw value at rest on the error paths (R-NO-RAW-VALUE): a card number in a host name whose
upstream fails was written raw into the decision log and returned by the dashboard's API.

Every path that writes about a request: the decision log, the dashboard's API (snapshot, stats, each decision's
detail) and the console, for requests whose upstream fails to resolve (DNS), resets the connection, fails the TLS
handshake, whose evaluation passes its deadline, or whose worker died. The values are spelled with the separators
the recognisers did not read as one value (`4111.1111…`, `4111_1111…`, `4111--1111…`) in host labels and path
segments; the masking (guardian_proxy/logmask.py) reads such a run as one space and keeps what a checksum or a
fixed shape confirms.
"""

from __future__ import annotations

import json
import socket
import struct
import threading

import httpx
import pytest

from guardian_proxy.decision_log import record
from guardian_proxy.logmask import mask, mask_host
from guardian_proxy.types import RawRequest
from tests.test_log_canary import Canaries, _all_lines, _dashboard_reads, _scan_files

SEPARATORS = ("", "-", ".", "_", "--", "__", "-.")


# ------------------------------------------------------------------ the masking function


def test_a_card_spelled_with_any_separator_is_masked_in_a_host_and_a_path():
    c = Canaries(seed=261)
    for sep in SEPARATORS:
        card = c.card(f"sep{sep}", sep)
        for host in (f"{card}.pay.example.invalid", f"pay-{card}.example.invalid", f"x.{card}.t.example"):
            assert not c.leaks(mask_host(host), host), mask_host(host)
            assert "[CREDIT_CARD]" in mask_host(host) and "example" in mask_host(host)
        for text in (f"/checkout/{card}/pay", f"/checkout/{card}", f"card {card} declined"):
            assert not c.leaks(mask(text), text), mask(text)
            assert "[CREDIT_CARD]" in mask(text)


def test_ordinary_dotted_numbers_are_left_alone():
    for text in ("/v10.0.19045.3803/x", "/a/2024.01.15/b", "R 0.05 ≤ allow ceiling 0.10", "/app_1.2.3_4567/x",
                 "cdn-eu-3.example.net", "/img/1200_800_75.jpg", "/build/20240115.1234/x"):
        assert mask(text) == text and mask_host(text) == text


@pytest.mark.parametrize("stage", ["worker", "deadline", "extract"])
def test_a_failure_decision_masks_the_host_and_the_path(stage):
    from guardian_proxy.config import load_factor_tables
    from guardian_proxy.failure import FailureRules

    c = Canaries(seed=262)
    rules = FailureRules(load_factor_tables())
    for sep in SEPARATORS:
        host = f"{c.card(stage + 'h' + sep, sep)}.pay.example.invalid"
        url = f"http://{host}/{c.card(stage + 'p' + sep, sep)}/x?{c.card(stage + 'q' + sep, sep)}"
        req = RawRequest(method="POST", url=url, body=b"{}", headers=[("content-type", "application/json")])
        line = json.dumps(record(req, rules.decision(req, stage, None if stage == "deadline" else OSError())))
        assert not c.leaks(line, stage), line


# ------------------------------------------------------------------ end to end


class _Resetter:
    """An upstream that reads what comes, then resets the connection (RST): an HTTP request gets a reset, a TLS
    handshake fails."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            try:
                conn.settimeout(5)
                conn.recv(65536)
            except OSError:
                pass
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    def close(self):
        self.sock.close()


def _send(px, c: Canaries, kind: str, schemes=("http", "https"), text: str | None = None) -> dict[str, object]:
    """A GET per separator and scheme with a card in the host and the path; with `text`, a POST carrying it."""
    out: dict[str, object] = {}
    with httpx.Client(proxy=px.url, timeout=60, verify=False, trust_env=False) as client:
        for sep in SEPARATORS:
            for scheme in schemes:
                label = f"{kind}-{scheme}-{sep or 'none'}"
                host = f"{c.card(label, sep)}.pay.example.invalid"
                url = f"{scheme}://{host}/checkout/{c.card(label + '-path', sep)}"
                try:
                    out[label] = (client.get(url) if text is None else client.post(url, json={"notes": text})).status_code
                except httpx.HTTPError as e:
                    out[label] = type(e).__name__
    return out


def _leaks(c: Canaries, px) -> list[str]:
    dash = _dashboard_reads(px.dashboard_url, [x["id"] for x in _all_lines(px.log_path)])
    found, _ = _scan_files(c, [px.state_dir, px.confdir])
    found += c.leaks(px.output.read_bytes(), "proxy output")
    for path, body in dash.items():
        found += c.leaks(body, f"dashboard {path}")
    return found


@pytest.mark.slow
def test_e2e_failed_upstreams_leave_no_card_in_the_log_dashboard_or_console(tmp_path):
    from tests.support.hostile import write_config
    from tests.support.proxy_process import start_proxy

    c = Canaries(seed=263)
    # DNS: `.invalid` never resolves (RFC 2606), with or without a network
    (tmp_path / "dns").mkdir()
    cfg = write_config(tmp_path / "dns")
    px = start_proxy(tmp_path / "dns", None, extra=["--config", str(cfg)], dashboard=True)
    try:
        dns = _send(px, c, "dns")
        found = _leaks(c, px)
    finally:
        px.stop()
    assert set(dns.values()) == {502}, dns
    assert "flow error" in px.output.read_text()
    lines = _all_lines(px.log_path)
    assert len(lines) == len(dns) and all("[CREDIT_CARD]" in x["host"] for x in lines), lines

    # a reset and a failed TLS handshake, each decided at the evaluation deadline (fail rules) or normally
    up = _Resetter()
    for run, limits in (("reset", {}), ("deadline", {"eval_timeout_s": 0.001})):
        (tmp_path / run).mkdir()
        cfg = write_config(tmp_path / run, **limits)
        px = start_proxy(tmp_path / run, up.port, extra=["--config", str(cfg)], dashboard=True)
        try:
            # at the deadline: 40 KB of text to read makes evaluation outlast 1 ms whatever the machine's speed (a
            # card in a host and a path alone is decided well inside it now)
            got = _send(px, c, run, text=None if run == "reset" else
                        "The meeting with the regional team moved to Thursday afternoon. " * 640)
            found += _leaks(c, px)
        finally:
            px.stop()
        assert set(got.values()) <= {502, 403}, got
        lines = _all_lines(px.log_path)
        assert len(lines) == len(got), lines
        if run == "deadline":
            rules = [(x.get("rule"), x["host"]) for x in lines]
            assert all((r or "").startswith("deadline-error") for r, _ in rules), rules
    up.close()
    assert len(c.values) >= 5 * len(SEPARATORS)
    assert not found, "raw values written down:\n" + "\n".join(found)

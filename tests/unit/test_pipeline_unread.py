"""The unparsed rule: a body that could hold anything never reaches a tracker, an unknown third party or an AI
service unless it is a file of a known format or a protocol's own binary (pipeline.unread_blocked)."""

from __future__ import annotations

import os

import pytest

from guardian_proxy.types import RawRequest

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + os.urandom(200)
OPAQUE = b"\x8a\x01\xfe" + os.urandom(300)


def _post(url: str, body: bytes, ctype: str = "application/octet-stream") -> RawRequest:
    return RawRequest(method="POST", url=url, body=body, headers=[("content-type", ctype)])


@pytest.mark.parametrize("url", ["https://collector.unknown-example.net/in", "https://api.openai.com/v1/x",
                                 "https://www.google-analytics.com/g/collect"])
def test_opaque_bytes_to_parties_outside_the_users_flows_are_blocked(gateway, url):
    d = gateway.evaluate(_post(url, OPAQUE))
    assert d.action == "deny" and d.rule == "unparsed-high-risk", d.explanation


@pytest.mark.parametrize("body, ctype", [(PNG, "image/png"), (b"0\x82\x01\x0b0\x81\xa4", "application/ocsp-request"),
                                         (b"\x00\x00\x01\x00\x00\x01", "application/dns-message")])
def test_files_and_protocol_binaries_pass(gateway, body, ctype):
    d = gateway.evaluate(_post("https://uploads.unknown-example.net/put", body, ctype))
    assert d.action == "allow", d.explanation


def test_opaque_bytes_to_a_service_of_the_users_own_flows_pass(gateway):
    d = gateway.evaluate(_post("https://s3.amazonaws.com/bucket/key", OPAQUE))
    assert d.action == "allow", d.explanation


def test_padding_past_the_size_limit_does_not_hide_the_start(gateway):
    limit = gateway.settings.limits.max_body_bytes
    body = b'{"email":"jane.doe@example.com","pad":"' + b"A" * (limit + 10) + b'"}'
    d = gateway.evaluate(_post("https://collector.unknown-example.net/in", body, "application/json"))
    assert d.action == "deny"

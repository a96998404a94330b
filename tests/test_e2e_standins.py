"""End to end through a real `guardian-proxy run`: a tracker payload rewritten keeps its format and carries only
stand-ins no one holds (docs/design/anonymization.md).

The payload is what analytics SDKs send: gzip-compressed JSON with no Content-Encoding header (the `gz=1` query
parameter says so), holding an e-mail, UUID device and anonymous ids, a phone and numeric values. A user rule
sets level 4 for the analytics host, so the request is rewritten rather than blocked."""

import gzip
import json
import uuid

import httpx
import pytest
import yaml

from guardian_proxy import standins
from tests.support.proxy_process import start_proxy
from tests.support.upstream import start_upstream

pytestmark = pytest.mark.slow

DEVICE = "71a50811-3f2e-4c1d-9b2a-0123456789ab"
ANON = "0B1C9E2F-5A6D-4E7F-8A9B-C0D1E2F3A4B5"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    d = tmp_path_factory.mktemp("standins")
    cfg = d / "config.yaml"
    cfg.write_text(yaml.safe_dump({"detector": {"ner": False},
                                   "overrides": [{"action": "level", "domain": "google-analytics.com", "level": 4}]}))
    up = start_upstream()
    px = start_proxy(d, up.port, extra=["--config", str(cfg), "--dashboard-port", "0"])
    yield up, px
    px.stop()
    up.close()


def _payload() -> dict:
    return {"event": "page_view", "user": {"email": "homary@yahoo.com"}, "device_id": DEVICE, "anonymous_id": ANON,
            "value": 52.123, "count": 3, "phone": 15128675309}


def test_a_sniffed_gzip_tracker_payload_is_rewritten_in_its_format_with_stand_ins_no_one_holds(env):
    up, px = env
    sent = gzip.compress(json.dumps(_payload()).encode())
    n = len(up.received)
    r = httpx.post("http://www.google-analytics.com/g/collect?v=2&gz=1", proxy=px.url, content=sent,
                   headers={"content-type": "text/plain;charset=UTF-8"}, timeout=120)
    assert r.status_code == 200
    got = up.received[n]
    assert "content-encoding" not in got.headers
    assert got.body[:2] == b"\x1f\x8b", "forwarded decompressed"  # gzip in, gzip out
    assert int(got.headers["content-length"]) == len(got.body)
    data = json.loads(gzip.decompress(got.body))
    assert set(data) == set(_payload())
    email = data["user"]["email"]
    assert email != "homary@yahoo.com" and standins.is_reserved_email(email)
    for key, orig in (("device_id", DEVICE), ("anonymous_id", ANON)):
        u = uuid.UUID(data[key])  # a valid UUID, same version and variant, same case
        assert u.version == 4 and u.variant == uuid.RFC_4122
        assert data[key] == str(u).upper() if orig.isupper() else data[key] == str(u)
    assert isinstance(data["value"], float) and isinstance(data["count"], int)  # JSON numbers stay numbers
    assert isinstance(data["phone"], int)
    assert data["phone"] == 15128675309 or str(data["phone"])[-7:-2] == "55501"  # a fiction-range number
    raw = got.body + gzip.decompress(got.body)
    assert b"homary" not in raw and b"yahoo" not in raw


def test_nothing_to_rewrite_leaves_the_sniffed_gzip_body_byte_for_byte(env):
    up, px = env
    sent = gzip.compress(json.dumps({"event": "scroll", "depth": 75, "t": 1.25}).encode(), mtime=0)
    n = len(up.received)
    r = httpx.post("http://www.google-analytics.com/g/collect?v=2&gz=1", proxy=px.url, content=sent,
                   headers={"content-type": "text/plain;charset=UTF-8"}, timeout=120)
    assert r.status_code == 200
    assert up.received[n].body == sent


def test_a_sniffed_gzip_chat_turn_rewritten_by_the_session_goes_back_gzip(env):
    """The session stage serialises the chat body it rewrote without knowing it came compressed: it went upstream
    decompressed (seen with chatgpt.com's `gz=1` endpoint). It leaves gzip, with stand-ins no one holds."""
    up, px = env
    chat = {"model": "gpt-4o", "messages": [
        {"role": "user", "content": "Write to homary@yahoo.com or call +44 7911 123456 about my order."}]}
    sent = gzip.compress(json.dumps(chat).encode())
    n = len(up.received)
    r = httpx.post("http://api.openai.com/v1/chat/completions?gz=1", proxy=px.url, content=sent,
                   headers={"content-type": "application/json", "authorization": "Bearer sk-test"}, timeout=120)
    assert r.status_code == 200
    got = up.received[n]
    assert got.body[:2] == b"\x1f\x8b", "forwarded decompressed"
    text = json.loads(gzip.decompress(got.body))["messages"][0]["content"]
    assert "homary" not in text and "7911 123456" not in text
    assert "@example." in text and "+44 7700 900" in text

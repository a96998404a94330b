"""A blocked call's CORS preflight is answered by the proxy, granting what it asked for when that is plain HTTP
tokens, for its origin only and never cached (in-process; the real browser is in tests/test_e2e_preflight.py)."""

from mitmproxy.test import tflow

from guardian_proxy.mitm.blocking import blocked_response
from guardian_proxy.testing import decision

ORIGIN = "https://shop.example"


def _preflight(method: str, headers: str):
    f = tflow.tflow()
    f.request.method = "OPTIONS"
    f.request.headers.clear()
    f.request.headers.update({"origin": ORIGIN, "sec-fetch-mode": "cors", "access-control-request-method": method,
                              "access-control-request-headers": headers})
    return blocked_response(decision("deny", host="t.example"), f)


def test_the_grant_is_what_was_asked_for_its_origin_never_cached():
    r = _preflight("POST", "content-type, x-client-id")
    assert r.status_code == 204 and r.headers["x-guardian-blocked"] == "preflight"
    assert r.headers["access-control-allow-origin"] == ORIGIN and r.headers["access-control-max-age"] == "0"
    assert r.headers["access-control-allow-methods"] == "POST"
    assert r.headers["access-control-allow-headers"] == "content-type, x-client-id"


def test_what_is_no_token_list_is_not_granted():
    r = _preflight("PO ST", "content-type, x-id;evil=1")
    assert r.status_code == 204
    assert "access-control-allow-methods" not in r.headers and "access-control-allow-headers" not in r.headers

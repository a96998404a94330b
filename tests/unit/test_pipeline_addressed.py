"""Who addressed whom (R-ADDRESSED), through the real Gateway: the verdict follows who made the request and
who the destination is, not browser headers that tools never send; the explanation does not claim a page made
it."""

import base64
import json

import pytest

from guardian_proxy.types import RawRequest

pytestmark = pytest.mark.slow  # loads Presidio + spaCy

CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
FORM = "application/x-www-form-urlencoded"
LOGIN = "email=maria.lindqvist%40example.com&password=Tr0ub4dor%263-horse"
CONTACT = "name=Maria+Lindqvist&email=maria.lindqvist%40example.com&phone=%2B46+70+123+45+67&message=Where+is+my+order"


def req(method, url, body=b"", **h):
    return RawRequest(method=method, url=url, headers=[(k.replace("_", "-"), v) for k, v in h.items()],
                      body=body.encode() if isinstance(body, str) else body)


@pytest.mark.parametrize("ua", ["curl/8.5.0", "python-httpx/0.27.0", "node", None])
def test_login_from_the_users_own_client_follows_the_own_sign_in_norm(gateway, ua):
    h = {"content_type": FORM} | ({"user_agent": ua} if ua else {})
    d = gateway.evaluate(req("POST", "https://www.shop-example.com/login", LOGIN, **h), log=False)
    assert d.action == "allow" and d.rewrite is None
    assert d.six.recipient == "first_party" and d.six.site is None  # no page: Action.site stays None
    assert {"addressed", "no_page"} <= set(d.six.flags)
    assert d.extra.get("norm") == "own_sign_in"
    assert "the page made" not in d.explanation and "no page made" in d.explanation
    assert "an unknown third party" not in d.explanation


def test_contact_form_from_httpx_passes_and_from_a_browser_too(gateway):
    d = gateway.evaluate(req("POST", "https://www.shop-example.com/contact", CONTACT, content_type=FORM,
                             user_agent="python-httpx/0.27.0"), log=False)
    assert d.action == "allow" and d.extra.get("norm") == "own_function"
    browser = gateway.evaluate(req("POST", "https://www.shop-example.com/contact", CONTACT, content_type=FORM,
                                   origin="https://www.shop-example.com", sec_fetch_site="same-origin",
                                   sec_fetch_mode="navigate", sec_fetch_dest="document", sec_fetch_user="?1"),
                               log=False)
    assert browser.action == "allow"


def test_the_same_email_from_httpx_to_a_tracker_is_not_let_out(gateway):
    for url, body in (("https://www.google-analytics.com/collect", "v=1&tid=UA-1-1&cid=1.2&t=event&uid="
                       "maria.lindqvist%40example.com"),
                      ("https://api.segment.io/v1/identify", json.dumps({"userId": "u1", "traits": {
                          "email": "maria.lindqvist@example.com"}}))):
        d = gateway.evaluate(req("POST", url, body, user_agent="python-httpx/0.27.0",
                                 content_type=FORM if "collect" in url else "application/json"), log=False)
        assert d.six.recipient == "analytics" and "addressed" not in d.six.flags
        assert d.action == "deny" or (d.action == "transform" and b"maria.lindqvist" not in d.rewrite.body)


def test_a_phone_apps_sdk_is_not_the_users_addressee(gateway):
    d = gateway.evaluate(req("POST", "https://device-api.sdk-vendor-example.com/api/named_users/associate",
                             json.dumps({"named_user_id": "maria.lindqvist@example.com"}),
                             content_type="application/json", user_agent="Dalvik/2.1.0 (Linux; U; Android 14)"),
                         log=False)
    assert d.six.recipient == "unknown_third_party" and d.action in ("transform", "deny")


def test_developer_build_reloaded_over_plain_http_is_not_blocked(gateway):
    claims = base64.urlsafe_b64encode(json.dumps({"email": "maria.lindqvist@example.com"}).encode()).decode()
    jwt = "eyJhbGciOiJIUzI1NiJ9." + claims.rstrip("=") + ".c2lnbmF0dXJlc2lnbmF0dXJl"
    cookie = f"session={jwt}; user_email=maria.lindqvist%40example.com"
    for url in ("http://dev.shop-example.com:3000/account", "http://localhost:5173/account",
                "http://192.168.1.20:8080/account"):
        d = gateway.evaluate(req("GET", url, cookie=cookie, user_agent=CHROME, accept="text/html",
                                 upgrade_insecure_requests="1"), log=False)
        assert d.action == "allow" and d.six.recipient == "first_party", (url, d.explanation)


def test_site_family_keeps_the_pages_own_cookies_and_tokens(gateway):
    d = gateway.evaluate(req("GET", "https://api.twitter.com/1.1/account/settings.json", origin="https://x.com",
                             referer="https://x.com/home", sec_fetch_site="cross-site", sec_fetch_mode="cors",
                             sec_fetch_dest="empty", user_agent=CHROME,
                             cookie="auth_token=4f2a9c1e8b7d6a5f4f2a9c1e8b7d6a5f4f2a9c1e; secure_session=true"),
                         log=False)
    assert d.action == "allow" and d.six.recipient == "first_party" and d.rewrite is None
    token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ0Ml8xMjM0NSJ9.c2lnbmF0dXJlc2lnbmF0dXJlc2ln"
    d = gateway.evaluate(req("POST", "https://matrix.redditspace.com/_matrix/client/v3/login",
                             json.dumps({"type": "com.reddit.token", "token": token}), content_type="application/json",
                             origin="https://chat.reddit.com", sec_fetch_site="cross-site", sec_fetch_mode="cors",
                             sec_fetch_dest="empty", user_agent=CHROME), log=False)
    assert d.action == "allow" and d.six.recipient == "first_party" and "unknown third party" not in d.explanation


def test_analytics_endpoint_on_an_ai_host_is_a_tracker_not_a_chat_turn(gateway):
    body = json.dumps({"event": "Page Viewed", "userId": "user-abc", "properties": {
        "email": "maria.lindqvist@example.com"}})
    d = gateway.evaluate(req("POST", "https://chatgpt.com/ces/v1/t", body, content_type="application/json",
                             origin="https://chatgpt.com", sec_fetch_site="same-origin", sec_fetch_mode="cors",
                             sec_fetch_dest="empty", user_agent=CHROME), log=False)
    assert d.six.recipient == "analytics" and d.rule != "chat-session" and "chat with" not in d.explanation
    assert d.action == "deny" or b"maria.lindqvist" not in (d.rewrite.body if d.rewrite else b"")
    turn = json.dumps({"action": "next", "messages": [{"id": "1", "author": {"role": "user"}, "content": {
        "content_type": "text", "parts": ["What is the capital of France?"]}}], "model": "auto"})
    d = gateway.evaluate(req("POST", "https://chatgpt.com/backend-api/f/conversation", turn,
                             content_type="application/json", origin="https://chatgpt.com",
                             sec_fetch_site="same-origin", sec_fetch_mode="cors", sec_fetch_dest="empty",
                             user_agent=CHROME), log=False)
    assert d.six.recipient == "ai_service"

"""SigV4 re-signing of rewritten requests: a request signed by botocore (and by a real boto3 client), its body
changed, signed again by `sigv4.resign` with the proxy's credentials from botocore's standard chain; the new
signature checked by an independent computation from the specification (tests/support/bedrock_server.verify)
and by botocore again; the old one no longer matches. Credentials come only from the test's environment."""

import datetime
import json

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from guardian_proxy import sigv4
from tests.support import bedrock_server as srv

URL = f"https://{srv.HOST}/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse"
BODY = json.dumps({"messages": [{"role": "user", "content": [{"text": "I am Ann Lee"}]}]}).encode()
NEW = json.dumps({"messages": [{"role": "user", "content": [{"text": "I am Bo Diaz, longer"}]}]}).encode()


@pytest.fixture
def aws_env(tmp_path, monkeypatch):
    """The proxy's credentials: the test keys in the environment, every AWS file an empty temp file."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                 "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "config").write_text("")
    (tmp_path / "credentials").write_text("")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", srv.ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", srv.SECRET_KEY)
    monkeypatch.setenv("AWS_DEFAULT_REGION", srv.REGION)
    sigv4.reset()
    yield tmp_path
    sigv4.reset()


def client_signed(body: bytes = BODY, token: str | None = None, extra: dict | None = None) -> list[tuple[str, str]]:
    """Headers as a botocore client sends them (signed with the test keys, yesterday: resign must re-date)."""
    req = AWSRequest(method="POST", url=URL, data=body,
                     headers={"Content-Type": "application/json", **(extra or {})})
    creds = Credentials(srv.ACCESS_KEY, srv.SECRET_KEY, token)
    import botocore.auth

    old = botocore.auth.get_current_datetime
    botocore.auth.get_current_datetime = lambda: datetime.datetime.now(datetime.UTC).replace(tzinfo=None) - \
        datetime.timedelta(days=1)
    try:
        SigV4Auth(creds, "bedrock", srv.REGION).add_auth(req)
    finally:
        botocore.auth.get_current_datetime = old
    return [("Host", srv.HOST), *((k, v.decode() if isinstance(v, bytes) else v) for k, v in req.headers.items()),
            ("User-Agent", "Boto3/1.x"), ("Content-Length", str(len(body)))]


def applied(headers: list[tuple[str, str]], new: dict[str, str], body: bytes) -> dict[str, list[str]]:
    """The headers as the request leaves: `new` set (replacing), Content-Length the new body's."""
    out: dict[str, list[str]] = {}
    for k, v in headers:
        out.setdefault(k.lower(), []).append(v)
    for k, v in new.items():
        out[k.lower()] = [v]
    out["content-length"] = [str(len(body))]
    return out


def path_of(url: str) -> str:
    return url.split(srv.HOST, 1)[1]


def botocore_recomputed(hdrs: dict[str, list[str]], body: bytes) -> str:
    """botocore's signature over the same request, at the request's own X-Amz-Date (an independent signer
    instance with the same credentials)."""
    info = sigv4.parse_authorization(hdrs["authorization"][0])
    signer = SigV4Auth(Credentials(srv.ACCESS_KEY, srv.SECRET_KEY, (hdrs.get("x-amz-security-token") or [None])[0]),
                       info["service"], info["region"])
    req = AWSRequest(method="POST", url=URL, data=body,
                     headers={n: ",".join(hdrs[n]) for n in info["signed_headers"]})
    req.context["timestamp"] = hdrs["x-amz-date"][0]
    return signer.signature(signer.string_to_sign(req, signer.canonical_request(req)), req)


def test_signed_detects_sigv4():
    assert sigv4.signed(client_signed())
    assert sigv4.signed({"authorization": "AWS4-HMAC-SHA256 Credential=a/b/c/d/aws4_request, SignedHeaders=host, "
                                          "Signature=00"})
    assert not sigv4.signed([("Authorization", "Bearer ABSK-bedrock-api-key")])
    assert not sigv4.signed([("Content-Type", "application/json")])


def test_resign_after_a_rewrite_is_right_and_the_old_signature_is_not(aws_env):
    headers = client_signed()
    assert srv.verify("POST", path_of(URL), applied(headers, {}, BODY), BODY) is None  # the client's own: right
    assert srv.verify("POST", path_of(URL), applied(headers, {}, NEW), NEW)[0] == "InvalidSignatureException"
    new = sigv4.resign("POST", URL, headers, NEW)
    assert set(new) == {"Authorization", "X-Amz-Date"}
    hdrs = applied(headers, new, NEW)
    assert srv.verify("POST", path_of(URL), hdrs, NEW) is None
    info = sigv4.parse_authorization(new["Authorization"])
    assert info["signature"] == botocore_recomputed(hdrs, NEW)
    assert info["signed_headers"] == ["content-type", "host", "x-amz-date"]  # the client's set
    assert (info["access_key"], info["region"], info["service"]) == (srv.ACCESS_KEY, srv.REGION, "bedrock")
    assert new["X-Amz-Date"][:8] == datetime.datetime.now(datetime.UTC).strftime("%Y%m%d")  # signed now
    assert srv.verify("POST", path_of(URL), applied(headers, new, BODY), BODY)[0] == "InvalidSignatureException"


def test_resign_keeps_extra_signed_headers_content_sha_and_session_token(aws_env, monkeypatch):
    monkeypatch.setenv("AWS_SESSION_TOKEN", "session-token-xyz")
    sigv4.reset()
    headers = client_signed(token="session-token-xyz", extra={"X-Amz-Content-SHA256": "0" * 64,
                                                              "amz-sdk-invocation-id": "abc"})
    new = sigv4.resign("POST", URL, headers, NEW)
    assert new["X-Amz-Security-Token"] == "session-token-xyz"
    import hashlib

    assert new["X-Amz-Content-Sha256"] == hashlib.sha256(NEW).hexdigest()
    hdrs = applied(headers, new, NEW)
    assert srv.verify("POST", path_of(URL), hdrs, NEW) is None
    assert sigv4.parse_authorization(new["Authorization"])["signed_headers"] == [
        "amz-sdk-invocation-id", "content-type", "host", "x-amz-content-sha256", "x-amz-date", "x-amz-security-token"]


def test_a_real_boto3_request_resigned(aws_env):
    import boto3

    sent = {}

    def capture(request, **kw):
        sent.update(url=request.url, body=request.body, headers=[
            (k, v.decode() if isinstance(v, bytes) else v) for k, v in request.headers.items()])
        raise _Sent()

    c = boto3.client("bedrock-runtime", region_name=srv.REGION)
    c.meta.events.register("before-send", capture)
    with pytest.raises(_Sent):
        c.converse(modelId="anthropic.claude-3-haiku-20240307-v1:0",
                   messages=[{"role": "user", "content": [{"text": "I am Ann Lee"}]}])
    headers = [("Host", srv.HOST), *sent["headers"]]
    assert srv.verify("POST", path_of(sent["url"]), applied(headers, {}, sent["body"]), sent["body"]) is None
    new = sigv4.resign("POST", sent["url"], headers, NEW)
    assert srv.verify("POST", path_of(sent["url"]), applied(headers, new, NEW), NEW) is None


class _Sent(Exception):
    pass


def test_no_credentials_or_another_key_cannot_resign(aws_env, monkeypatch):
    headers = client_signed()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAOTHERKEY99999999")
    sigv4.reset()
    with pytest.raises(sigv4.CannotResign) as e:
        sigv4.resign("POST", URL, headers, NEW)
    assert "AKIA…9999" in str(e.value) and "AKIA…EST1" in str(e.value) and "AWS_ACCESS_KEY_ID" in str(e.value)
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    sigv4.reset()
    with pytest.raises(sigv4.CannotResign) as e:
        sigv4.resign("POST", URL, headers, NEW)
    assert "needs AWS credentials" in e.value.reason and "AWS_SECRET_ACCESS_KEY" in e.value.reason
    with pytest.raises(sigv4.CannotResign):
        sigv4.resign("POST", URL, [("Authorization", "Bearer x")], NEW)


def test_credentials_from_a_shared_credentials_profile(aws_env, monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    (aws_env / "credentials").write_text(
        f"[work]\naws_access_key_id = {srv.ACCESS_KEY}\naws_secret_access_key = {srv.SECRET_KEY}\n")
    monkeypatch.setenv("AWS_PROFILE", "work")
    sigv4.reset()
    headers = client_signed()
    new = sigv4.resign("POST", URL, headers, NEW)
    assert srv.verify("POST", path_of(URL), applied(headers, new, NEW), NEW) is None

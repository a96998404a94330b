"""AWS Signature Version 4 for requests the proxy rewrote (Bedrock Runtime, and any other AWS API).

A SigV4 signature covers the body's SHA-256, so a pseudonymised body no longer matches the client's
signature and AWS answers 403 InvalidSignatureException. `resign` signs the rewritten request again with
the proxy's own AWS credentials, found by botocore's standard chain (AWS_ACCESS_KEY_ID /
AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, AWS_PROFILE, ~/.aws/credentials and ~/.aws/config, SSO,
container and instance roles), for the service and region the client's credential scope names, over the
headers the client signed (as far as botocore signs them: it never signs User-Agent, Expect, …).

Stated rules: the proxy signs only as the identity the client already used — the access key id in the
client's `Credential=` must be the proxy's — so it never lends its own credentials to another identity;
when it cannot sign (no credentials, another key, a malformed Authorization header) `CannotResign` says
what to configure and the caller must not send the request with a signature that no longer matches.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

ALGORITHM = "AWS4-HMAC-SHA256"
UNSIGNED = ("UNSIGNED-PAYLOAD", "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
_AUTH = re.compile(r"Credential=([^,\s]+)\s*,\s*SignedHeaders=([^,\s]+)\s*,\s*Signature=([0-9a-fA-F]+)")
#: set by botocore itself (or recomputed here); never copied from the original request
_OWN = frozenset({"authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256", "date"})
_CACHE_S = 60.0

_lock = threading.Lock()
_cache: tuple[float, object] | None = None


class CannotResign(Exception):
    """The rewritten request cannot be signed again; `reason` says why and what to configure."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _items(headers) -> list[tuple[str, str]]:
    if isinstance(headers, Mapping):
        return [(str(k), str(v)) for k, v in headers.items()]
    if hasattr(headers, "items") and not isinstance(headers, list | tuple):
        return [(str(k), str(v)) for k, v in headers.items(multi=True)]  # mitmproxy Headers
    return [(str(k), str(v)) for k, v in headers]


def _get(headers: Iterable[tuple[str, str]], name: str) -> str | None:
    name = name.lower()
    return next((v for k, v in headers if k.lower() == name), None)


def signed(headers) -> bool:
    """Does this request carry a SigV4 Authorization header?"""
    auth = _get(_items(headers), "authorization")
    return bool(auth) and auth.strip().startswith(ALGORITHM)


def parse_authorization(value: str) -> dict:
    """{access_key, date, region, service, signed_headers, signature} of a SigV4 Authorization header."""
    m = _AUTH.search(value or "")
    if not value or not value.strip().startswith(ALGORITHM) or m is None:
        raise CannotResign("the request's Authorization header is not an AWS SigV4 signature the proxy can read")
    scope = m.group(1).split("/")
    if len(scope) != 5 or scope[4] != "aws4_request":
        raise CannotResign(f"the request's SigV4 credential scope {'/'.join(scope[1:])!r} is not understood")
    return {"access_key": scope[0], "date": scope[1], "region": scope[2], "service": scope[3],
            "signed_headers": m.group(2).lower().split(";"), "signature": m.group(3)}


def credentials(refresh: bool = False):
    """The proxy's AWS credentials (botocore's standard chain, looked up at most once a minute), frozen;
    None when none are configured."""
    global _cache
    with _lock:
        now = time.monotonic()
        if refresh or _cache is None or now - _cache[0] > _CACHE_S:
            import botocore.session

            try:
                _cache = (now, botocore.session.get_session().get_credentials())
            except Exception as e:  # a broken profile: say so rather than sign with nothing
                raise CannotResign(f"the proxy's AWS configuration could not be read ({type(e).__name__}: {e}); "
                                   "fix ~/.aws/config or AWS_PROFILE") from e
        creds = _cache[1]
    return creds.get_frozen_credentials() if creds is not None else None


def reset() -> None:
    """Forget the cached credentials (tests; after the configuration changed)."""
    global _cache
    with _lock:
        _cache = None


def _mask(key: str) -> str:
    return key[:4] + "…" + key[-4:] if len(key) > 8 else key


def resign(method: str, url: str, headers: list[tuple[str, str]], body: bytes) -> dict[str, str]:
    """The headers to set on a rewritten request (`url` as sent, its path still percent-encoded; `headers`
    as they will leave, `body` the bytes that will leave) so its SigV4 signature is right again:
    Authorization, X-Amz-Date (or Date when the client signed with Date), X-Amz-Security-Token when the
    credentials have one, X-Amz-Content-Sha256 when the request had it. Raises CannotResign."""
    from botocore.auth import S3SigV4Auth, SigV4Auth
    from botocore.awsrequest import AWSRequest

    items = _items(headers)
    info = parse_authorization(_get(items, "authorization") or "")
    creds = credentials()
    if creds is None or not creds.access_key or not creds.secret_key:
        raise CannotResign(
            f"the proxy rewrote a signed AWS request ({info['service']}, {info['region']}) and needs AWS "
            "credentials to sign it again: give the proxy the same credentials as the client — "
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) in its environment, or "
            "AWS_PROFILE / ~/.aws/credentials")
    if creds.access_key != info["access_key"]:
        raise CannotResign(
            f"the request was signed with AWS access key {_mask(info['access_key'])} but the proxy's "
            f"credentials are for {_mask(creds.access_key)}: the proxy signs only as the client's own identity; "
            "give the proxy the client's credentials (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / "
            "AWS_SESSION_TOKEN, or AWS_PROFILE)")
    body = body or b""
    names = set(info["signed_headers"]) | {"host"}
    chosen: dict[str, str] = {}
    for name in sorted(names - _OWN):
        if name == "content-length":
            chosen["Content-Length"] = str(len(body))
            continue
        values = [v for k, v in items if k.lower() == name]
        if values:
            chosen[name] = ",".join(values)
    if "host" not in chosen:  # HTTP/2: the authority stands for the Host header
        chosen["host"] = urlsplit(url).netloc
    original_sha = _get(items, "x-amz-content-sha256")
    sha = None
    if original_sha is not None:
        sha = original_sha if original_sha in UNSIGNED else hashlib.sha256(body).hexdigest()
        chosen["X-Amz-Content-SHA256"] = sha
    use_date = "date" in names and "x-amz-date" not in names and _get(items, "date") is not None
    if use_date:
        chosen["Date"] = _get(items, "date") or ""
    req = AWSRequest(method=method.upper(), url=url, data=body, headers=chosen)
    signer = (S3SigV4Auth if info["service"] == "s3" else SigV4Auth)(creds, info["service"], info["region"])
    try:
        signer.add_auth(req)
    except Exception as e:
        raise CannotResign(f"the request could not be signed again ({type(e).__name__}: {e})") from e
    out = {"Authorization": req.headers["Authorization"]}
    if use_date:
        out["Date"] = req.headers["Date"]
    else:
        out["X-Amz-Date"] = req.headers["X-Amz-Date"]
    if creds.token:
        out["X-Amz-Security-Token"] = creds.token
    if sha is not None:
        out["X-Amz-Content-Sha256"] = req.headers.get("X-Amz-Content-SHA256", sha)
    return out

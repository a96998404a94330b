"""Learning while browsing: a privacy-policy page the pipeline wants (stage 2, `Gateway.wants_policy`) is kept
within `limits.max_inspected_response_bytes` (streamed with a `Tee`, or held by mitmproxy) and handed to
`Gateway.learn_policy` on a one-thread pool of its own, never the event loop."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

from mitmproxy import http

from .. import codec
from ..response_bodies import Tee
from .flows import content_length, real_url

log = logging.getLogger("guardian_proxy")

MAX_POLICY_PAGE_BYTES = 4 * 1024 * 1024  # wire bytes of a privacy-policy page the proxy will learn from
LEARN_QUEUE = 8  # policy pages waiting to be learned; a burst beyond it is dropped rather than queued without bound


def charset_of(content_type: str) -> str:
    """The `charset` parameter of a Content-Type (utf-8 when it has none)."""
    charset = "utf-8"
    for part in content_type.split(";")[1:]:
        k, _, v = part.strip().partition("=")
        if k.lower() == "charset" and v:
            charset = v.strip('"\' ')
    return charset


class Learning:
    """`GuardianAddon`'s policy learning (a mixin of mitm/hooks.py `GuardianAddon`): `gateway`, `limits`,
    `learn_pool` and `_learn_queued` are the addon's."""

    def _policy_tee(self, flow: http.HTTPFlow) -> Tee | None:
        """A privacy-policy page (stage 2 learns from it): streamed, with a copy of at most the bound kept for
        learning once it has ended; None for any other response."""
        r, resp = flow.request, flow.response
        if r.method != "GET" or resp.status_code != 200:
            return None
        wants = getattr(self.gateway, "wants_policy", None)
        url, ctype = flow.metadata.get("guardian_url") or real_url(flow), resp.headers.get("content-type", "")
        try:
            if wants is None or not wants(url, ctype):
                return None
        except Exception:
            return None
        limit, host, encoding = self.limits.max_inspected_response_bytes, r.host, resp.headers.get("content-encoding")

        def over() -> None:
            log.info("guardian: policy page on %s not learned: over the %d-byte cap", host, limit)

        n = content_length(flow.response)
        if n is not None and n > limit:
            over()
            return None
        return Tee(limit, lambda raw: self._queue_learn(url, ctype, encoding, raw), over)

    def _learn_from(self, flow: http.HTTPFlow) -> None:
        if not flow.response or flow.error or flow.request.method != "GET" or flow.response.status_code != 200:
            return
        wants = getattr(self.gateway, "wants_policy", None)
        url, ctype = flow.metadata.get("guardian_url") or real_url(flow), flow.response.headers.get("content-type", "")
        raw = flow.response.raw_content
        try:
            if not raw or wants is None or not wants(url, ctype):
                return
        except Exception:
            return
        limit = self.limits.max_inspected_response_bytes
        if len(raw) > limit:
            log.info("guardian: policy page on %s not learned: %d bytes, over the %d-byte cap", flow.request.host,
                     len(raw), limit)
            return
        self._queue_learn(url, ctype, flow.response.headers.get("content-encoding"), raw)

    def _queue_learn(self, url: str, ctype: str, encoding: str | None, raw: bytes) -> None:
        """A policy page's body to stage 2's ingestion, on a one-thread pool of its own (never the event loop)."""
        if self.learn_pool is None:
            self.learn_pool = ThreadPoolExecutor(1, thread_name_prefix="guardian-learn")
        if self._learn_queued >= LEARN_QUEUE:  # a burst of policy pages: drop rather than queue without bound
            return
        self._learn_queued += 1
        try:
            self.learn_pool.submit(self._learn, url, ctype, encoding, raw)
        except RuntimeError:  # shutting down
            self._learn_queued -= 1

    def _learn(self, url: str, ctype: str, encoding: str | None, raw: bytes) -> None:
        try:
            body = codec.decode(raw, encoding, MAX_POLICY_PAGE_BYTES * 4)
            charset = charset_of(ctype)
            try:
                text = body.decode(charset, "replace")
            except LookupError:
                text = body.decode("utf-8", "replace")
            self.gateway.learn_policy(url, ctype, text)
        except Exception as e:  # an undecodable page is not learned; nothing else happens
            log.info("guardian: policy page not learned (%s)", type(e).__name__)
        finally:
            self._learn_queued -= 1


"""A session's chat replies (stage 7): surrogates back to real values and the agent guard on tool calls, on a
streamed answer (a de-masking stream callable), a whole one (held within the bound, de-masked in the pool or at
its end) and a chat WebSocket's server messages. Every other response streams untouched (`responseheaders`)."""

from __future__ import annotations

import asyncio
import logging

from mitmproxy import ctx, http

from .. import codec
from ..errors import BodyTooLarge
from ..response_bodies import Held
from .flows import content_length, is_stream

log = logging.getLogger("guardian_proxy")


def never_empty(stream):
    """mitmproxy sends whatever a stream callable returns as one HTTP/1 chunk, and an empty chunk is the
    chunked-encoding terminator: a callable that holds a whole input chunk back (a surrogate or a tool call
    not yet complete) must return no chunk at all, not b"" — else the client sees the response end early
    and reads the rest as garbage on its keep-alive connection."""

    def call(data: bytes):
        out = stream(data)
        return out if out else []

    return call


class Replies:
    """`GuardianAddon`'s reply hooks (a mixin of mitm/hooks.py `GuardianAddon`): `gateway`, `limits`, `pool`,
    `_ws_demask`, `_policy_tee` and `_learn_from` (mitm/learning.py) are the addon's."""

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        """Every response passes chunk by chunk as it arrives (never buffered whole), except the ones a stage
        reads, which are held within `limits.max_inspected_response_bytes` (README "Under load, faults and
        attack"):

        - a chat stream of a session passes through stage 7's de-masking callable; it decodes a compressed
          stream (bounded, session/stream.py), so the client gets it uncompressed;
        - a session's whole chat answer is de-masked once complete: with a Content-Length within the bound
          mitmproxy holds it and `response` de-masks it in the pool; without one `Held` holds it up to the bound
          and de-masks it at its end (on the event loop: the bound keeps that short); over the bound it passes as
          it comes, not de-masked (one log line);
        - a privacy-policy page streams too, and `Tee` keeps a copy up to the bound for learning;
        - everything else (SSE, downloads, pages, media, however large) streams untouched."""
        g = flow.metadata.get("guardian") or {}
        if flow.response is None or flow.response.stream:
            return
        if not g.get("session"):
            flow.response.stream = self._policy_tee(flow) or True
            return
        h = flow.response.headers
        try:
            stream = self.gateway.chat_stream(g, h.get("content-type"), h.get("content-encoding"))
        except Exception as e:
            log.warning("guardian: chat stream of %s left as is (%s)", flow.request.host, type(e).__name__)
            stream = None
        if stream is None:
            if is_stream(h.get("content-type")):
                flow.response.stream = True  # a stream the session cannot read passes as it comes
            else:
                self._hold_chat_answer(flow, g)
            return
        if stream.decodes:
            h.pop("content-encoding", None)
        self._unsized(flow)
        flow.response.stream = never_empty(stream)

    @staticmethod
    def _unsized(flow: http.HTTPFlow) -> None:
        """A body whose length changes on its way: no Content-Length, chunked to an HTTP/1 client."""
        h = flow.response.headers
        h.pop("content-length", None)
        if flow.request.http_version.startswith("HTTP/1") and "chunked" not in h.get("transfer-encoding", "").lower():
            h["transfer-encoding"] = "chunked"

    def _hold_chat_answer(self, flow: http.HTTPFlow, g: dict) -> None:
        """A session's whole (non-streamed) chat answer, held within the bound for de-masking (see
        `responseheaders`)."""
        limit = self.limits.max_inspected_response_bytes
        n = content_length(flow.response)
        if flow.request.method == "HEAD" or flow.response.status_code in (204, 304) or (n is not None and n <= limit):
            return  # mitmproxy holds it (at most `limit` bytes); `response` de-masks it in the pool
        host = flow.request.host

        def over() -> None:
            log.warning("guardian: chat response of %s passed without de-masking: over the %d-byte bound", host, limit)

        if n is not None:
            over()
            flow.response.stream = True
            return
        headers = flow.response.headers.copy()
        self._unsized(flow)
        flow.response.stream = Held(limit, lambda body: self._demasked_wire(g, headers, body, host), over)

    def _demasked(self, g: dict, raw: bytes | None, headers) -> bytes | None:
        """Stage 7 on a whole chat answer as received: decoded within `limits.max_decoded_bytes` (raises
        BodyTooLarge past it), de-masked and guarded; the new decoded body, or None to leave it."""
        body = codec.decode(raw or b"", headers.get("content-encoding"), self.limits.max_decoded_bytes)
        return self.gateway.chat_response(g, body, headers.get("content-type"))

    def _left_as_is(self, host: str, e: Exception) -> None:
        if isinstance(e, BodyTooLarge):  # a compression bomb, or an answer no chat sends: the client gets it as sent
            log.warning("guardian: chat response of %s passed without de-masking: it decodes past the %d-byte bound",
                        host, self.limits.max_decoded_bytes)
        else:  # undecodable body or a de-masking error: the response passes as received
            log.warning("guardian: chat response of %s left as is (%s)", host, type(e).__name__)

    def _demasked_wire(self, g: dict, headers, raw: bytes, host: str) -> bytes:
        """`Held`'s end: the answer de-masked and encoded again as its Content-Encoding says, or as received."""
        try:
            new = self._demasked(g, raw, headers)
            return codec.encode(new, headers.get("content-encoding")) if new is not None else raw
        except Exception as e:
            self._left_as_is(host, e)
            return raw

    def _chat_response(self, flow: http.HTTPFlow, g: dict) -> None:
        """A whole (non-streamed) chat response: surrogates back to real values and the agent guard on its
        tool calls (stage 7). Runs in the pool: decompressing, de-masking and recompressing are CPU work.
        Decompression is bounded like a request's (`limits.max_decoded_bytes`): past it, and on any error, the
        response passes exactly as received (compressed, untouched)."""
        try:
            new = self._demasked(g, flow.response.raw_content, flow.response.headers)
        except Exception as e:
            self._left_as_is(flow.request.host, e)
            return
        if new is not None:
            flow.response.content = new  # re-encoded as Content-Encoding says; Content-Length updated

    async def response(self, flow: http.HTTPFlow) -> None:
        """A session's whole chat response that mitmproxy held (within the bound, see `responseheaders`) is
        de-masked in the pool (the flow waits for it, the event loop does not). Then, learn while browsing: a
        held privacy-policy page goes to stage 2's ingestion (a streamed one was handed over by its `Tee`)."""
        g = flow.metadata.get("guardian") or {}
        if g.get("session") and flow.response and not flow.response.stream:
            try:
                await asyncio.get_running_loop().run_in_executor(self.pool, self._chat_response, flow, g)
            except RuntimeError:  # the pool is shut down: the response passes as received
                pass
        self._learn_from(flow)

    # ------------------------------------------------------------------ a chat WebSocket's server messages

    def _ws_session(self, flow: http.HTTPFlow, decision) -> None:
        """A client message of a chat session: its server messages are de-masked with the session's mappings."""
        sid = decision.extra.get("session")
        if not sid:
            return
        meta = {"session": sid, "chat_api": decision.extra.get("chat_api")}
        fresh = self.gateway.chat_ws(meta)
        old = self._ws_demask.get(flow.id)
        if old is not None and fresh is not None and old.kind == fresh.kind:
            old.dm = fresh.dm  # the session's new mappings; channels still open keep their held text
        elif fresh is not None:
            self._ws_demask[flow.id] = fresh

    def _ws_server(self, flow: http.HTTPFlow, msg) -> None:
        sd = self._ws_demask.get(flow.id)
        if sd is None or not msg.is_text:
            return
        out = sd.message(msg.content)
        if not out:
            msg.drop()
            return
        msg.content = out[0]
        for extra in out[1:]:  # injected after the current one, in order
            ctx.master.commands.call("inject.websocket", flow, True, extra, True)

    def websocket_end(self, flow: http.HTTPFlow) -> None:
        self._ws_demask.pop(flow.id, None)


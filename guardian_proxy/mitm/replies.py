"""A session's chat replies (stage 7): every route goes through the one reply filter (guardian_proxy/session/reply.py
`open_reply`), which decides from the decision's metadata, the Content-Type and the Content-Encoding whether a
reply is streamed, held whole or passed as it comes; this module only hands it mitmproxy's bytes. A chat
WebSocket's server messages go through the same module's `open_messages`. Every other response streams untouched
(`responseheaders`)."""

from __future__ import annotations

import asyncio
import logging
import weakref

from mitmproxy import ctx, http

from ..session.reply import Reply, open_messages, open_reply
from .flows import content_length

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


def as_stream(reply: Reply):
    """The filter as mitmproxy's stream callable: each chunk fed, b"" (the body's end) ends it."""
    return never_empty(lambda data: reply.feed(data) if data else reply.end())


class Replies:
    """`GuardianAddon`'s reply hooks (a mixin of mitm/hooks.py `GuardianAddon`): `gateway`, `limits`, `pool`,
    `_ws_demask`, `_policy_tee` and `_learn_from` (mitm/learning.py) are the addon's."""

    #: a whole answer mitmproxy holds (its Content-Length within the bound) → its filter, read in `response`
    _held: weakref.WeakKeyDictionary[http.HTTPFlow, Reply] = weakref.WeakKeyDictionary()

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        """Every response passes chunk by chunk as it arrives (never buffered whole), except the ones a stage
        reads, which are held within `limits.max_inspected_response_bytes` (R-RESPONSE-BOUND):

        - a session's chat reply goes through its filter (`open_reply`). Streamed: each chunk as it comes (a
          compressed stream is decoded within its bounds, so the client gets it uncompressed). Whole: with a
          Content-Length within the bound mitmproxy holds it and `response` reads it in the pool; without one
          the filter holds it up to the bound and reads it at its end (on the event loop: the bound keeps that
          short); over the bound it passes as it comes, unread (one log line). A reply the filter does not read
          passes as it comes;
        - a privacy-policy page streams too, and `Tee` keeps a copy up to the bound for learning;
        - everything else (SSE, downloads, pages, media, however large) streams untouched."""
        g = flow.metadata.get("guardian") or {}
        resp = flow.response
        if resp is None or resp.stream:
            return
        if not g.get("session"):
            resp.stream = self._policy_tee(flow) or True
            return
        reply = self._open(flow, g)
        if reply is None:
            resp.stream = True  # nothing reads it: it passes as it comes
        elif reply.streamed:
            if reply.decodes:
                resp.headers.pop("content-encoding", None)
            self._unsized(flow)
            resp.stream = as_stream(reply)
        elif flow.request.method == "HEAD" or resp.status_code in (204, 304):
            return  # no body to read
        elif not reply.fits(n := content_length(resp)):
            resp.stream = True  # over the bound: as it comes, unread (the filter said so in the log)
        elif n is not None:
            self._held[flow] = reply  # mitmproxy holds it (at most the bound): `response` reads it in the pool
        else:
            self._unsized(flow)
            resp.stream = as_stream(reply)  # the filter holds it up to the bound and reads it at its end

    def _open(self, flow: http.HTTPFlow, g: dict) -> Reply | None:
        h = flow.response.headers
        try:
            return open_reply(getattr(self.gateway, "session", None), g, h.get("content-type"),
                              h.get("content-encoding"), getattr(self.gateway, "agents", None), self.limits,
                              flow.request.host)
        except Exception as e:  # the session's mapping cannot be read: the reply passes as it comes
            log.warning("guardian: chat stream of %s left as is (%s)", flow.request.host, type(e).__name__)
            return None

    @staticmethod
    def _unsized(flow: http.HTTPFlow) -> None:
        """A body whose length changes on its way: no Content-Length, chunked to an HTTP/1 client."""
        h = flow.response.headers
        h.pop("content-length", None)
        if flow.request.http_version.startswith("HTTP/1") and "chunked" not in h.get("transfer-encoding", "").lower():
            h["transfer-encoding"] = "chunked"

    @staticmethod
    def _read_held(flow: http.HTTPFlow, reply: Reply) -> None:
        """A whole answer mitmproxy held, through its filter (in the pool: decompressing, de-masking and
        recompressing are CPU work); on any error it passes exactly as received (the filter logs why)."""
        raw = flow.response.raw_content or b""
        out = reply.whole(raw)
        if out != raw:
            flow.response.raw_content = out
            if "transfer-encoding" not in flow.response.headers:
                flow.response.headers["content-length"] = str(len(out))

    async def response(self, flow: http.HTTPFlow) -> None:
        """A session's whole chat answer that mitmproxy held (within the bound, see `responseheaders`) is read
        by its filter in the pool (the flow waits for it, the event loop does not). Then, learn while browsing:
        a held privacy-policy page goes to stage 2's ingestion (a streamed one was handed over by its `Tee`)."""
        reply = self._held.pop(flow, None)
        if reply is not None and flow.response is not None:
            try:
                await asyncio.get_running_loop().run_in_executor(self.pool, self._read_held, flow, reply)
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
        fresh = open_messages(getattr(self.gateway, "session", None), meta)
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

"""One filter for a session's chat reply: fed chunk by chunk (`feed`), then ended (`end`); a whole body is one
chunk and the end (as Starlette's middleware treats a body: the last chunk of a stream).

`open_reply` is made once per reply from the request's decision metadata (session id, chat dialect, decision
id), the reply's Content-Type and Content-Encoding, and is the one place that decides how it is read:

- streamed: the dialect frames this content type (SSE, NDJSON, AWS event-stream, length-prefixed frames…) and
  its Content-Encoding decodes incrementally (`stream.DECODABLE`). Each `feed` gives the events completed so
  far: decoded within `stream._Decoder`'s bounds (the reply then leaves uncompressed: `decodes`), de-masked
  (`stream.StreamDemasker`) and, on an SSE stream of an agent step, guarded (the agent stage's `guard_stream`);
- whole: a JSON answer, or a framed one whose encoding decodes only whole. `feed` holds it within
  `limits.max_inspected_response_bytes` (R-RESPONSE-BOUND: past it what is held and the rest pass as received,
  with one log line); `end` decodes it within `limits.max_decoded_bytes`, runs the same de-masking on it (a framed body as
  one chunk and the end of its stream; a JSON body string by string, or event by event when it is an array of
  the dialect's stream events), then the agent guard on the tool calls it proposes (`guard_json`), and encodes
  it again as it came; on any error the body passes exactly as received;
- None: nothing reads it (a stream no dialect frames, a body that is neither framed nor JSON): it passes as it
  comes.

`open_messages` is the same for a chat WebSocket's server→client messages: each message is one event
(`StreamDemasker.message` gives the messages to deliver in its place), so its route is fixed.

The agent stage is handed in (`agents`: `guard_stream(decision_id, kind)` and `guard_json(decision_id, kind,
body)`), never imported: the stages do not import each other.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from .. import chatapi, codec
from ..chatapi.sse import MessageFramer
from ..errors import BodyTooLarge
from ..response_bodies import Held
from .demask import Demasker
from .stream import DECODABLE, StreamDemasker, demask_body

log = logging.getLogger("guardian_proxy")

#: content types of a body that never ends on its own (a stream none of the dialects frames passes as it comes)
STREAM_TYPES = ("text/event-stream", "application/x-ndjson", "application/ndjson", "application/jsonl",
                "application/vnd.amazon.eventstream", "application/grpc", "multipart/x-mixed-replace")
#: the default bound on a held whole answer (`limits.max_inspected_response_bytes`' default)
HELD_LIMIT = 4 * 1024 * 1024
#: the default bound on its decoded size (`limits.max_decoded_bytes`' default)
DECODED_LIMIT = 8 * 1024 * 1024


def is_stream(content_type: str | None) -> bool:
    return (content_type or "").lower().strip().startswith(STREAM_TYPES)


class AgentGuard(Protocol):
    def guard_stream(self, decision_id: str | None, kind: str) -> Callable[[bytes], bytes] | None: ...

    def guard_json(self, decision_id: str | None, kind: str, body: bytes) -> bytes | None: ...


class Reply:
    """What a filter offers its caller: `streamed` (True: chunks pass as they are fed; False: held until `end`),
    `decodes` (the reply leaves uncompressed: drop its Content-Encoding), `feed`, `end` and `whole`."""

    streamed = False
    decodes = False

    def feed(self, chunk: bytes) -> bytes:
        raise NotImplementedError

    def end(self) -> bytes:
        raise NotImplementedError

    def whole(self, body: bytes) -> bytes:
        """A whole body: one chunk and the end."""
        return self.feed(body) + self.end()


class Streamed(Reply):
    """Chunks through `parts` in turn (the session's de-masking, which also decodes, then the guard); a part
    that holds everything back ends that chunk's way."""

    streamed = True

    def __init__(self, parts: list[Callable[[bytes], bytes]], decodes: bool = False):
        self.parts, self.decodes = parts, decodes

    def feed(self, chunk: bytes) -> bytes:
        for part in self.parts:
            if not chunk:
                return b""
            chunk = part(chunk)
        return chunk

    def end(self) -> bytes:
        out = b""
        for part in self.parts:  # what the part before released at its end, then this part's own end
            out = (part(out) if out else b"") + part(b"")
        return out


class Whole(Reply):
    """Held within `limit` bytes (`response_bodies.Held`), read at `end` by `read(decoded body)` (the new decoded
    body, or None to leave it)."""

    def __init__(self, read: Callable[[bytes], bytes | None], content_encoding: str | None, host: str,
                 limit: int = HELD_LIMIT, decoded_limit: int = DECODED_LIMIT):
        self.read, self.encoding, self.host = read, content_encoding, host
        self.limit, self.decoded_limit = limit, decoded_limit
        self.held = Held(limit, self._finish, self._over)
        self.over = False

    def feed(self, chunk: bytes) -> bytes:
        return b"".join(self.held(chunk)) if chunk else b""

    def end(self) -> bytes:
        return b"".join(self.held(b""))

    def fits(self, length: int | None) -> bool:
        """False, with the one log line, when the reply's Content-Length says it is over the bound: it then
        passes as it comes, unread."""
        if length is not None and length > self.limit:
            self._over()
            return False
        return True

    def _over(self) -> None:
        self.over = True
        log.warning("guardian: chat response of %s passed without de-masking: over the %d-byte bound", self.host,
                    self.limit)

    def _finish(self, raw: bytes) -> bytes:
        try:
            new = self.read(codec.decode(raw, self.encoding, self.decoded_limit)) if raw else None
            return codec.encode(new, self.encoding) if new is not None else raw
        except BodyTooLarge:  # a compression bomb, or an answer no chat sends: the client gets it as sent
            log.warning("guardian: chat response of %s passed without de-masking: it decodes past the %d-byte bound",
                        self.host, self.decoded_limit)
        except Exception as e:  # undecodable body or a de-masking error: the response passes as received
            log.warning("guardian: chat response of %s left as is (%s)", self.host, type(e).__name__)
        return raw


def _coding(content_encoding: str | None) -> str | None:
    coding = (content_encoding or "").strip().lower() or None
    return None if coding == "identity" else coding


def open_reply(session, meta: dict, content_type: str | None, content_encoding: str | None,
               agents: AgentGuard | None = None, limits=None, host: str = "?") -> Reply | None:
    """The filter of one reply to a request of a chat session (`meta`: the decision's `session`, `chat_api` and
    `id`), or None when nothing reads it. `session` is the SessionStage; `limits` the settings' `limits` (the
    defaults when None); `host` names the reply in log lines. Raises only when the session's mapping cannot be
    read (the store unreachable and nothing cached): the caller passes the reply as it comes."""
    sid, dialect = meta.get("session"), chatapi.dialects.get(meta.get("chat_api"))
    if session is None or not sid or dialect is None:
        return None
    kind, ctype, coding = dialect.name, (content_type or "").lower(), _coding(content_encoding)
    framer = dialect.framer(content_type)

    if framer is not None and (coding is None or coding in DECODABLE):
        parts: list[Callable[[bytes], bytes]] = [StreamDemasker(kind, session.store.demasker(sid), framer, coding,
                                                                lambda a: session.store.alias(a, sid))]
        guard = agents.guard_stream(meta.get("id"), meta.get("chat_api")) \
            if agents is not None and "event-stream" in ctype else None
        if guard is not None:
            parts.append(guard)
        return Streamed(parts, decodes=coding is not None)
    if is_stream(ctype) or (framer is None and "json" not in ctype):
        return None
    return Whole(lambda body: read_whole(session, meta, content_type, body, agents), content_encoding, host,
                 getattr(limits, "max_inspected_response_bytes", HELD_LIMIT),
                 getattr(limits, "max_decoded_bytes", DECODED_LIMIT))


def read_whole(session, meta: dict, content_type: str | None, body: bytes, agents: AgentGuard | None = None) \
        -> bytes | None:
    """A whole decoded answer de-masked, then guarded (`agents`): the new body, or None to leave it. A body in a
    stream's framing goes through the stream's de-masking as one chunk and the end; a JSON one through
    `stream.demask_body`."""
    sid, dialect = meta.get("session"), chatapi.dialects.get(meta.get("chat_api"))
    if session is None or not sid or dialect is None or not body:
        return None
    kind, ctype = dialect.name, (content_type or "").lower()
    framer = dialect.framer(content_type)
    new = None
    if framer is not None:
        sd = StreamDemasker(kind, session.store.demasker(sid), framer, None, lambda a: session.store.alias(a, sid))
        new = Streamed([sd]).whole(body)
        new = new if new != body else None
    elif "json" in ctype:
        new = demask_body(kind, body, session.store.demasker(sid), lambda a: session.store.alias(a, sid))
    if agents is not None and "json" in ctype:
        guarded = agents.guard_json(meta.get("id"), meta.get("chat_api"), new if new is not None else body)
        new = guarded if guarded is not None else new
    return new


def open_messages(session, meta: dict) -> StreamDemasker | None:
    """The de-masker of a chat WebSocket's server→client messages (`StreamDemasker.message`), or None."""
    sid, dialect = meta.get("session"), chatapi.dialects.get(meta.get("chat_api"))
    if session is None or not sid or dialect is None or not dialect.websocket:
        return None
    dm: Demasker = session.store.demasker(sid)
    return StreamDemasker(dialect.name, dm, MessageFramer(), None, lambda a: session.store.alias(a, sid))

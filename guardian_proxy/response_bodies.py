"""Response bodies as they pass: never buffered whole unless a stage reads them, and then only up to a bound.

The addon streams every response no stage reads, chunk by chunk as it arrives. The two readers get one of
these stream callables (mitmproxy calls it with each chunk and with b"" at the end; what it returns goes to the
client, a list of chunks, never an empty chunk):

`Tee`       passes every chunk on at once and keeps a copy of the first `limit` bytes for a reader that wants
            the whole body once it has ended (a privacy-policy page to learn from). Past the limit the copy is
            dropped (`on_over` is called once) and the reader gets nothing.
`Held`      holds the body back until it ends and sends what `finish(body)` makes of it (a session's whole chat
            answer, de-masked). Past `limit` held bytes it releases what it holds, calls `on_over` once and
            passes the rest as it comes: the body goes to the client unread. `finish` raising sends the body as
            received.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger("guardian_proxy")


class Tee:
    def __init__(self, limit: int, on_end: Callable[[bytes], None], on_over: Callable[[], None]):
        self.limit, self.on_end, self.on_over = limit, on_end, on_over
        self.copy: bytearray | None = bytearray()

    def __call__(self, data: bytes) -> list[bytes]:
        if not data:  # the end of the body
            copy, self.copy = self.copy, None
            if copy:
                self.on_end(bytes(copy))
            return []
        if self.copy is not None:
            self.copy += data
            if len(self.copy) > self.limit:
                self.copy = None
                self.on_over()
        return [data]


class Held:
    def __init__(self, limit: int, finish: Callable[[bytes], bytes], on_over: Callable[[], None]):
        self.limit, self.finish, self.on_over = limit, finish, on_over
        self.buf = bytearray()
        self.passing = False

    def __call__(self, data: bytes) -> list[bytes]:
        if self.passing:
            return [data] if data else []
        if data:
            self.buf += data
            if len(self.buf) <= self.limit:
                return []
            self.passing = True
            self.on_over()
            out, self.buf = bytes(self.buf), bytearray()
            return [out]
        body, self.buf = bytes(self.buf), bytearray()
        try:
            out = self.finish(body)
        except Exception as e:  # never break the client's response: it gets the body as received
            log.warning("guardian: a held response passed as received (%s)", type(e).__name__)
            out = body
        return [out] if out else []

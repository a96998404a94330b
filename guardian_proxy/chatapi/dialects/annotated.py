"""Stream annotation shared by the web-app dialects whose events mean something only in stream order
(ChatGPT, DeepSeek, Perplexity, Le Chat): a stateful framer annotates each parsed event (`Ann`, a dict whose
attributes say which of its strings are deltas of which channel and what it closes), and wraps events that
must pass byte for byte (reasoning) in `Verbatim` (not a dict, so the generic de-masking leaves them alone).
No dialect lives here."""

from __future__ import annotations

from ..events import DeltaRef
from ..sse import SSEFramer


class Verbatim:
    """The parsed data of an event that must pass byte for byte (reasoning). Not a dict or list, so the
    generic de-masking (`demask_json`) leaves it alone; the dialect still reads `data` to close channels."""

    __slots__ = ("data",)

    def __init__(self, data):
        self.data = data

    def __repr__(self) -> str:
        return f"Verbatim({self.data!r})"


class Ann(dict):
    """A parsed event annotated by a stateful framer: `deltas` = [(channel, holder, key)], `closes` = channel
    prefixes to flush before it, plus whatever else the dialect needs (`extra`). Serialises as the dict."""

    def __init__(self, data: dict, deltas=None, closes=None, **extra):
        super().__init__(data)
        self.deltas: list[tuple] = deltas or []
        self.closes: list[tuple] | None = closes
        self.extra: dict = extra


def rebind(ann: Ann, original: dict) -> Ann:
    """`Ann` copies the top-level dict: holders that were `original` itself must point at the copy."""
    ann.deltas = [(ch, ann if h is original else h, k) for ch, h, k in ann.deltas]
    return ann


class StatefulSSE(SSEFramer):
    """An SSE framer that passes every parsed event through `annotate(name, obj) -> obj` in stream order."""

    def __init__(self, annotate):
        super().__init__()
        self.annotate = annotate

    def feed(self, data: bytes):
        evs = super().feed(data)
        for ev in evs:
            if ev.obj is not None and ev.obj != "[DONE]":
                ev.obj = self.annotate(ev.name, ev.obj)
        return evs

    def encode(self, ev, name, obj):
        return super().encode(ev, name, obj.data if isinstance(obj, Verbatim) else obj)


def ann_deltas(obj) -> list[DeltaRef] | None:
    """The deltas an annotated event carries; None when the event was not annotated."""
    if isinstance(obj, Ann):
        return [DeltaRef(ch, h, k) for ch, h, k in obj.deltas]
    if isinstance(obj, Verbatim):
        return []
    return None


def ann_closes(obj):
    if isinstance(obj, Ann):
        return obj.closes
    if isinstance(obj, Verbatim):
        return getattr(obj, "closes", None)
    return None


class ClosingVerbatim(Verbatim):
    __slots__ = ("closes",)

    def __init__(self, data, closes):
        super().__init__(data)
        self.closes = closes

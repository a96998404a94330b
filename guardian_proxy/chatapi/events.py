"""What streamed replies are made of: `DeltaRef`, one text fragment of an event. The shapes of each
service's events live in its dialect (`chatapi.dialects`); the functions here look the dialect up by name."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class DeltaRef:
    """One streamed text fragment inside an event: `holder[key]` belongs to text channel `channel`."""

    channel: tuple
    holder: dict
    key: str
    json_text: bool = False


def _d(kind: str):
    from .dialects import get

    d = get(kind)
    if d is None:
        raise KeyError(f"unknown chat dialect {kind!r}")
    return d


def event_deltas(kind: str, name: str | None, obj) -> list[DeltaRef]:
    return _d(kind).deltas(name, obj)


def event_closes(kind: str, name: str | None, obj) -> list[tuple] | None:
    return _d(kind).closes(name, obj)


def synth_event(kind: str, template, channel: tuple, text: str, json_text: bool = False) -> tuple[str | None, object]:
    return _d(kind).synth(template, channel, text, json_text)


def response_aliases(kind: str, obj) -> list[str]:
    return _d(kind).aliases(obj)

"""Verified adversarial escalation: rewrite at the start level, let the guesser attack the result, raise the
level by one when a verified guess reaches the confidence threshold; at most `max_rounds` rounds, never
past L5. With verification off, every guess counts (the ablation of the paper). `max_rounds` 0 = the
level is fixed (no guessing at all).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .verifier import Guess, LexicalVerifier


@dataclass
class Outcome:
    texts: dict[str, str]
    level: int
    rounds: int
    upgrades: int = 0
    guesses: int = 0
    verified: int = 0
    cues: dict[str, int] = field(default_factory=dict)  # cue kind -> guesses that triggered an upgrade
    span_counts: dict[str, int] = field(default_factory=dict)  # entity -> spans rewritten
    strict_fields: int = 0


def escalate(render: Callable[[int], dict[str, str]], view: Callable[[dict[str, str]], str], guesser,
             verifier: LexicalVerifier, start: int, threshold: float = 0.6, max_rounds: int = 5,
             verify: bool = True, ceiling: int = 5) -> Outcome:
    """`render(level)` → changed fields; `view(changed)` → the text the adversary sees."""
    level = max(1, min(start, ceiling))
    out = Outcome(texts=render(level), level=level, rounds=0)
    while out.rounds < max_rounds and out.level < ceiling:
        text = view(out.texts)
        guesses: list[Guess] = guesser.guess(text) if text else []
        out.rounds += 1
        out.guesses += len(guesses)
        counted = [g for g in guesses if not verify or verifier.verified(g)]
        out.verified += len(counted) if verify else 0
        hits = [g for g in counted if g.confidence >= threshold]
        if not hits:
            break
        for g in hits:
            out.cues[g.cue] = out.cues.get(g.cue, 0) + 1
        out.level += 1
        out.upgrades += 1
        out.texts = render(out.level)
    return out

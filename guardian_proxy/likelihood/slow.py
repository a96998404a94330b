"""The slow path: ask an LLM back end for L only, through a strict JSON answer.

The model sees the action's vocabulary fields (categories, recipient class, purposes, basis, destination
domain) and the numbered evidence statements — never the outgoing text or any personal value — and
must answer `{"likelihood": 0..1, "reason": "..."}`. It estimates L only: it never sets R, the decision
or the rewrite level. Anything else (a back-end error, a timeout, a missing key, a number outside [0, 1])
raises BackendError and the router falls back.
"""

from __future__ import annotations

import math

from ..errors import BackendError
from ..types import Action, Evidence

SCHEMA: dict = {
    "type": "object",
    "properties": {
        "likelihood": {"type": "number", "minimum": 0, "maximum": 1},
        "reason": {"type": "string", "maxLength": 300},
    },
    "required": ["likelihood", "reason"],
    "additionalProperties": False,
}
SYSTEM = (
    "You check web requests against the destination's privacy policy. Given the data a request sends, who "
    "receives it, why, and numbered statements from the recipient's policy, estimate the likelihood (0 to 1) "
    "that this data flow violates the policy or goes beyond what it discloses: near 0 when a statement "
    "clearly permits exactly this data, recipient and purpose; near 1 when a statement rules it out or "
    "nothing discloses it. Answer only with JSON: {\"likelihood\": <number 0..1>, \"reason\": \"<one short "
    "sentence>\"}."
)
MAX_STATEMENT_CHARS = 400


def messages(action: Action, evidence: Evidence) -> list[dict]:
    cats = ", ".join(sorted(c for c, n in action.categories.items() if n > 0)) or "none detected"
    lines = [
        f"Destination: {action.domain}",
        f"Data categories sent: {cats}",
        f"Recipient class: {action.recipient.replace('_', ' ')}",
        f"Declared purposes: {', '.join(p.replace('_', ' ') for p in action.purposes) or 'unknown'}",
        f"Action basis: {action.basis}",
        "",
        "Policy statements:" if evidence.statements else "Policy statements: none known for this destination.",
    ]
    for i, ss in enumerate(evidence.statements, 1):
        text = " ".join(ss.statement.text.split())[:MAX_STATEMENT_CHARS]
        lines.append(f"{i}. {text}")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


def parse_answer(answer: object) -> tuple[float, str]:
    """Validate a chat_json answer; returns (likelihood, reason)."""
    if not isinstance(answer, dict):
        raise BackendError(f"LLM answer is not a JSON object: {type(answer).__name__}")
    value = answer.get("likelihood")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BackendError("LLM answer has no numeric 'likelihood'")
    value = float(value)
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise BackendError(f"LLM likelihood {value!r} outside [0, 1]")
    reason = answer.get("reason", "")
    if not isinstance(reason, str):
        raise BackendError("LLM answer 'reason' is not a string")
    return value, " ".join(reason.split())[:300]


def ask(backend, action: Action, evidence: Evidence, timeout: float, max_tokens: int) -> tuple[float, str]:
    try:
        answer = backend.chat_json(messages(action, evidence), SCHEMA, max_tokens=max_tokens, timeout=timeout)
    except BackendError:
        raise
    except Exception as e:  # a back end must not take the proxy down: every failure becomes a fallback
        raise BackendError(f"{type(e).__name__}: {e}") from e
    return parse_answer(answer)

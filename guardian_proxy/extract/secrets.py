"""Credentials in free text and values: API keys by their vendor prefix, JWTs and bearer tokens,
passwords written out ("my password is …", ``https://user:pass@host``), and PEM private keys.

Private keys are found procedurally (BEGIN marker, then the first END after it), which stays linear
however many unterminated markers a body holds.
"""

from __future__ import annotations

import re

from .patterns import Hit, Recognizer


class ApiKeyRecognizer(Recognizer):
    ENTITY = "API_KEY"
    PATTERNS = (
        (r"(?<![\w-])sk-(?:proj-|svcacct-|admin-|ant-(?:api|admin)\d{2}-)?[A-Za-z0-9_-]{20,200}(?![\w-])", 0.95),
        (r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])", 0.95),
        (r"(?<!\w)gh[pousr]_[A-Za-z0-9]{36,255}(?!\w)", 0.95),
        (r"(?<!\w)github_pat_[A-Za-z0-9_]{22,255}(?!\w)", 0.95),
        (r"(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])", 0.9),
        (r"(?<![\w-])xox[abprs]-[A-Za-z0-9-]{10,200}(?![\w-])", 0.95),
        (r"(?<!\w)(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,200}(?!\w)", 0.95),
        (r"(?<!\w)(?:hf|gsk|glpat|npm|pypi|xai)[_-][A-Za-z0-9_-]{30,200}(?![\w-])", 0.85),
        (r"(?i)(?:api[_ -]?key|secret|access[_ -]?key|client[_ -]?secret|private[_ -]?token)[\"']?\s{0,3}[:=]\s{0,3}"
         r"[\"']?(?P<v>[A-Za-z0-9_\-./+=]{16,200})", 0.85),
    )


class TokenRecognizer(Recognizer):
    ENTITY = "AUTH_TOKEN"
    PATTERNS = (
        (r"(?<![\w-])eyJ[A-Za-z0-9_-]{5,4000}\.eyJ[A-Za-z0-9_-]{5,8000}\.[A-Za-z0-9_-]{0,2000}(?![\w-])", 0.95),
        (r"(?i)\bbearer\s{1,3}(?P<v>[A-Za-z0-9._~+/-]{16,4000}=*)", 0.9),
        (r"(?i)(?:access|refresh|auth|session|id)[_ -]?token[\"']?\s{0,3}[:=]\s{0,3}[\"']?(?P<v>[A-Za-z0-9._~+/-]{16,4000})",
         0.85),
    )


class PasswordRecognizer(Recognizer):
    ENTITY = "PASSWORD"
    PATTERNS = (
        (r"(?i)\b(?:password|passwd|pwd|passcode|passphrase|pin code|pin)\s{0,3}(?:is|was|:|=)\s{0,3}[\"']?"
         r"(?P<v>[^\s\"',;]{3,64})", 0.85),
        (r"://[^/\s:@]{1,64}:(?P<v>[^/\s@]{1,128})@", 0.9),
    )

    def validate(self, value: str) -> bool:
        return value.lower() not in ("is", "was", "the", "your", "my", "a", "***", "****", "[redacted]")


_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----")
_END = "-----END "


def private_keys(text: str) -> list[Hit]:
    out: list[Hit] = []
    pos = 0
    while True:
        m = _BEGIN.search(text, pos)
        if m is None:
            return out
        end = text.find(_END, m.end())
        if end < 0:  # cut off: the rest of the text is key material
            out.append((m.start(), len(text), "PRIVATE_KEY", 0.95))
            return out
        close = text.find("-----", end + len(_END))
        stop = close + 5 if close >= 0 else len(text)
        out.append((m.start(), stop, "PRIVATE_KEY", 0.99))
        pos = stop


RECOGNIZERS: tuple[Recognizer, ...] = (ApiKeyRecognizer(), TokenRecognizer(), PasswordRecognizer())


def find(text: str) -> list[Hit]:
    out: list[Hit] = private_keys(text) if "PRIVATE KEY" in text else []
    for r in RECOGNIZERS:
        out += r.find(text)
    return out

"""Credentials in free text and values: API keys by their vendor prefix, JWTs and bearer tokens,
passwords written out ("my password is …", ``https://user:pass@host``), and PEM private keys.

Private keys are found procedurally (BEGIN marker, then the first END after it), which stays linear
however many unterminated markers a body holds.
"""

from __future__ import annotations

import re

from .patterns import Hit, Recognizer

#: key prefix → the registrable domains of the service that issued it: a key sent to its own issuer is the app
#: authenticating to that service, not a secret leaving (a Maps or Safe Browsing key to googleapis.com)
ISSUERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("AIza", ("googleapis.com", "google.com", "gstatic.com", "firebaseio.com", "firebaseapp.com", "youtube.com")),
    ("sk-ant-", ("anthropic.com", "claude.ai")), ("sk-", ("openai.com", "chatgpt.com")),
    ("AKIA", ("amazonaws.com", "aws.amazon.com")), ("ASIA", ("amazonaws.com", "aws.amazon.com")),
    ("ghp_", ("github.com", "githubusercontent.com", "githubcopilot.com")), ("gho_", ("github.com",)),
    ("ghu_", ("github.com", "githubcopilot.com")), ("ghs_", ("github.com",)), ("github_pat_", ("github.com",)),
    ("xox", ("slack.com",)), ("sk_live_", ("stripe.com",)), ("sk_test_", ("stripe.com",)),
    ("rk_live_", ("stripe.com",)), ("rk_test_", ("stripe.com",)), ("hf_", ("huggingface.co",)),
    ("gsk_", ("groq.com",)), ("glpat-", ("gitlab.com",)), ("npm_", ("npmjs.org", "npmjs.com")),
    ("pypi-", ("pypi.org",)), ("xai-", ("x.ai",)),
)


def issued_by(key: str, domain: str) -> bool:
    """`key` (a located API key) was issued by the service whose registrable domain is `domain`."""
    for prefix, domains in ISSUERS:
        if key.startswith(prefix):
            return domain in domains
    return False


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
        (r"(?<![\w-])GOCSPX-[A-Za-z0-9_-]{20,40}(?![\w-])", 0.95),  # a Google OAuth client's secret
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
        # no "is" or ":" between: "password Marmalade!Kite27", "wifi … password seagull-harbour-2291" (letters and a
        # digit: not "password reset", "password manager")
        (r"(?i)\b(?:password|passwd|pwd|passcode|passphrase)\s{1,3}[\"']?"
         r"(?P<v>(?=[^\s\"',;]{0,63}\d)(?=[^\s\"',;]{0,63}[A-Za-z])[^\s\"',;]{5,63}[^\s\"',;.])", 0.8),
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

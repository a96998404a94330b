"""Every regular expression of the extract stage and the body parsers survives 100 KB of adversarial
input (no catastrophic backtracking), and so does the whole stage."""

import random
import re
import time

import pytest

from guardian_proxy import bodies
from guardian_proxy.bodies import embedded, graphql, jsondoc, jsonpath, multipart, pairs
from guardian_proxy.extract import (
    basis,
    detector,
    extractor,
    health,
    keys,
    patterns,
    purposes,
    recipients,
    secrets,
)
from guardian_proxy.extract.detector import Detector
from guardian_proxy.session import context as session_context
from guardian_proxy.session import keyed as session_keyed
from guardian_proxy.session import namecues as session_namecues
from guardian_proxy.types import TextField

N = 100_000
MODULES = (bodies, embedded, graphql, jsondoc, jsonpath, multipart, pairs, basis, detector, extractor, health, keys,
           patterns, purposes, recipients, secrets, session_context, session_keyed, session_namecues)
BUDGET_S = 1.5  # per pattern and input, on a shared CI core; linear patterns take a few milliseconds


def _collect(obj, out, depth=0):
    if isinstance(obj, re.Pattern):
        out[obj.pattern] = obj
    elif depth < 3 and isinstance(obj, list | tuple | set | frozenset):
        for x in obj:
            _collect(x, out, depth + 1)
    elif depth < 3 and isinstance(obj, patterns.Recognizer):
        _collect(obj.compiled, out, depth + 1)


def all_patterns() -> list[re.Pattern]:
    out: dict[str, re.Pattern] = {}
    for mod in MODULES:
        for value in vars(mod).values():
            _collect(value, out)
    return list(out.values())


def adversarial() -> dict[str, str]:
    rnd = random.Random(7)
    units = {"letters": "a", "digits": "1", "spaces": " ", "word_space": "ab ", "digit_space": "1 ", "digit_dash": "1-",
             "at": "@", "local_at": "a@", "dots": "a.", "quote": '"', "escaped_quote": '\\"', "brace": "{", "colon": ":",
             "hex_colon": "0a:", "pct40": "%40", "jwt": "eyJ", "plus_digits": "+1 ", "newline": "\n", "cap_word": "Ab ",
             "pem": "-----BEGIN PRIVATE KEY-----\n", "amp_eq": "a=&", "triple_quote": '"""a', "slash_digits": "1/",
             "b64": "eyJhYmMiOiJk", "bearer": "bearer ", "mixed_id": "A1b2-", "semicolon_param": ';a="', "home": "/home/"}
    out = {name: (u * (N // len(u) + 1))[:N] for name, u in units.items()}
    out["random_printable"] = "".join(rnd.choice("aZ09 .-@:/\"'{}[],=&%+_\n") for _ in range(N))
    return out


INPUTS = adversarial()
PATTERNS = all_patterns()


def test_collects_the_patterns():
    assert len(PATTERNS) > 60


@pytest.mark.parametrize("pat", PATTERNS, ids=lambda p: p.pattern[:40])
def test_pattern_is_linear_on_adversarial_input(pat):
    for name, text in INPUTS.items():
        if isinstance(pat.pattern, bytes):
            text = text.encode("utf-8")
        t0 = time.perf_counter()
        for _ in pat.finditer(text):
            pass
        pat.fullmatch(text)
        elapsed = time.perf_counter() - t0
        assert elapsed < BUDGET_S, f"{pat.pattern[:60]!r} took {elapsed:.2f}s on {name}"


@pytest.mark.parametrize("name", list(INPUTS))
def test_whole_detector_on_adversarial_field(name):
    d = Detector(ner=False)  # patterns, credentials, health, field names, narrative recognizers
    text = INPUTS[name]
    t0 = time.perf_counter()
    d.detect([TextField(path="json:$.note", text=text, key="note"), TextField(path="query:q", text=text, key="q")])
    assert time.perf_counter() - t0 < 10, name


@pytest.mark.parametrize("name", ["quote", "brace", "escaped_quote", "amp_eq", "triple_quote", "random_printable"])
def test_body_parsers_on_adversarial_bodies(name):
    body = INPUTS[name].encode()
    t0 = time.perf_counter()
    for ctype in ("application/json", "application/x-www-form-urlencoded", "text/plain", "application/graphql",
                  "multipart/form-data; boundary=a", "application/x-ndjson"):
        bodies.parse_body(body, ctype, None, bodies.BodyLimits())
    assert time.perf_counter() - t0 < 10, name

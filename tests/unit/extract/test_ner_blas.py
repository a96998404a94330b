"""spaCy's products run on numpy's BLAS, one thread while the pipeline lock is held, with the same results as thinc's
blis; the BLAS's own thread setting is what it was outside the pipeline's runs."""

import pytest
from thinc.api import NumpyOps, get_current_ops
from threadpoolctl import ThreadpoolController

from guardian_proxy.extract.ner import NerEngine

TEXTS = [
    "Please call Laura Anderson back at laura.anderson.2000005@example.com.", "Laura Anderson", "Order question",
    "I work as a nurse at St Mary's in Leeds and my manager, Priya Natarajan, lives in Headingley.",
    "Herding goats in the Atlas mountains with my brother Youssef since 2009.",
    "Ms. Jane Doe (SSN 078-05-1120) was admitted to Mercy Hospital in Springfield on 3 March 2021.",
    "The Turkish delegation met the European Commission in Brussels; Angela Merkel sent regards.",
    "x " * 4000 + "Then Carlos Mendes from Porto wrote to the Acme Corporation in Lisbon.",  # two pieces (CHUNK)
]


@pytest.fixture(scope="module")
def engines():
    new, old = NerEngine(), NerEngine(numpy_blas=False)
    new.load()
    old.load()
    return new, old


def _ops(engine):
    nlp = engine.load().nlp_engine.nlp["en"]
    return {(type(layer.ops), layer.ops.use_blis) for layer in nlp.get_pipe("tok2vec").model.walk()}


def _blas_threads() -> list[int]:
    return [lib.num_threads for lib in ThreadpoolController().select(user_api="blas").lib_controllers]


@pytest.mark.slow
def test_the_pipeline_runs_on_numpys_blas_and_the_default_stays_blis(engines):
    new, old = engines
    assert new._blas is not None and old._blas is None
    assert _ops(new) == {(NumpyOps, False)}
    assert _ops(old) == {(NumpyOps, True)}
    assert get_current_ops().use_blis  # the build's context did not leak into the process's current ops


@pytest.mark.slow
def test_same_hits_and_same_entities_and_tags_as_blis(engines):
    """Each text alone and all in one batch: the detector's hits (entity, offsets, score) and spaCy's raw entities
    and tags are blis's."""
    new, old = engines
    assert new.analyze(TEXTS) == old.analyze(TEXTS)
    for text in TEXTS:
        assert new.analyze([text]) == old.analyze([text]), text[-60:]
    raw = []
    for e in (new, old):
        nlp = e.load().nlp_engine.nlp["en"]
        tagging = e._tagging
        assert tagging  # the lazy tagger: tags come from the same tok2vec
        with e._lock, e._blas_limit():
            docs = list(nlp.pipe(TEXTS[:-1]))
            for p in tagging:
                docs = [p(d) for d in docs]
        raw.append([([(x.start_char, x.end_char, x.label_) for x in d.ents], [t.tag_ for t in d]) for d in docs])
    assert raw[0] == raw[1]
    assert any(ents for ents, _ in raw[0]) and any(tags for _, tags in raw[0])


@pytest.mark.slow
def test_one_blas_thread_only_while_the_pipeline_runs(engines, monkeypatch):
    """The BLAS runs on one thread inside the pipeline (its default pool spins a second core on these small products);
    before and after, the setting other numpy users in the process see is untouched."""
    new, _ = engines
    ctl = ThreadpoolController().select(user_api="blas")
    with ctl.limit(limits=2):  # a pool of two outside, whatever the machine's cores
        before = _blas_threads()
        assert before and all(n == 2 for n in before)
        seen = []
        nlp_engine = new.load().nlp_engine
        real = nlp_engine.process_batch

        def spy(*a, **k):
            seen.append(_blas_threads())
            yield from real(*a, **k)

        monkeypatch.setattr(nlp_engine, "process_batch", spy)
        assert new.analyze(["Call Laura Anderson in Leeds."])[0]
        assert seen == [[1] * len(before)]
        assert _blas_threads() == before

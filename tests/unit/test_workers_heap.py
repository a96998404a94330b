"""A serving process's heap (guardian_proxy/workers.py `settle_heap`)."""

import gc

import pytest

from guardian_proxy.workers import GC_YOUNG, settle_heap


@pytest.fixture
def gc_state():
    before = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)


def test_settle_heap_freezes_what_was_loaded_and_collects_the_young_less_often(gc_state):
    kept = [object() for _ in range(10)]  # loaded at start-up: held for the process's life
    garbage = []
    garbage.append(garbage)  # a cycle nobody holds: collected first, never frozen
    del garbage
    gc.set_threshold(700, 10, 10)
    settle_heap()
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == (GC_YOUNG, 10, 10)
    assert gc.collect() == 0  # nothing left to collect: the cycle went before the freeze
    assert kept  # what is held stays held (a frozen object is freed by its reference count as ever)


def test_settle_heap_leaves_a_stricter_or_disabled_collector_alone(gc_state):
    gc.set_threshold(0, 10, 10)  # the embedding program turned the collector off
    settle_heap()
    assert gc.get_threshold() == (0, 10, 10)
    gc.set_threshold(GC_YOUNG * 2, 5, 5)
    settle_heap()
    assert gc.get_threshold() == (GC_YOUNG * 2, 5, 5)

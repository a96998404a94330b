"""A serving process's heap (guardian_proxy/workers.py `settle_heap`) and a worker slot's wait on its pipe and
process sentinel (`_Slot._ready`, one poll set for the worker's life)."""

import gc
import multiprocessing
import os
from types import SimpleNamespace

import pytest

from guardian_proxy import workers
from guardian_proxy.workers import GC_YOUNG, _Slot, settle_heap


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


@pytest.mark.skipif(not hasattr(workers.select, "poll"), reason="poll(2)")
def test_a_slot_waits_on_its_pipe_and_its_process_sentinel():
    parent, child = multiprocessing.Pipe()
    r, w = os.pipe()  # as a process sentinel: readable (EOF) once the process is gone
    slot = _Slot.__new__(_Slot)
    slot.conn, slot.proc = parent, SimpleNamespace(sentinel=r)
    slot._watch()
    try:
        assert slot._ready(0) == []
        child.send("answer")
        assert slot._ready(1) == [parent]
        assert parent.recv() == "answer" and slot._ready(0) == []
        os.close(w)  # the worker exited
        assert slot._ready(1) == [r]
        child.close()  # its end of the pipe is closed too: both are ready (recv then says EOF)
        assert slot._ready(1) == [parent, r]
    finally:
        parent.close()
        os.close(r)

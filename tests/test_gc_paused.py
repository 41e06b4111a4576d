"""The collector paused or kept off the heap for a block, and left as the block found it."""
from __future__ import annotations

import gc

import pytest

from opspec.spec.gc_paused import gc_paused, heap_frozen


def test_a_paused_block_collects_nothing_by_itself_and_the_collector_resumes():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block leaves it as the outer one set it
    assert gc.isenabled()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError
    assert gc.isenabled()


def test_a_frozen_heap_is_thawed_at_the_end_but_not_a_callers():
    assert gc.get_freeze_count() == 0
    alive = [object() for _ in range(100)]
    with heap_frozen():
        frozen = gc.get_freeze_count()
        assert frozen >= len(alive)
        made_inside = [[] for _ in range(100)]
        assert gc.get_freeze_count() <= frozen  # what the block makes is collected as usual (frozen ones may be freed)
        del made_inside
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with heap_frozen():
            pass
        assert gc.get_freeze_count() > 0 and gc.get_freeze_count() <= frozen  # a caller's freeze is the caller's to undo
    finally:
        gc.unfreeze()

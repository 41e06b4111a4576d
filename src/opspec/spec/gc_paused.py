"""The cyclic garbage collector paused while many objects are built at once, or kept off the heap already there.

Unpickling a kept reading or constructing a parsed YAML document allocates hundreds of
thousands of containers, none of them garbage. Each 700 allocations start a collection,
and the older generations' passes walk the whole heap, torch's modules included: with the
collector running, unpickling validate's kept readings took six times as long.
"""
from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection inside the block (it resumes after, as it was: nested blocks leave it paused)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextlib.contextmanager
def heap_frozen() -> Iterator[None]:
    """Collections inside the block leave out every object alive at its start (torch's modules, the opset read):
    a full pass walks only what the block made, as the explicit ``gc.collect()`` hypothesis makes when it first
    seeds its random generator. Garbage among the frozen objects waits for the block's end; inside a block frozen
    by its caller, nothing changes."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()

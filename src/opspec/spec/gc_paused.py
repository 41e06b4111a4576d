"""The cyclic garbage collector paused while many objects are built at once.

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

"""What a reader computed from one file's bytes, looked up by those bytes in a store a caller hands in.

Parsing and schema-checking a data file depends on nothing but its bytes, the path its
marks name, the schemas and the code that reads it. A caller whose store is kept under
a key over the last two (``opspec validate``'s part store) wraps its work in
:func:`kept_in`; every read inside asks the store for the file's path and digest first.
Outside such a block, and for a file that cannot be read, the reader just runs. A file
that changes while it is read is not kept: its result may belong to either content.
"""
from __future__ import annotations

import contextlib
import hashlib
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol, TypeVar

T = TypeVar("T")
MISSING: Any = object()  # what a store's get answers for a key it does not hold


class Store(Protocol):
    def get(self, key: str) -> Any: ...  # a fresh copy of the value, or MISSING

    def put(self, key: str, value: Any) -> None: ...


_store: ContextVar[Store | None] = ContextVar("file_memo_store", default=None)


@contextlib.contextmanager
def kept_in(store: Store | None) -> Iterator[None]:
    """Reads inside the block use ``store`` (None: no store, every read runs)."""
    token = _store.set(store)
    try:
        yield
    finally:
        _store.reset(token)


def recall(path: Path | str, what: str, compute: Callable[[], T]) -> T:
    """``compute()``, the reading of ``path`` that ``what`` names, or the result the store keeps for these bytes."""
    store = _store.get()
    before = _digest(path) if store is not None else None
    if before is None:
        return compute()
    key = f"{what}\0{path}\0{before}"
    found = store.get(key)
    if found is not MISSING:
        return found
    value = compute()
    if _digest(path) == before:
        store.put(key, value)
    return value


def _digest(path: Path | str) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None

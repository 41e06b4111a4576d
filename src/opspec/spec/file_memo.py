"""What a reader computed from one file's bytes, looked up by those bytes in a store a caller hands in.

Parsing and schema-checking a data file depends on nothing but its bytes, the path its
marks name, the schemas and the code that reads it. A caller whose store is kept under
a key over the last two (``opspec validate``'s part store) wraps its work in
:func:`kept_in`; every read inside asks the store for the file's digest first.
Outside such a block, and for a file that cannot be read, the reader just runs. A file
that changes while it is read is not kept: its result may belong to either content.

A reading is kept apart from the place it was read at: the file's own path (in its marks,
as a path or a string) is pickled as a token and put back as the path read now, so a
copy of the opset elsewhere (a worktree, a release being staged, a test's copy) reuses
what was read here. A reading that names its path some other way (inside a message) is
kept under its path as well. Beside it the reading is kept as read, for the next read at the same
path: unpickled as it is, without a token put back at every mark.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import pickle
from contextvars import ContextVar
from pathlib import Path, PurePath
from typing import Any, Callable, Iterator, Protocol, TypeVar

from opspec.spec.gc_paused import gc_paused
from opspec.spec.yamlio import Mark

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
    place = str(path)
    anywhere, here = f"{what}\0{before}", f"{what}\0{place}\0{before}"
    as_read = f"{here}\0as read"  # the reading as pickled here, path and all: loads at C speed, no re-placing
    found = store.get(as_read)
    if found is not MISSING:
        try:
            with gc_paused():
                value = pickle.loads(found)
        except Exception:  # a damaged part: read again
            value = MISSING
        if value is not MISSING:
            store.get(anywhere)  # still in use: kept for copies elsewhere as long as it is here
            return value
    for key in (anywhere, here):
        found = store.get(key)
        if found is not MISSING:
            try:
                with gc_paused():
                    value = _Placing(io.BytesIO(found), place).load()
            except Exception:  # a damaged part: read again
                break
            store.put(as_read, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
            return value
    value = compute()
    if _digest(path) == before:
        blob = _unplaced(value, place)
        named_inside = place.encode("utf-8", "surrogatepass") in blob  # a message names the path
        store.put(here if named_inside else anywhere, blob)
        store.put(as_read, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    return value


def _unplaced(value: Any, place: str) -> bytes:
    buffer = io.BytesIO()
    _Unplacing(buffer, place).dump(value)
    return buffer.getvalue()


class _Unplacing(pickle.Pickler):
    """Pickles a reading with its file's path as tokens: in a mark, as a path, as a string."""

    def __init__(self, file, place: str):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._place = place

    def persistent_id(self, obj: Any) -> Any:
        kind = type(obj)
        if kind is Mark and obj.path == self._place:
            return ("mark", obj.line, obj.col)
        if kind is str and obj == self._place:
            return ("str",)
        if isinstance(obj, PurePath) and str(obj) == self._place:
            return ("path", kind)
        return None


class _Placing(pickle.Unpickler):
    """Unpickles a reading at the path read now."""

    def __init__(self, file, place: str):
        super().__init__(file)
        self._place = place

    def persistent_load(self, token: tuple) -> Any:
        if token[0] == "mark":
            return Mark(self._place, token[1], token[2])
        if token[0] == "str":
            return self._place
        if token[0] == "path":
            return token[1](self._place)
        raise pickle.UnpicklingError(f"unknown token {token[0]!r}")


def _digest(path: Path | str) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None

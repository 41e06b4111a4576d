"""A check's result in parts, each kept under a key of its own inputs, so an edit re-runs only the parts it touches.

The parts of one check and place live in one file, kept under a :func:`result_cache.key`
(opspec's source, the installed packages, the machine and what else every part depends
on): a part's own key then needs to name only the data it reads. The file is read once
per run and written back holding the parts this run used and those the last few saves
used (going back and forth between two edits re-runs nothing); older parts are dropped.
Parts are pickled one by one: a part that cannot be read back is computed again, and a
file that cannot be read or written is passed over without a word.
"""
from __future__ import annotations

import hashlib
import pickle
from pathlib import Path
from typing import Any, Callable

from opspec.checks import result_cache
from opspec.spec import atomic
from opspec.spec.file_memo import MISSING
from opspec.spec.gc_paused import gc_paused


def part_key(*parts: str) -> str:
    """One key for the texts that identify a part's inputs."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()


KEEP_RUNS = 8  # a part no run has used for this many saves is dropped: flipping between edits keeps both sides


class PartStore:
    """Parts by key, as pickled bytes: ``get`` answers a fresh copy (callers may change what they get). Each kept
    part carries the generation (count of saves) that last used it."""

    def __init__(self, kept: dict[str, tuple[int, bytes]] | None = None, generation: int = 0, *, keeping: bool = True):
        self._kept = kept or {}
        self._generation = generation
        self._used: dict[str, bytes] = {}
        self._computed = False
        self._keeping = keeping  # False: nothing is kept, every part is computed (``--no-cache``)

    def get(self, key: str) -> Any:
        blob = self._used.get(key) or self._kept.get(key, (0, None))[1]
        if blob is None:
            return MISSING
        try:
            with gc_paused():
                value = pickle.loads(blob)
        except Exception:  # a damaged part, or one pickled by other code: computed again
            return MISSING
        self._used[key] = blob
        return value

    def put(self, key: str, value: Any) -> None:
        if self._keeping:
            self._used[key] = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            self._computed = True

    def holds(self, key: str) -> bool:
        """Whether a part is kept under ``key`` (without reading it)."""
        return key in self._used or key in self._kept

    def used_keys(self) -> frozenset[str]:
        return frozenset(self._used)

    def used_since(self, keys: frozenset[str]) -> tuple[dict[str, bytes], bool]:
        """The parts used since :meth:`used_keys` answered ``keys``, and whether any was computed: what a forked
        copy of this store hands back to the process that forked it (:meth:`take`)."""
        return {key: blob for key, blob in self._used.items() if key not in keys}, self._computed

    def take(self, used: dict[str, bytes], computed: bool) -> None:
        """Parts a forked copy of this store used or computed (:meth:`used_since`), as if used here."""
        self._used.update(used)
        self._computed |= computed

    def recall(self, key: str, compute: Callable[[], Any]) -> Any:
        """The part kept under ``key``, else ``compute()``, kept."""
        value = self.get(key)
        if value is MISSING:
            value = compute()
            self.put(key, value)
        return value

    @property
    def keeping(self) -> bool:
        return self._keeping

    @property
    def changed(self) -> bool:
        """Whether saving would change the file: parts computed, or parts used that an older generation last used."""
        return self._computed or any(self._kept[key][0] != self._generation for key in self._used)

    def to_save(self) -> tuple[int, dict[str, tuple[int, bytes]]]:
        """(generation, parts) to save: the parts used now, and those a recent generation used."""
        generation = self._generation + 1
        recent = {key: kept for key, kept in self._kept.items() if kept[0] > generation - KEEP_RUNS}
        return generation, {**recent, **{key: (generation, blob) for key, blob in self._used.items()}}


def validate_place(root: Path, backends: Path, use_torch: bool) -> str:
    """Where ``opspec validate`` keeps a clean report: per opset folder, manifests folder and torch use."""
    return f"{root}\0{backends}\0torch={use_torch}"


def validate_parts_place(use_torch: bool) -> str:
    """Where ``opspec validate`` keeps its parts: one place for every opset folder, since each part's key names
    the data it reads, not where it lies (a copy of the opset reuses the parts of the original)."""
    return f"parts of any opset folder\0torch={use_torch}"


def validate_parts_key(place: str) -> str:
    """The key validate's parts are kept under (opspec's source, the packages, the schemas)."""
    from opspec.spec import resources

    return result_cache.key([resources.schema_dir()], [place, "parts"])


def validate_store() -> PartStore:
    """The parts the last runs of ``opspec validate`` with torch kept (empty when there are none), for a command
    that needs the same verdicts (the site's row statuses) without computing them again."""
    place = validate_parts_place(True)
    return open_store("validate", place, validate_parts_key(place))


def _slot(check: str, place: str) -> Path:
    return result_cache.folder() / f"{check}-parts" / f"{hashlib.sha256(place.encode()).hexdigest()[:24]}.pickle"


def open_store(check: str, place: str, store_key: str) -> PartStore:
    """The parts kept for ``check`` at ``place`` under ``store_key``; an empty store when there are none."""
    try:
        stored = pickle.loads(_slot(check, place).read_bytes())  # plain dicts, ints and bytes: the parts stay pickled
        if stored["key"] == store_key and _well_formed(stored["parts"]):
            return PartStore(stored["parts"], int(stored["generation"]))
    except Exception:  # missing, unreadable, damaged or written by other code: start afresh
        pass
    return PartStore()


def _well_formed(parts: Any) -> bool:
    return isinstance(parts, dict) and all(
        isinstance(key, str) and isinstance(kept, tuple) and len(kept) == 2 and isinstance(kept[0], int)
        and isinstance(kept[1], bytes) for key, kept in parts.items())


def save(check: str, place: str, store_key: str, store: PartStore) -> None:
    """Keep what ``store`` used (and recent parts) under ``store_key`` when that changes the file; an unwritable
    cache is left as it is."""
    if not store.changed:
        return
    generation, parts = store.to_save()
    blob = pickle.dumps({"key": store_key, "generation": generation, "parts": parts}, protocol=pickle.HIGHEST_PROTOCOL)
    try:
        atomic.write_with(_slot(check, place), lambda path: path.write_bytes(blob))
    except OSError:
        pass

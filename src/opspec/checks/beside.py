"""Work done in a forked child while this process goes on; its result comes back pickled through a pipe.

``opspec validate`` checks the formulas (hypothesis draws, kernels) in a child while it runs
the special-case rows itself, then takes formulas beside the child: on two cores the two halves
of an empty-cache run overlap and end together. ``opspec drift`` traces its rules in two
processes the same way, each taking the next rule from a shared counter (:class:`Claims`). The
child starts with everything this process has read (the opset, torch if imported), so it
pays no import; it leaves by ``os._exit``, running no exit handler and flushing no buffer
of this process's.
"""
from __future__ import annotations

import os
import pickle
import sys
import traceback
from typing import Any, Callable, Generic, TypeVar

T = TypeVar("T")


class BesideFailed(Exception):
    """The child died, or raised: the work is the caller's to do itself."""


class Beside(Generic[T]):
    """``work()`` started in a forked child; :meth:`result` waits for its value."""

    def __init__(self, work: Callable[[], T]):
        reader, writer = os.pipe()
        self._pid = os.fork()
        if self._pid == 0:  # the child: the work, its pickled answer, and out
            os.close(reader)
            _one_thread()
            code = 0
            try:
                answer: Any = ("value", work())
            except BaseException:  # noqa: BLE001 - nothing may escape into the parent's code
                answer, code = ("raised", traceback.format_exc(limit=5)), 1
            try:
                with os.fdopen(writer, "wb") as pipe:
                    pickle.dump(answer, pipe, protocol=pickle.HIGHEST_PROTOCOL)
            finally:
                os._exit(code)
        os.close(writer)
        self._reader = reader

    def result(self) -> T:
        """The work's value; BesideFailed when the child raised or died before it answered."""
        try:
            with os.fdopen(self._reader, "rb") as pipe:
                kind, value = pickle.load(pipe)
        except (EOFError, pickle.UnpicklingError, OSError, ValueError) as err:
            kind, value = "died", f"no answer ({type(err).__name__})"
        finally:
            os.waitpid(self._pid, 0)
        if kind != "value":
            raise BesideFailed(value)
        return value


def _one_thread() -> None:
    """Kernels on one thread in a forked child: the OpenMP threads of the process it was forked from are not in it,
    so the first parallel kernel there would wait for them forever (once this process had run one)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def can_fork() -> bool:
    return hasattr(os, "fork")


class Claims:
    """Pieces of work (formulas, rules) handed out one at a time to the processes that share this counter (made
    before they fork): two processes that each take the next unclaimed piece finish together, whatever each costs."""

    def __init__(self):
        import multiprocessing

        # In memory the forked child shares, with its lock; the fork context's lock is unlinked at once, so a process
        # that leaves by os._exit leaves no semaphore behind for a resource tracker to report.
        self._next = multiprocessing.get_context("fork").Value("i", 0)

    def take(self) -> int:
        with self._next.get_lock():
            position = self._next.value
            self._next.value += 1
        return position

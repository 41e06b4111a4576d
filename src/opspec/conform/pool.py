"""A pool of worker processes for ``opspec conform -j N``: one :class:`Isolated` worker per slot.

Each slot is driven by a thread of the parent: it takes the next case, hands it to
its worker and waits (the wait releases the GIL), so N cases run at once in N
processes. Records come back in the order cases finish; the caller journals them
and puts the report back in the plan's order. A failure, crash or timeout costs
its own worker only: the other slots go on, and the slot starts a fresh worker for
its next case (see :mod:`.isolation`). Every case draws its inputs from its own
seed and resets dynamo before it runs, so which worker runs it, and when, does not
change its verdict.
"""
from __future__ import annotations

import os
import queue
import threading
from typing import Any, Callable, Iterable, Iterator

from opspec.conform.cases import Case
from opspec.conform.isolation import Isolated
from opspec.conform.runner import Settings

Job = Callable[[Isolated, Case], dict[str, Any]]


def default_jobs() -> int:
    """The cores this process may use (its affinity mask where the OS has one), at least 1."""
    counted = getattr(os, "process_cpu_count", None)  # Python 3.13
    if counted is not None:
        return counted() or 1
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # no affinity masks on this OS
        return os.cpu_count() or 1


class Pool:
    """``jobs`` workers; :meth:`run` yields ``(case, result)`` as each case finishes (what ``job`` made of the
    worker's result)."""

    def __init__(self, settings: Settings, timeout: float | None, jobs: int):
        if jobs < 1:
            raise ValueError("a pool needs at least one worker")
        self.workers = [Isolated(settings, timeout) for _ in range(jobs)]
        self._stopping = threading.Event()
        self._threads: dict[int, threading.Thread] = {}  # worker index -> the thread driving it

    @property
    def restarts(self) -> int:
        return sum(worker.restarts for worker in self.workers)

    def start(self) -> dict[str, Any]:
        """Start the first worker, which resolves the backend; its description. The others start with their
        first case, so a run of fewer cases than workers starts no more workers than it needs."""
        return self.workers[0].start()

    def stop(self) -> None:
        """Hand out no more cases; those running finish and are yielded."""
        self._stopping.set()

    def run(self, cases: Iterable[Case], job: Job) -> Iterator[tuple[Case, dict[str, Any]]]:
        """``job(worker, case)`` for every case, in ``len(workers)`` threads; an exception a job raises stops
        the pool and is raised here once the running cases are done."""
        todo: queue.SimpleQueue = queue.SimpleQueue()
        for case in cases:
            todo.put(case)
        finished: queue.SimpleQueue = queue.SimpleQueue()
        threads = [threading.Thread(target=self._drive, args=(worker, todo, finished, job), daemon=True,
                                    name=f"opspec-conform-{index}")
                   for index, worker in enumerate(self.workers[:max(1, todo.qsize())])]
        for index, thread in enumerate(threads):
            self._threads[index] = thread
            thread.start()
        running, failure = len(threads), None
        while running:
            item = finished.get()
            if item is None:
                running -= 1
            elif isinstance(item, BaseException):
                failure = failure or item
                self.stop()
            else:
                yield item
        if failure is not None:
            raise failure

    def _drive(self, worker: Isolated, todo: queue.SimpleQueue, finished: queue.SimpleQueue, job: Job) -> None:
        try:
            while not self._stopping.is_set():
                try:
                    case = todo.get_nowait()
                except queue.Empty:
                    break
                finished.put((case, job(worker, case)))
        except BaseException as err:  # noqa: BLE001 - handed to the parent's thread, which raises it
            finished.put(err)
        finally:
            finished.put(None)

    def close(self) -> None:
        """Idle workers are told to exit; one still running a case (the run was interrupted) is killed at once."""
        self.stop()
        for index, worker in enumerate(self.workers):
            thread = self._threads.get(index)
            if thread is not None and thread.is_alive():
                worker.kill()
            else:
                worker.close()

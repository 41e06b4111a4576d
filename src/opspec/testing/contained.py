"""A call that may corrupt the process, made in a forked child: what it did, and how the child ended.

Inputs the opset declares out of contract (an index past the plane given to a pooling
backward) can make a CPU kernel write outside its buffers and return as if nothing
happened; the heap is found corrupt later, at some free (``free(): invalid next size``),
and the process aborts. Such a call is made in a child forked from this process (torch
already imported, so it costs milliseconds, not an interpreter start): the child reports
the outcome before it frees anything, then frees its tensors and allocates again, so a
corruption shows up as the child's death, which the parent records and survives.
"""
from __future__ import annotations

import faulthandler
import json
import os
import signal
from dataclasses import dataclass
from typing import Any, Callable

WAIT_S = 60  # a child still running by then has hung (a kernel looping on a bad index)


@dataclass(frozen=True)
class Contained:
    kind: str  # "returned", "raised", or "no answer" (the child died or hung before it could say)
    detail: str  # the result or exception as one line, or how the child ended
    ended: str  # "exit 0", "killed by SIGABRT", ...: how the child ended after answering
    classes: tuple[str, ...] = ()  # a raised exception's classes, most derived first (plain and qualified names)

    def __str__(self) -> str:
        text = f"{self.kind} {self.detail}".strip()
        return text if self.ended == "exit 0" else f"{text}; the child then ended: {self.ended}"


def run(call: Callable[[], Any], show: Callable[[Any], str]) -> Contained:
    """``call()`` in a forked child: whether it returned (``show`` of the result) or raised, and how the child ended."""
    return run_each([call], show)[0]


def run_each(calls: list[Callable[[], Any]], show: Callable[[Any], str]) -> list[Contained]:
    """Each call in turn in one forked child (one fork for a row's dtypes); a call the child did not answer, because
    an earlier one or itself killed it, is "no answer". Every answer carries how the child ended."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer first (the result is freed as it is shown), then allocate, so a corrupt heap aborts here
        os.close(reader)
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, 2)  # glibc's report of the corruption it finds is the child's death, told by the parent
        faulthandler.disable()  # nor a traceback of the crash, on whatever file the parent gave it
        code = 0
        try:
            for call in calls:
                os.write(writer, (json.dumps(answer(call, show)) + "\n").encode())
                churn()
        except BaseException:  # noqa: BLE001 - nothing may escape into the parent's code
            code = 70
        finally:
            os._exit(code)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        signal.signal(signal.SIGALRM, _hung)
        signal.alarm(WAIT_S)
        try:
            text = pipe.read()
            _, status = os.waitpid(pid, 0)
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            text, status = b"", None
        finally:
            signal.alarm(0)
    ended = "killed after hanging for %d s" % WAIT_S if status is None else _ended(status)
    answers = [json.loads(line) for line in text.decode().splitlines()]
    found = [Contained(a["kind"], a["detail"], ended, tuple(a.get("classes", ()))) for a in answers]
    return found + [Contained("no answer", "", ended)] * (len(calls) - len(found))


def answer(call: Callable[[], Any], show: Callable[[Any], str]) -> dict:
    try:
        return {"kind": "returned", "detail": show(call())}
    except Exception as err:  # the exception is the answer
        classes = [name for cls in type(err).__mro__ for name in (cls.__name__, f"{cls.__module__}.{cls.__name__}")]
        return {"kind": "raised", "detail": show(err), "classes": classes}


def churn() -> None:
    """Allocate and free some memory of several sizes: glibc checks the chunks it touches."""
    import torch

    for size in (16, 256, 4096, 65536):
        blocks = [torch.empty(size) for _ in range(32)]
        del blocks


def _hung(signum, frame):
    raise TimeoutError


def _ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        return ended_by_signal(os.WTERMSIG(status))
    return f"exit {os.WEXITSTATUS(status)}"


def ended_by_signal(number: int) -> str:
    return f"killed by {signal.Signals(number).name}"

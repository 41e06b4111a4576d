"""Cases in a worker process, so a backend that segfaults, aborts or hangs costs one case.

The worker is forked from a forkserver that has torch and opspec imported, so a
replacement after a crash starts in well under a second. The parent sends one
case at a time and waits ``timeout`` seconds for its record: a worker that dies
gives ``crash`` (with the signal), one that does not answer is killed (with the
process group it leads, compile helpers included) and gives ``timeout``.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import time
from pathlib import Path
from typing import Any

from opspec.conform import attribution, torch_logs
from opspec.conform.backends import UnknownBackend
from opspec.conform.cases import Case
from opspec.conform.runner import WARM_OPSET, CaseRunner, Settings

STARTUP_TIMEOUT_S = 300.0  # importing torch and resolving the backend, on a loaded machine
_context = None


class WorkerError(RuntimeError):
    """The worker could not be started (the backend failed to load): one line."""


def _mp_context(opset: str | None):
    global _context
    if _context is None:
        # The forkserver starts with the first worker and inherits this environment:
        # it preloads the opset version this run uses (the newest when none is named).
        os.environ[WARM_OPSET] = opset or ""
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(["opspec.conform.warm"])
    return _context


def _die_with_parent() -> None:
    """Linux: have the kernel kill the worker when its parent goes, so a killed run leaves no orphan hanging."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _serve(connection, settings: Settings) -> None:
    os.setsid()  # its own process group, so a timeout kills compile helpers too
    _die_with_parent()
    # A worker inherits the forkserver's start method, under which every multiprocessing lock is a named semaphore
    # (tqdm takes one inside torch.fx's interpreter). A worker killed by its case leaves it behind, and the resource
    # tracker warns of it when the run ends. Under fork the worker's own locks are anonymous: nothing to leave.
    multiprocessing.set_start_method("fork", force=True)
    if settings.log_file:  # what torch and native libraries print (guards, ONNX Runtime's log) is not a verdict
        try:
            torch_logs.redirect_output(settings.log_file)
        except OSError as err:  # the user's path, not the backend: said so, before the backend is touched
            connection.send(("error", f"{settings.log_file}: cannot open the log file ({(err.strerror or str(err)).lower()})"))
            return
    try:
        runner = CaseRunner(settings)
    except UnknownBackend as err:  # already one line naming the backend
        connection.send(("error", str(err)))
        return
    except Exception as err:  # noqa: BLE001 - reported to the parent as one line
        connection.send(("error", f"backend {settings.backend}: {type(err).__name__}: {err}"))
        return
    connection.send(("ready", runner.backend.describe()))
    while True:
        try:
            message = connection.recv()
        except (EOFError, ConnectionError):  # the parent is gone
            return
        if message is None:
            return
        if isinstance(message, tuple):  # ("attribute", case, record, repro): a lost case's example, re-checked
            _, case, record, repro = message
            blame = runner.attribute_lost(Case(**case), record, repro,
                                          lambda layer, name: connection.send(("layer", (layer, name))))
            connection.send(("blame", blame))
            continue
        connection.send(("record", runner.run(Case(**message))))


class Isolated:
    """Runs cases in a worker; ``run`` always returns a record, whatever happens to the worker."""

    def __init__(self, settings: Settings, timeout: float | None):
        self.settings = settings
        self.timeout = timeout
        self.process = None
        self.connection = None
        self.restarts = 0
        self.description: dict[str, Any] | None = None  # the backend as the worker resolved it

    def start(self) -> dict[str, Any]:
        """Start the worker, which resolves the backend (the run's only resolution); its description."""
        if self.process is None:
            self._start()
        assert self.description is not None
        return self.description

    def _start(self) -> None:
        context = _mp_context(self.settings.opset)
        parent, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, self.settings), daemon=True)
        self.process.start()
        child.close()
        self.connection = parent
        if not parent.poll(STARTUP_TIMEOUT_S):
            self._kill()
            raise WorkerError(f"backend {self.settings.backend}: worker did not start within {STARTUP_TIMEOUT_S:.0f}s")
        try:
            kind, payload = parent.recv()
        except EOFError:
            code = self._reap()
            raise WorkerError(f"backend {self.settings.backend}: worker died while starting ({_exit_reason(code)})") from None
        if kind == "error":
            self._reap()
            raise WorkerError(payload)
        self.description = payload

    def run(self, case: Case) -> dict[str, Any]:
        if self.process is None:
            self._start()
        started = time.perf_counter()
        assert self.connection is not None
        self.connection.send(case.as_dict())
        ready = self.connection.poll(self.timeout)
        elapsed = round(time.perf_counter() - started, 3)
        if ready:
            try:
                kind, record = self.connection.recv()
                if record.get("status") == "crash":  # a device fault: the worker's device context is poisoned
                    self._kill()
                    self.restarts += 1
                return record
            except (EOFError, ConnectionError):
                code = self._reap()
                return self._lost(case, "crash", f"worker died: {_exit_reason(code)}", elapsed)
        self._kill()
        return self._lost(case, "timeout", f"no result within {self.timeout:g}s; worker killed", elapsed)

    def _lost(self, case: Case, status: str, message: str, elapsed: float) -> dict[str, Any]:
        self.restarts += 1
        record = {**case.as_dict(), "status": status, "message": message, "examples": 0, "compiles": 0,
                  "duration_s": elapsed, **attribution.unchecked(status).as_dict(),
                  "evidence": {"executed": "unknown", "source": "none", "note": f"the worker was lost ({status})"},
                  "executed": "unknown"}
        if self.settings.repro_dir:  # the worker wrote the example it was running before it ran it
            repro = Path(self.settings.repro_dir) / f"{case.id}.py"
            if repro.is_file():
                record["repro"] = repro.read_text(encoding="utf-8")
                record["repro_file"] = str(repro)
                record.update(self._attribute(case, record, repro))
        return record

    def _attribute(self, case: Case, record: dict[str, Any], repro: Path) -> dict[str, str]:
        """Run the lost case's example through the reference layers in a fresh worker; one that dies there too
        puts the blame on that layer of the front end."""
        try:
            self._start()
        except WorkerError:
            return attribution.unchecked(record["status"]).as_dict()
        assert self.connection is not None
        self.connection.send(("attribute", case.as_dict(), {k: record[k] for k in ("status", "message")}, str(repro)))
        layer = None
        while True:
            try:
                if not self.connection.poll(self.timeout):
                    self._kill()
                    lost = "timeout"
                    break
                kind, payload = self.connection.recv()
            except (EOFError, ConnectionError):
                self._reap()
                lost = "crash"
                break
            if kind == "blame":
                return payload
            layer = payload
        if layer is None:
            return attribution.unchecked(record["status"]).as_dict()
        return attribution.Blame("frontend", layer[0], f"{layer[1]} ends in a {lost} too").as_dict()

    def _reap(self) -> int | None:
        process, self.process = self.process, None
        if self.connection is not None:
            self.connection.close()
            self.connection = None
        if process is None:
            return None
        process.join(10)
        return process.exitcode

    def _kill(self) -> None:
        if self.process is not None and self.process.pid:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)  # the worker leads its own group (setsid)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        self._reap()

    def kill(self) -> None:
        """End the worker now, whatever it is doing (its process group with it)."""
        self._kill()

    def close(self) -> None:
        if self.process is not None and self.connection is not None:
            try:
                self.connection.send(None)
            except (BrokenPipeError, OSError):
                pass
            self.process.join(5)
            if self.process.is_alive():
                self._kill()
        self._reap()


def _exit_reason(code: int | None) -> str:
    if code is None:
        return "exit status unknown"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"

"""Cases in a worker process, so a backend that segfaults, aborts or hangs costs one case.

The worker is forked from a forkserver that has torch and opspec imported, so a
replacement after a crash starts in well under a second. The parent sends one
case at a time and waits ``timeout`` seconds for its result: a worker that dies
gives ``crash`` (with the signal), one that does not answer is killed (with the
process group it leads, compile helpers included) and gives ``timeout``.

Faults stay with the case that caused them. A worker whose case did not end
cleanly (fail, compile-error, run-error, crash, timeout), or in which a program
shared by several calls failed and was set aside, is replaced before its next
case: a compiler that poisons its process after one failure (every later call
raising the same error) would otherwise hand that error to whichever case ran next
on that worker, and verdicts would depend on order and ``-j``. So every case starts
in a process that has seen only clean cases.

Inside a case the same holds once more: a failing case runs a second time in a fresh worker
*alone*: every drawn example and row in a program of its own, its repro written before it
runs. That run's result is the one kept: the first unit that fails by itself, in a process
nothing failed in before, whose repro replays it (a crash's repro is the row or example that
crashed). Where the first run said otherwise (a program shared by several rows failed), the
result keeps it as ``first_run``.

A timeout runs a second time too, as it ran (alone it would compile more and take longer),
in a fresh worker: a case that only ran out of time while other workers' cases shared the
cores is not a hang. The second run's result is kept, the timeout as its ``first_run``; a
real hang costs its limit twice.
"""
from __future__ import annotations

import ast
import multiprocessing
import os
import re
import signal
import time
from pathlib import Path
from typing import Any

from opspec.conform import attribution, torch_logs
from opspec.conform.backends import UnknownBackend
from opspec.conform.cases import Case
from opspec.conform.runner import TAINTED, WARM_OPSET, CaseRunner, Result, Settings

STARTUP_TIMEOUT_S = 300.0  # importing torch and resolving the backend, on a loaded machine
# a worker's raw outcomes after which it is not trusted with another case (a clean one leaves it in use)
REPLACE_AFTER = ("fail", "compile-error", "run-error", "crash", "timeout")
CONFIRM = ("fail", "compile-error", "run-error", "crash")  # run again alone in a fresh worker before recorded
DIAGNOSTIC_HEADER = "# the backend's diagnostic: its error's lines after the first, then the first lines it printed:"
POLL_S = 0.5  # how often the parent looks at a running case's output (a runaway one is cut: torch_logs.rein_in)
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
        if isinstance(message, tuple) and message[0] == "alone":  # ("alone", case, suspect): a failure confirmed
            connection.send(("result", _captured_run(runner, Case(**message[1]), True, settings, message[2])))
            continue
        if isinstance(message, tuple):  # ("attribute", case, result, repro): a lost case's example, re-checked
            _, case, result, repro = message
            blame = runner.attribute_lost(Case(**case), result, repro,
                                          lambda layer, name: connection.send(("layer", (layer, name))))
            connection.send(("blame", blame))
            continue
        connection.send(("result", _captured_run(runner, Case(**message), False, settings)))


def _captured_run(runner: CaseRunner, case: Case, alone: bool, settings: Settings,
                  suspect: str | None = None) -> Result:
    """The case's result, what it printed captured, bounded and appended to the log (torch_logs.settle)."""
    if not settings.log_file:
        return runner.run(case, alone=alone, suspect=suspect)
    part = torch_logs.part_path(settings.log_file, case.id)
    with torch_logs.captured(part, settings.log_file):
        result = runner.run(case, alone=alone, suspect=suspect)
    settled = torch_logs.settle(part, settings.log_file, f"{case.op} {case.dtype} {case.device}")
    return with_log(result, settled)


# dynamo names each symbolic size s0, s1, ... in the order a process creates them: the same failure printed in
# two processes differs only there, so a diagnostic keeps the sizes' places and drops the numbering
_SIZES = re.compile(r"size=\(([^()]*)\)")
_SYMBOL = re.compile(r"(?<![\w.])s\d+(?![\w.])")


# torch's C++ and Python log lines start with the time and the process: "[W1206 11:15:36.706138194 File.cpp:621]",
# "E1206 11:12:11.179000 30151 torch/file.py:1608]"; the level and the place stay
_STAMP = re.compile(r"^(\[?[DIWEF])\d{4} \d{2}:\d{2}:\d{2}\.\d+(?: \d+)? ")


def _steady(line: str) -> str:
    line = _STAMP.sub(r"\1 ", line)
    return _SIZES.sub(lambda sizes: "size=(" + _SYMBOL.sub("s?", sizes.group(1)) + ")", line)


def with_log(result: Result, settled: torch_logs.Settled) -> Result:
    """The result with what its case printed: the amount and what was cut, and for a failure the first lines,
    in the result and at the head of its repro, where whoever replays it reads them."""
    if settled.bytes:
        result["log"] = settled.as_dict()
    if result.get("status") in REPLACE_AFTER and (settled.head or result.get("diagnostic")):
        # what the error carried after its first line, then what the backend printed
        result["diagnostic"] = [_steady(line) for line in (*result.get("diagnostic", ()), *settled.head)]
        if result.get("repro"):
            lines = result["repro"].split("\n")
            comment = [DIAGNOSTIC_HEADER, *(f"#   {line}" for line in result["diagnostic"])]
            result["repro"] = "\n".join([lines[0], *comment, *lines[1:]])
            if result.get("repro_file") and Path(result["repro_file"]).is_file():
                Path(result["repro_file"]).write_text(result["repro"], encoding="utf-8")
    return result


class Isolated:
    """Runs cases in a worker; ``run`` always returns a result, whatever happens to the worker."""

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

    def run(self, case: Case) -> Result:
        result = self._run(case, alone=False)
        timed_out = None
        if result["status"] == "timeout":  # lost to the cores' other work, or a hang: once more, as it ran
            timed_out = {"status": result["status"], "message": result.get("message", "")}
            result = self._again(case, result, alone=False)
            if result["status"] == "timeout":
                return result
        if result["status"] not in CONFIRM or result.get("message", "").startswith("device fault"):
            # a device fault is replayed nowhere: the device, not the case, decided it
            return {**result, "first_run": timed_out} if timed_out else result
        first = {"status": result["status"], "message": result.get("message", "")}
        result = self._again(case, result, alone=True, suspect=(result.get("special_case") or {}).get("row"))
        if timed_out or (result["status"], result.get("message", "")) != (first["status"], first["message"]):
            result["first_run"] = timed_out or first
        return result

    def _again(self, case: Case, before: Result, alone: bool, suspect: str | None = None) -> Result:
        """The case run once more in a fresh worker, the time of both runs on its result."""
        result = self._run(case, alone=alone, suspect=suspect)
        result["duration_s"] = round(before.get("duration_s", 0.0) + result.get("duration_s", 0.0), 3)
        return result

    def _run(self, case: Case, alone: bool, suspect: str | None = None) -> Result:
        if self.process is None:
            self._start()
        started = time.perf_counter()
        assert self.connection is not None
        self.connection.send(("alone", case.as_dict(), suspect) if alone else case.as_dict())
        part = torch_logs.part_path(self.settings.log_file, case.id) if self.settings.log_file else None
        ready, cut = self._wait(part)
        elapsed = round(time.perf_counter() - started, 3)
        if ready:
            try:
                kind, result = self.connection.recv()
            except (EOFError, ConnectionError):
                code = self._reap()
                return self._settled(self._lost(case, "crash", f"worker died: {_exit_reason(code)}", elapsed,
                                                attribute=alone), case, part, cut)
            if cut and "log" in result:  # the parent cut a runaway capture the worker then settled
                result["log"]["bytes"] += cut
                result["log"]["cut_bytes"] += cut
            if result.pop(TAINTED, False) or result.get("status") in REPLACE_AFTER:
                self._kill()  # the next case gets a process no failure has touched
                self.restarts += 1
            return result
        self._kill()
        return self._settled(self._lost(case, "timeout", f"no result within {self.timeout:g}s; worker killed", elapsed),
                             case, part, cut)

    def _wait(self, part: Path | None) -> tuple[bool, int]:
        """(whether the worker answered within the timeout, bytes of its capture cut meanwhile)."""
        assert self.connection is not None
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        cut = 0
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False, cut
            if self.connection.poll(POLL_S if left is None else min(POLL_S, left)):
                return True, cut
            if part is not None:
                cut += torch_logs.rein_in(part)

    def _settled(self, result: Result, case: Case, part: Path | None, cut: int) -> Result:
        """A lost case's capture, which its worker did not live to settle, settled here."""
        if part is None or not (part.exists() or part.with_suffix(".head").exists()):
            return result
        settled = torch_logs.settle(part, self.settings.log_file, f"{case.op} {case.dtype} {case.device}", cut)
        return with_log(result, settled)

    def _lost(self, case: Case, status: str, message: str, elapsed: float, attribute: bool = True) -> Result:
        self.restarts += 1
        result = {**case.as_dict(), "status": status, "message": message, "examples": 0, "compiles": 0,
                  "duration_s": elapsed, **attribution.unchecked(status).as_dict(),
                  "evidence": {"executed": "unknown", "source": "none", "note": f"the worker was lost ({status})"},
                  "executed": "unknown"}
        if self.settings.repro_dir:  # the worker wrote the example it was running before it ran it
            repro = Path(self.settings.repro_dir) / f"{case.id}.py"
            if repro.is_file():
                result["repro"] = repro.read_text(encoding="utf-8")
                result["repro_file"] = str(repro)
                result.update(decided_by(result["repro"]))
                if attribute:  # a first run's crash is run again alone, which attributes it
                    result.update(self._attribute(case, result, repro))
        return result

    def _attribute(self, case: Case, result: Result, repro: Path) -> dict[str, str]:
        """Run the lost case's example through the reference layers in a fresh worker; one that dies there too
        puts the blame on that layer of the front end."""
        try:
            self._start()
        except WorkerError:
            return attribution.unchecked(result["status"]).as_dict()
        assert self.connection is not None
        self.connection.send(("attribute", case.as_dict(), {k: result[k] for k in ("status", "message")}, str(repro)))
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
                self._kill()  # it replayed a failing example: not trusted with the next case either
                return payload
            layer = payload
        if layer is None:
            return attribution.unchecked(result["status"]).as_dict()
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


def decided_by(repro: str) -> dict[str, Any]:
    """What a lost case was running, from the repro it wrote before it ran it (its ``CASE = {...}`` line)."""
    line = next((line for line in repro.splitlines() if line.startswith("CASE = ")), None)
    try:
        described = ast.literal_eval(line.removeprefix("CASE = ")) if line else {}
    except (ValueError, SyntaxError):
        described = {}
    if "special_case" in described:
        return {"decided_by": f"special case {described['special_case']} ({described['row_dtype']})",
                "special_case": {"row": described["special_case"], "says": described.get("row_says", ""),
                                 "dtype": described["row_dtype"]}}
    if "accuracy_samples" in described:
        return {"decided_by": "accuracy program"}
    return {"decided_by": "a drawn example (the repro's)"} if described else {}


def _exit_reason(code: int | None) -> str:
    if code is None:
        return "exit status unknown"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"

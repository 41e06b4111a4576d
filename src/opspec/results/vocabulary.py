"""The words of a conformance report, in the order reports and tables list them.

A report from another tool may carry a status not listed here; readers keep it
(the site shows it after the known ones) rather than refuse the report.
"""
from __future__ import annotations

# a case's status: final (expectations applied) and outcome (before them)
STATUSES = ("pass", "undelegated", "fallback", "unverified", "fail", "xfail", "xpass", "skip", "compile-error",
            "run-error", "crash", "timeout")
# statuses that leave the exit code at 0: a right answer whoever computed it, an expected failure, a skip
CLEAN = ("pass", "undelegated", "fallback", "unverified", "xfail", "skip")
PASSING = ("pass",)  # the only status that counts as a pass: the backend's target computed the right answer
# right answers not computed by the backend's target, or with nobody able to tell who did
RIGHT_ANSWERS = ("undelegated", "fallback", "unverified")

# who computed the op (a record's ``executed``), from the backend's declared target outwards
EXECUTED = ("target", "runtime", "pytorch", "partial", "unknown")
FALLBACK = ("pytorch", "partial")  # a right answer computed here is ``fallback``, never ``pass``
# the status a right answer gets at each level of who computed it
PASSING_STATUS = {"target": "pass", "runtime": "undelegated", "pytorch": "fallback", "partial": "fallback",
                  "unknown": "unverified"}
EVIDENCE_SOURCES = ("hook", "partition", "generated-code", "reference", "whole-program", "none")

# who failed, for every outcome but pass
BLAME = ("frontend", "backend", "opspec")

# an op's status in the backend's lowering manifest
LOWERING = ("lowered", "library", "fallback", "unsupported", "undeclared")
OWN_LOWERING = ("lowered", "library")  # the backend's own code: generated, or a library kernel it calls

# the functionalization suite's statuses (``--functionalization``)
FUNCTIONALIZATION = ("pass", "not-functional", "fail", "export-error", "run-error", "no-program", "xfail", "xpass",
                     "skip")
FUNCTIONALIZATION_CLEAN = ("pass", "xfail", "skip")

# how tables order statuses, third-party ones included ("error": some tools' word for a crash)
STATUS_ORDER = ("pass", "undelegated", "fallback", "unverified", "fail", "compile-error", "run-error", "crash", "timeout",
                "error", "xfail", "xpass", "skip")
GOOD = frozenset(PASSING)
# right answers the target did not compute, known failures, skips: not good, not a finding
EXPECTED = frozenset({"xfail", "skip", *RIGHT_ANSWERS})


def status_key(status: str) -> tuple[int, str]:
    """Sorts statuses as tables show them: the known ones in STATUS_ORDER, any other after them by name."""
    return (STATUS_ORDER.index(status) if status in STATUS_ORDER else len(STATUS_ORDER), status)

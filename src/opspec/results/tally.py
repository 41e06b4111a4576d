"""The sections a report computes from its records: the counts, who failed, root causes, stale expectations.

A run computes them when it finishes; ``opspec report merge`` and a splice compute them
again over the joined records. Nothing here needs torch.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

from opspec.results.model import CaseRecord, RootCause
from opspec.results.vocabulary import BLAME, EXECUTED, STATUSES


def summary(records: Iterable[CaseRecord]) -> dict[str, int]:
    """Cases per status, every status of the vocabulary named; with ``cases``, ``compiles`` and the most one case
    compiled."""
    records = list(records)
    counts = Counter(r.status for r in records)
    compiles = [r.compiles or 0 for r in records]
    return {**{status: counts.get(status, 0) for status in STATUSES},
            "cases": len(records), "compiles": sum(compiles), "max_compiles_per_case": max(compiles, default=0)}


def executed_counts(records: Iterable[CaseRecord]) -> dict[str, int]:
    """How many cases each party executed, over the cases that ran."""
    counts = Counter(r.executed or "unknown" for r in records if r.final_outcome != "skip")
    return {party: counts.get(party, 0) for party in EXECUTED}


def blame_counts(records: Iterable[CaseRecord]) -> dict[str, int]:
    """Who failed, over the cases whose outcome was not a pass."""
    counts = Counter(r.blame for r in records if r.blame)
    return {party: counts.get(party, 0) for party in BLAME}


# a number standing alone: the digits inside a name (float32, int64, conv2d, s0, a row id's alpha-2) are part of it
_NUMBERS = re.compile(r"(?<![\w.])(?<!\w-)-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?!\w)|\bs\d+\b|\bu\d+\b")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def cause_of(record: CaseRecord) -> str:
    """A failure's message with its numbers, sizes, symbols and quoted names taken out: failures sharing it
    share a root cause (``No ONNX function found for <OpOverload(op='aten.X', ...)>`` is one cause for every X)."""
    first = next((line for line in str(record.message).splitlines() if line.strip()), "")
    return _NUMBERS.sub("N", _QUOTED.sub("'…'", first.strip()))[:160]


def root_causes(records: Iterable[CaseRecord]) -> list[RootCause]:
    """Cases that did not pass, grouped by (who failed, where, what): biggest group first."""
    groups: dict[tuple, list[CaseRecord]] = {}
    for r in records:
        outcome = r.final_outcome
        if outcome in ("pass", "skip") and r.status != "xpass" or not r.blame:
            continue
        groups.setdefault((r.blame, r.blame_stage or "", outcome, cause_of(r)), []).append(r)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    return [RootCause(blame=blame, stage=stage, outcome=outcome, cause=cause, count=len(members),
                      cases=tuple(r.case.name for r in members))
            for (blame, stage, outcome, cause), members in ordered]


def stale_expectations(records: Iterable[CaseRecord]) -> list[str]:
    """One line per (xfail entry, device) with passing cases: stale there, in all its cases or some.

    An entry stale on one device and still failing on another should name the device
    it is for (``devices:``); one stale in every case should go, or name the torch
    versions it holds for (``torch:``)."""
    by_entry: dict[tuple[str, str], list[str]] = {}
    for record in records:
        if record.expectation is not None and record.expectation.status == "xfail":
            by_entry.setdefault((record.expectation.where or "", record.device), []).append(record.status)
    lines = []
    for (where, device), statuses in sorted(by_entry.items()):
        passing = statuses.count("xpass")
        if not passing:
            continue
        failing_elsewhere = sorted(d for (w, d), s in by_entry.items() if w == where and d != device and "xpass" not in s)
        advice = f"; it still fails on {', '.join(failing_elsewhere)}: limit it with devices" if failing_elsewhere else ""
        scope = f"all {passing}" if passing == len(statuses) else f"{passing} of {len(statuses)}"
        lines.append(f"{where}: stale expectation on {device}: {scope} of its cases pass{advice}")
    return lines

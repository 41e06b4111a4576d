"""``--shard K/N``: a deterministic, cost-balanced split of a run's cases that new ops do not reshuffle.

The unit is an op (all its dtypes go together). Ops are laid out in the order of a
hash of their name, and that list is cut into N contiguous runs of about equal
measured cost (the cost table, ``conformance/costs/case_costs.yaml``, holds each
op's seconds per case per backend, measured from the published reports). Only ops
the table knows take part in placing the cuts; an op it does not know (one added
to the opset since the table was measured) joins the shard of the known op just
before it in hash order. So adding an op never moves another op between shards;
the split moves only when the table is measured again, and a report records the
table's digest, so parts cut from two tables are never merged.
"""
from __future__ import annotations

import bisect
import functools
import hashlib
import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from opspec.conform.cases import Case
from opspec.results import model
from opspec.spec import load, resources

SCHEMA = "case_costs.schema.json"
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Costs:
    """Seconds per case of each op for one backend (or relative costs, for a backend the table lacks)."""

    per_case: Mapping[str, float]
    column: str  # the table's column used: a backend name, or "relative"
    digest: str  # the table file's sha256, so parts cut from different tables are told apart

    def of(self, op: str) -> float | None:
        return self.per_case.get(op)


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    @classmethod
    def parse(cls, text: str) -> "Shard":
        match = _SHARD.match(text)
        if not match:
            raise ValueError(f"{text!r}: expected K/N, e.g. 2/3")
        index, count = int(match.group(1)), int(match.group(2))
        if count < 1 or not 1 <= index <= count:
            raise ValueError(f"{text!r}: K must be between 1 and N (and N at least 1)")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def select(self, cases: list[Case], costs: Costs) -> list[Case]:
        """This shard's cases, in the plan's order."""
        shard_of = assign(cases, costs, self.count)
        return [case for case in cases if shard_of[case.op] == self.index]

    def describe(self, selected: list[Case], costs: Costs) -> model.Shard:
        """What the report header records: which part, of how many, cut by which table, holding how many cases."""
        return model.Shard(index=self.index, count=self.count, costs=costs.digest, cases=len(selected))


def position(op: str) -> int:
    """An op's place in the hash order: fixed by its name alone."""
    return int.from_bytes(hashlib.sha256(op.encode("utf-8")).digest()[:8], "big")


def assign(cases: list[Case], costs: Costs, count: int) -> dict[str, int]:
    """Each op of ``cases`` -> its shard (1..count)."""
    cases_per_op: dict[str, int] = {}
    for case in cases:
        cases_per_op[case.op] = cases_per_op.get(case.op, 0) + 1
    known = sorted((op for op in cases_per_op if costs.of(op) is not None), key=position)
    weight = {op: costs.of(op) * cases_per_op[op] for op in known}
    total = sum(weight.values())
    shard_of: dict[str, int] = {}
    done = 0.0
    for op in known:  # each op goes where the middle of its cost falls: contiguous runs of about total/count
        middle = done + weight[op] / 2
        shard_of[op] = min(count, int(middle * count / total) + 1) if total > 0 else 1
        done += weight[op]
    places = [position(op) for op in known]
    for op in cases_per_op:
        if op not in shard_of:  # unmeasured: the shard of the known op before it in hash order (else the first)
            before = bisect.bisect_right(places, position(op)) - 1
            shard_of[op] = shard_of[known[before]] if before >= 0 else 1
    return shard_of


# ---- the cost table ----

def table_path() -> Path:
    return resources.costs_dir() / "case_costs.yaml"


@functools.lru_cache(maxsize=None)
def _table(path: Path) -> tuple[dict, str]:
    data = load.read_checked(path, SCHEMA, "cost table")
    return data, hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def costs_for(backend: str, path: Path | None = None) -> Costs:
    """The backend's column of the cost table; a backend the table lacks gets the relative column
    (each op's cost across the measured backends, in units of a backend's median case)."""
    data, digest = _table(path or table_path())
    column = backend if backend in data["backends"] else "relative"
    per_case = dict(data["backends"][backend] if column == backend else data["relative"])
    return Costs(per_case, column, digest)


def relative_costs(columns: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Each op's median over the backends of its cost divided by that backend's median case."""
    scaled: dict[str, list[float]] = {}
    for per_case in columns.values():
        median = statistics.median(per_case.values())
        for op, seconds in per_case.items():
            scaled.setdefault(op, []).append(seconds / median)
    return {op: round(statistics.median(values), 3) for op, values in sorted(scaled.items())}

"""Measure what each conformance case costs, for ``opspec conform --shard`` (conformance/costs/case_costs.yaml).

Maintainer script. Reads the published reports (``conformance/results/*.json``, or
the reports given) and writes, per backend, each op's seconds per case: the mean
``duration_s`` of its records there (a published report, which leaves the records'
durations out, keeps those means in its header's ``op_seconds``). A backend without a column (a third-party
one) is split by the ``relative`` column: each op's median over the measured
backends of its cost in units of that backend's median case. Re-measuring moves
the cuts between shards, so parts of one split must all run with the same table
(a report records its digest; ``opspec report merge`` refuses parts that differ).

    python tools/measure_costs.py                    # rewrite the table from conformance/results
    python tools/measure_costs.py --check            # exit 1 if the table is not what the reports say
    python tools/measure_costs.py REPORT.json ...    # from other reports
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from opspec.conform.shards import relative_costs  # noqa: E402
from opspec.results import publish  # noqa: E402
from opspec.results.model import Report  # noqa: E402
from opspec.spec import atomic, yamlio  # noqa: E402

TABLE = ROOT / "conformance" / "costs" / "case_costs.yaml"
HEADER = "# yaml-language-server: $schema=../../opset/schema/case_costs.schema.json\n"
FLOOR_S = 0.01  # a case is never free: the worker round trip alone costs about this


def measure(reports: list[Path]) -> dict:
    columns: dict[str, dict[str, float]] = {}
    for path in sorted(reports):
        report = Report.load(path)
        means = report.header.op_seconds if all(record.duration_s is None for record in report.records) else None
        means = means if means is not None else publish.op_seconds(report)
        columns[report.backend_name] = {op: round(max(FLOOR_S, seconds), 3) for op, seconds in sorted(means.items())}
    shown = ", ".join(p.relative_to(ROOT).as_posix() if p.is_relative_to(ROOT) else str(p) for p in sorted(reports))
    return {"measured_with": f"tools/measure_costs.py: mean duration_s per case in {shown}",
            "backends": dict(sorted(columns.items())), "relative": relative_costs(columns)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="*", type=Path, help="reports to measure (default: conformance/results/*.json)")
    parser.add_argument("--out", type=Path, default=TABLE)
    parser.add_argument("--check", action="store_true", help="exit 1 when the table differs from what the reports give")
    args = parser.parse_args(argv)
    reports = args.reports or sorted((ROOT / "conformance" / "results").glob("*.json"))
    text = yamlio.dump(measure(reports), HEADER)
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.is_file() else ""
        if current != text:
            print(f"{args.out}: out of date; run python tools/measure_costs.py", file=sys.stderr)
            return 1
        return 0
    atomic.write_text(args.out, text)
    print(f"{args.out}: {len(text.splitlines())} lines from {len(reports)} reports")
    return 0


if __name__ == "__main__":
    sys.exit(main())

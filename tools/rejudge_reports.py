"""Judge committed conformance reports again from what they recorded, with today's rules (nothing is run).

    python tools/rejudge_reports.py [REPORT.json ...]     # default: every report in conformance/results/

Each report keeps its header, cases and measurements; its records' execution
evidence is read in today's levels (target, runtime, pytorch, unknown), right
answers get the status their level gives, the expectations file the report names
is applied again, and the summary, counts and root causes are rebuilt
(:mod:`opspec.conform.rejudge`); a published report is written in its published form
again (:mod:`opspec.results.publish`). Prints one line per report: what changed.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
from opspec.conform import rejudge, report  # noqa: E402
from opspec.conform.backends import registry  # noqa: E402
from opspec.conform.runner import cached_opset  # noqa: E402
from opspec.results import publish  # noqa: E402
from opspec.results.model import Report  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="*", type=Path,
                        default=sorted((REPO / "conformance" / "results").glob("*.json")))
    args = parser.parse_args(argv)
    code = 0
    for path in args.reports:
        try:  # each report is judged whole before it is written: a bad one is one line, the others go on
            previous = Report.load(path)
            declaration = registry.lookup(previous.backend_name)
            named = previous.header.expectations
            expectations = REPO / named if named else (declaration.expectations_path() if declaration else None)
            final = rejudge.rejudge(previous, declaration, expectations, cached_opset(opset_of(previous)))
        except (OSError, ValueError, KeyError, TypeError, LookupError) as err:
            print(f"{path}: not re-judged: {type(err).__name__}: {err}", file=sys.stderr)
            code = 2
            continue
        report.write(path, publish.published(final) if previous.shared else final)  # a published report stays so
        before, after = Counter(r.status for r in previous.records), Counter(r.status for r in final.records)
        changed = {s: after[s] - before[s] for s in sorted({*before, *after}) if after[s] != before[s]}
        print(f"{path.name}: " + (", ".join(f"{s} {n:+d}" for s, n in changed.items()) or "no status changed"))
    return code


def opset_of(previous: Report) -> str:
    """The opset the report ran (judged by the newest instead, its verdicts would be another run's)."""
    if not previous.opset:
        raise LookupError("the report's header names no opset")
    return previous.opset


if __name__ == "__main__":
    raise SystemExit(main())

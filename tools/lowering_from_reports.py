"""Regenerate the backend manifests from the committed conformance reports' execution evidence.

One truth about lowering: for every op a committed report of the backend ran
(``conformance/results/BACKEND-DEVICE.json`` on the manifest's opset), the evidence
conform recorded decides the op's place in ``conformance/backends/BACKEND.yaml`` on
that device (:mod:`opspec.conform.lowering_evidence`); the other ops keep what
``tools/measure_lowering.py`` measured. Then each report's ``lowering`` section is
recomputed from the new manifest (also the sections of other backends' reports read
from it: ``openxla``'s from ``xla``'s), so the manifest, the report and ``opspec coverage``
say the same thing. No torch is needed.

    python tools/lowering_from_reports.py            # rewrite the manifests and the reports' lowering sections
    python tools/lowering_from_reports.py --check    # exit 1 when either is out of date
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from opspec.conform import lowering, lowering_evidence
from opspec.results.model import Report, ReportFormatError
from opspec.spec import atomic, manifests, yamlio

ROOT = Path(__file__).resolve().parents[1]
HEADER = "# yaml-language-server: $schema=../../opset/schema/backend_manifest.schema.json\n"


def refreshed(report: Report, manifest_path: Path) -> Report:
    """The report with its lowering section and per-record lowering recomputed from the manifest (written back
    with ``dumps(as_read=True)``, every other byte stays as it was)."""
    section, warnings = lowering.for_run(report.header, report.ops(), declared=manifest_path,
                                         dtypes=lowering.dtypes_of(report.records))
    if section is None:
        raise SystemExit(f"{manifest_path}: {'; '.join(warnings) or 'no lowering section'}")
    section = section.replace(manifest=manifest_path.resolve().relative_to(ROOT).as_posix())
    return report.replace(lowering=section).with_records(lowering.marked(r, section) for r in report.records)


def readers(manifest_path: Path, results: Path, evidence: list[Path]) -> list[Path]:
    """The other committed reports whose lowering section was read from this manifest (``openxla`` reads ``xla``'s):
    their sections follow it, their evidence does not decide it."""
    shown = manifest_path.resolve().relative_to(ROOT).as_posix() if manifest_path.resolve().is_relative_to(ROOT) else None
    found = []
    for path in sorted(results.glob("*.json")):
        if path in evidence:
            continue
        try:
            report = Report.load(path)
        except ReportFormatError:
            continue
        if report.lowering is not None and report.lowering.manifest == shown:
            found.append(path)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", type=Path, default=manifests.backends_dir(), help="folder of manifests")
    parser.add_argument("--results", type=Path, default=ROOT / "conformance" / "results", help="folder of reports")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file is out of date")
    args = parser.parse_args()
    stale = 0
    for path in sorted(args.backends.glob("*.yaml")):
        data = yamlio.load_file(path)
        reports = lowering_evidence.reports_for(data["backend"], data["opset"], args.results)
        if not reports:
            print(f"{path.name}: no committed report on opset {data['opset']}; left as measured", file=sys.stderr)
            continue
        new, moved = lowering_evidence.from_reports(data, reports, ROOT)
        writes = {path: yamlio.dump(new, HEADER)}
        for line in moved:
            print(f"  {path.name}: {line}", file=sys.stderr)
        if not args.check:
            atomic.write_text(path, writes.pop(path))
        for report_path in reports + readers(path, args.results, reports):
            writes[report_path] = refreshed(Report.load(report_path), path).dumps(as_read=True)
        for target, text in writes.items():
            if target.read_text(encoding="utf-8") == text:
                continue
            if args.check:
                stale += 1
                print(f"{target}: out of date with the reports' execution evidence")
            else:
                atomic.write_text(target, text)
                print(f"{target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}: written")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())

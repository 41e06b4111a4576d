"""Put the cases of a partial re-run into a published report, then judge the report again (nothing is run).

    python tools/splice_report.py REPORT.json [RERUN.json ...]

For when new special-case rows or edges change what a few ops are held to: run
just those ops (``opspec conform --backend B --isolate --dtypes all --ops OPS``)
and splice them in, instead of re-running every case. Each re-run must have
tested what the report tested (the header keys ``opspec report merge`` requires
to agree, except which ops ran), and every case it holds must be one of the
report's. Its records replace the report's records of the same cases (their repros
written beside a full report, REPORT.repros/CASE.py; a published report, the form
``opspec report publish`` writes, stays published, its records carrying their repros); the rest,
and the header (the machine, the duration), stay the report's own; the header's
``spliced`` list names each re-run (its ops, cases, when and where it ran). The result is
judged with today's expectations (:mod:`opspec.conform.rejudge`) and written in
place; one line says which cases changed status. Bad input is one line and exit 2,
with nothing written.

With no re-run it only judges the report again and writes its repros beside it: how
a report run elsewhere (a GPU machine, a scratch folder) is published, its records
naming the repository's repros instead of the paths of the machine that ran it.
"""
from __future__ import annotations

import argparse
import datetime
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
from opspec.conform import merge, rejudge  # noqa: E402
from opspec.conform.backends import registry  # noqa: E402
from opspec.conform.runner import cached_opset  # noqa: E402
from opspec.results import publish  # noqa: E402
from opspec.results.model import CaseRecord, Report, Splice, as_written  # noqa: E402
from opspec.spec import atomic  # noqa: E402

# the header keys that say which cases ran, not how: a re-run of some ops differs there by design
WHICH_CASES = ("ops", "dtypes")


class SpliceError(ValueError):
    """The re-run cannot go into the report: one line naming the files and what differs."""


def spliced(published: Report, reruns: list[tuple[Path, Report]]) -> Report:
    """The report with each re-run's records in place of its own, and each re-run named in its ``spliced`` list."""
    by_case = {r.case: i for i, r in enumerate(published.records)}
    records = list(published.records)
    provenance = list(published.header.spliced or ())
    for path, rerun in reruns:
        for key in merge.SAME:
            theirs, ours = getattr(rerun.header, key), getattr(published.header, key)
            if key not in WHICH_CASES and theirs != ours:
                raise SpliceError(f"{path}: differs from the report in {key}: "
                                  f"{as_written(theirs)!r} vs {as_written(ours)!r}")
        machine = rerun.header.device_name
        for record in rerun.records:
            if record.case not in by_case:
                case = record.case
                raise SpliceError(f"{path}: {case.op} {case.dtype} {case.device} is not a case of the report")
            # a case run on another machine names it: hardware-limited expectations judge it by where it ran
            records[by_case[record.case]] = on_machine(record, machine, published.header.device_name)
        provenance.append(provenance_of(path, rerun))
    header = published.header.replace(spliced=tuple(provenance)) if provenance else published.header
    return published.replace(header=header).with_records(records)


def on_machine(record: CaseRecord, machine: str | None, header_machine: str | None) -> CaseRecord:
    """``record`` naming the machine it ran on where that is not the report header's."""
    machine = record.device_name or machine
    record = record.without("device_name")
    return record.replace(device_name=machine) if machine and machine != header_machine else record


def provenance_of(path: Path, rerun: Report) -> Splice:
    """What the report says of a re-run spliced into it: which ops, how many cases, when and where they ran."""
    written = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.timezone.utc)
    duration = rerun.header.duration_s
    return Splice(ops=tuple(sorted({r.op for r in rerun.records})), cases=len(rerun.records),
                  measured=written.strftime("%Y-%m-%dT%H:%M:%SZ"), duration_s=duration,
                  device_name=rerun.header.device_name or None,
                  nulls=frozenset({"duration_s"}) if duration is None else frozenset())


def changes(before: Report, after: Report) -> list[str]:
    """``OP DTYPE DEVICE: old -> new`` for each case whose status differs."""
    old = before.statuses()
    return [f"{r.op} {r.dtype} {r.device}: {old[r.case]} -> {r.status}" for r in after.records
            if old.get(r.case) != r.status]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("reruns", nargs="*", type=Path)
    args = parser.parse_args(argv)
    try:
        published = Report.load(args.report)
        reruns = [(path, Report.load(path)) for path in args.reruns]
        joined = spliced(published, reruns)
        declaration = registry.lookup(published.backend_name)
        named = published.header.expectations
        expectations = REPO / named if named else (declaration.expectations_path() if declaration else None)
        final = rejudge.rejudge(joined, declaration, expectations, cached_opset(published.opset))
    except (OSError, ValueError, KeyError, TypeError, LookupError) as err:
        print(f"{args.report}: not spliced: {type(err).__name__}: {err}", file=sys.stderr)
        return 2
    if published.shared:  # a published report stays so: its records carry their repros
        atomic.write_text(args.report, publish.text(final))
    else:
        merge.write(args.report, final)  # each record's repro beside the report, as a run or a merge writes it
    changed = changes(published, final)
    judged = Counter(r.status for r in final.records)
    print(f"{args.report.name}: {sum(len(r.records) for _, r in reruns)} cases spliced, "
          f"{len(changed)} changed status" + "".join(f"\n  {line}" for line in changed)
          + "\n  now: " + ", ".join(f"{n} {s}" for s, n in judged.most_common()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

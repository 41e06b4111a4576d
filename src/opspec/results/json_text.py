"""The text of a report file: its header indented, then one line per case.

A published report is data in git. Indenting every record spreads each case over tens of
lines, so a run that changes a handful of verdicts rewrites megabytes of diff; one case
per line keeps a re-run's diff to the cases whose record changed and the file a third
smaller. The text is plain JSON either way: readers parse it as before.
"""
from __future__ import annotations

import json
from typing import Any

RECORDS = "results"


def report_text(report: dict[str, Any]) -> str:
    """``report`` as a report file holds it (keys in their order, ending with a newline)."""
    records = report.get(RECORDS)
    if not isinstance(records, list) or not records:
        return json.dumps(report, indent=1) + "\n"
    marker = "\0records\0"
    # the header as indented JSON, with a placeholder where the records go
    head = json.dumps({key: (marker if key == RECORDS else value) for key, value in report.items()}, indent=1)
    lines = ",\n".join("  " + json.dumps(record, separators=(", ", ": ")) for record in records)
    return head.replace(json.dumps(marker), "[\n" + lines + "\n ]", 1) + "\n"

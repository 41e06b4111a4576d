"""Point the committed reports and expectations at the special-case rows' current lines.

Rows are cited as ``opset/special_cases/FILE:LINE``; a row inserted above another moves
it. Benchmark results keep only messages, which state each row's claim after its place. Each record that failed on (or was repro'd from) a row also keeps the row's claim
(``special_case.says``), so its row is found again by file and claim, and every
mention of the old place in that record (its row, message and repro) and in its
backend's expectation reasons for that op is rewritten to the new one.

    python tools/relink_rows.py [--check]      # --check: exit 1 when anything would change
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from opspec.conform import special_rows  # noqa: E402
from opspec.spec.special_cases import find_row  # noqa: E402

PREFIX = "opset/special_cases/"
MESSAGE = re.compile(r"special case (opset/special_cases/[\w.-]+\.yaml:\d+) \(([\w]+)\): (.+?\.):")
STATED = re.compile(r"special case (opset/special_cases/[\w.-]+\.yaml:\d+) ")


def moves(report: dict) -> dict[tuple[str, str], str]:
    """(op, old place) -> new place, for every record whose cited row has moved."""
    found: dict[tuple[str, str], str] = {}
    for record in report.get("results", []):
        cited = record.get("special_case")
        if not cited or not cited.get("says"):
            continue
        file = cited["row"].removeprefix(PREFIX).rsplit(":", 1)[0]
        row = find_row(special_rows.all_rows(), file, cited["says"], record["op"])
        if row is None:
            raise SystemExit(f"relink_rows: {record['op']}: no row of {file} says {cited['says']!r}")
        if special_rows.where(row) != cited["row"]:
            found[(record["op"], cited["row"])] = special_rows.where(row)
        named = STATED.match(record.get("message", ""))  # the place the run's message gave, which may be older
        if named and named.group(1) != special_rows.where(row):
            found[(record["op"], named.group(1))] = special_rows.where(row)
    return found


def relink_text(text: str, old: str, new: str) -> str:
    # whole places only: ":12" must not match inside ":123"
    out, start = [], 0
    while (at := text.find(old, start)) >= 0:
        end = at + len(old)
        if end < len(text) and text[end].isdigit():
            out.append(text[start:end])
        else:
            out.append(text[start:at] + new)
        start = end
    return "".join(out) + text[start:]


def relink_entries(text: str, found: dict[tuple[str, str], str]) -> str:
    """An expectations file with each entry's row places rewritten, for the entry's own op only."""
    blocks = re.split(r"(?m)^(?=  - op: )", text)
    for index, block in enumerate(blocks):
        op = re.match(r"  - op: (\S+)", block)
        for (moved_op, old), new in found.items():
            if op and op.group(1) == moved_op:
                block = relink_text(block, old.removeprefix(PREFIX), new.removeprefix(PREFIX))
        blocks[index] = block
    return "".join(blocks)


def relink_messages(text: str) -> str:
    """Messages that state a row's place and claim (``special case PLACE (dtype): CLAIM:``), pointed at the row
    of that file that makes the claim now (benchmark results keep messages, not records)."""
    def current(match: re.Match) -> str:
        file = match.group(1).removeprefix(PREFIX).rsplit(":", 1)[0]
        row = find_row(special_rows.all_rows(), file, match.group(3))
        return match.group(0) if row is None else match.group(0).replace(match.group(1), special_rows.where(row))
    return MESSAGE.sub(current, text)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    changed = []
    for path in sorted((ROOT / "benchmarks" / "results").glob("*.json")):
        text = path.read_text()
        if relink_messages(text) != text:
            changed.append(path)
            print(f"{path.relative_to(ROOT)}: moved rows in messages")
            if not args.check:
                path.write_text(relink_messages(text))
    for path in sorted((ROOT / "conformance" / "results").glob("*.json")):
        report = json.loads(path.read_text())
        found = moves(report)
        if not found:
            continue
        for record in report["results"]:
            for (op, old), new in found.items():
                if record["op"] != op:
                    continue
                for key in ("message", "repro"):
                    if isinstance(record.get(key), str):
                        record[key] = relink_text(record[key], old, new)
                if record.get("special_case", {}).get("row") == old:
                    record["special_case"]["row"] = new
        changed.append(path)
        expectations = ROOT / "conformance" / "expectations" / f"{report['backend']['name']}.yaml"
        if expectations.exists() and not args.check:
            expectations.write_text(relink_entries(expectations.read_text(), found))
        if not args.check:
            path.write_text(json.dumps(report, indent=1) + "\n")
        print(f"{path.relative_to(ROOT)}: {len(found)} moved row(s)")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())

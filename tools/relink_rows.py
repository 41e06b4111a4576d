"""Point the committed reports and expectations at the special-case rows' current lines.

Rows are cited as ``opset/special_cases/FILE:LINE``; a row inserted above another moves
it. Benchmark results keep only messages, which state each row's claim after its place. Each record that failed on (or was repro'd from) a row also keeps the row's claim
(``special_case.says``), so its row is found again by file and claim, and every
mention of the old place in that record (its row, message and repro) is rewritten
to the new one.

An expectation reason may cite a row by place alone (``convolution-pooling.yaml:397``,
then ``(:411)`` for another row of that file). Each such place is read in the committed
file (``git show REV:...``, ``--since REV``, default HEAD, where the citations were last
right): the claim of the row of the entry's op that stood there finds the row again.

    python tools/relink_rows.py [--check] [--since REV]      # --check: exit 1 when anything would change
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
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


def relink_messages(text: str) -> str:
    """Messages that state a row's place and claim (``special case PLACE (dtype): CLAIM:``), pointed at the row
    of that file that makes the claim now (benchmark results keep messages, not records)."""
    def current(match: re.Match) -> str:
        file = match.group(1).removeprefix(PREFIX).rsplit(":", 1)[0]
        row = find_row(special_rows.all_rows(), file, match.group(3))
        return match.group(0) if row is None else match.group(0).replace(match.group(1), special_rows.where(row))
    return MESSAGE.sub(current, text)


PLACE = re.compile(r"([a-z_-]+\.yaml):(\d+)|\(:(\d+)\)|, :(\d+)")
SAYS = re.compile(r"^\s*- says: (.+)$")


def claim_at(revision: str, file: str, line: int, cache: dict) -> str | None:
    """The claim of the row whose ``- says:`` stood at ``line`` of ``file`` in ``revision`` (None if no row did)."""
    if file not in cache:
        shown = subprocess.run(["git", "show", f"{revision}:{PREFIX}{file}"], cwd=ROOT, capture_output=True, text=True)
        cache[file] = shown.stdout.splitlines() if shown.returncode == 0 else []
    lines = cache[file]
    match = SAYS.match(lines[line - 1]) if 0 < line <= len(lines) else None
    if not match:
        return None
    import yaml

    return str(yaml.safe_load("says: " + match.group(1))["says"])


def relink_cited_places(text: str, revision: str, committed: str) -> str:
    """An expectations file whose citations are pointed at the row of the entry's op that stood there in
    ``revision``, found again by its claim. Only entries whose reason is still as committed are touched, so a
    second run changes nothing; a citation of no such row is left as it is."""
    rows = special_rows.all_rows()
    cache: dict[str, list[str]] = {}
    unchanged = {line for line in committed.splitlines() if line.startswith("    reason: ")}
    blocks = re.split(r"(?m)^(?=  - op: )", text)
    for index, block in enumerate(blocks):
        op = re.match(r"  - op: (\S+)", block)
        if not op or not any(line in unchanged for line in block.splitlines() if line.startswith("    reason: ")):
            continue
        places = {special_rows.where(row).removeprefix(PREFIX) for row in rows.get(op.group(1), ())}
        file = None

        def current(match: re.Match) -> str:
            nonlocal file
            file = match.group(1) or file
            number = int(next(n for n in match.groups()[1:] if n))
            if file is None:
                return match.group(0)
            says = claim_at(revision, file, number, cache)  # the row that stood there when the citation was right
            row = find_row(rows, file, says, op.group(1)) if says else None
            if row is None:
                return match.group(0)
            return match.group(0).replace(str(number), str(row.mark.line))

        blocks[index] = PLACE.sub(current, block)
    return "".join(blocks)


REPRO_ROW = re.compile(r"'special_case': '(opset/special_cases/[\w.-]+\.yaml):(\d+)'(?P<says>, 'row_dtype': '\w+', 'row_says': )?")


def name_repro_rows(report: dict, revision: str) -> int:
    """Repros written before they named their row's claim cite it by place alone: each gets the claim of the row
    that stood at that place in ``revision`` and that row's current place (after which it moves by claim)."""
    rows, cache, named = special_rows.all_rows(), {}, 0
    for record in report.get("results", []):
        repro = record.get("repro") or ""
        match = REPRO_ROW.search(repro)
        if not match or match.group("says"):
            continue
        file = match.group(1).removeprefix(PREFIX)
        says = claim_at(revision, file, int(match.group(2)), cache)
        row = find_row(rows, file, says, record["op"]) if says else None
        if row is None:
            continue
        tail = repro[match.end():]
        dtype = re.match(r", 'row_dtype': '(\w+)'", tail)
        if not dtype:
            continue
        record["repro"] = (repro[:match.start()] + f"'special_case': '{special_rows.where(row)}', 'row_dtype': '{dtype.group(1)}', "
                           f"'row_says': {row.says!r}" + tail[dtype.end():])
        named += 1
    return named


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--since", default="HEAD", metavar="REV", help="where place-only citations were last right")
    args = parser.parse_args()
    changed = []
    for path in sorted((ROOT / "conformance" / "expectations").glob("*.yaml")):
        text = path.read_text()
        shown = subprocess.run(["git", "show", f"{args.since}:{path.relative_to(ROOT)}"], cwd=ROOT, capture_output=True, text=True)
        relinked = relink_cited_places(text, args.since, shown.stdout)
        if relinked != text:
            changed.append(path)
            print(f"{path.relative_to(ROOT)}: moved rows cited by place")
            if not args.check:
                path.write_text(relinked)
    for path in sorted((ROOT / "benchmarks" / "results").glob("*.json")):
        text = path.read_text()
        if relink_messages(text) != text:
            changed.append(path)
            print(f"{path.relative_to(ROOT)}: moved rows in messages")
            if not args.check:
                path.write_text(relink_messages(text))
    for path in sorted((ROOT / "conformance" / "results").glob("*.json")):
        report = json.loads(path.read_text())
        named = name_repro_rows(report, args.since)
        if named:
            changed.append(path)
            print(f"{path.relative_to(ROOT)}: {named} repro(s) given their rows' claims")
            if not args.check:
                path.write_text(json.dumps(report, indent=1) + "\n")
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
        if not args.check:
            path.write_text(json.dumps(report, indent=1) + "\n")
        print(f"{path.relative_to(ROOT)}: {len(found)} moved row(s)")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())

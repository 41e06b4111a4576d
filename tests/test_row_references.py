"""Every place a committed file cites a special-case row names a row of that op, at its current line.

Rows move when rows are inserted above them; ``tools/relink_rows.py`` follows them in the
reports (by file and claim) and in their expectations.
"""
import re
from pathlib import Path

import pytest
import yaml

from opspec.conform import special_rows

ROOT = Path(__file__).resolve().parents[1]
PLACE = re.compile(r"([a-z_-]+\.yaml):(\d+)")
FILES = sorted((ROOT / "conformance" / "expectations").glob("*.yaml"))


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_expectation_reasons_cite_rows_of_their_op(path):
    rows = special_rows.all_rows()
    stale = []
    for entry in (yaml.safe_load(path.read_text()) or {}).get("expectations", []):
        places = {special_rows.where(row).removeprefix("opset/special_cases/") for row in rows.get(entry["op"], ())}
        file = None
        for match in PLACE.finditer(entry.get("reason", "")):
            file = match.group(1)
            if f"{file}:{match.group(2)}" not in places:
                stale.append(f"{entry['op']}: {match.group(0)}")
        for line in re.findall(r"\(:(\d+)\)|, :(\d+)", entry.get("reason", "")):  # ":745" after a cited file
            number = next(n for n in line if n)
            if file and f"{file}:{number}" not in places:
                stale.append(f"{entry['op']}: {file}:{number}")
    assert not stale, f"{path.name} cites no row of the op at: {stale} (python tools/relink_rows.py)"

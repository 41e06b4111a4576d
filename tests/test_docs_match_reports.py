"""The pages a backend author reads spell every status, level, key and exit rule as the reports do.

The tables of conformance/README.md and the site's contract page (own-backend.md) are read as
data and held to the report schema's enums and the runner's exit rule, so adding a status to the
schema without documenting it (or documenting one that reports never write) fails here.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from opspec.results.vocabulary import CLEAN

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "conformance" / "README.md"
CONTRACT = ROOT / "site" / "docs" / "own-backend.md"
SCHEMA = json.loads((ROOT / "opset" / "schema" / "conformance_report.schema.json").read_text(encoding="utf-8"))
DEFS = SCHEMA["$defs"]
RECORD = DEFS["result"]["properties"]
EVIDENCE = DEFS["evidence"]["properties"]
CODE = re.compile(r"`([^`]+)`")


def table_column(text: str, header: str) -> list[str]:
    """The code-spelled names in the first column of the table whose first header cell is ``header``."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines[:-1]) if re.match(rf"\|\s*`?{re.escape(header)}`?\s*\|", line)
                  and lines[i + 1].startswith("|---")), None)
    assert start is not None, f"no table headed {header!r}"
    names = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        names += CODE.findall(line.split("|")[1])
    return names


def sentence(text: str, starts: str) -> str:
    """The paragraph text from ``starts`` to its first full stop that ends a sentence."""
    at = text.index(starts)
    return re.split(r"\.\s", text[at:], maxsplit=1)[0]


def test_the_status_table_is_the_schema_status_enum():
    listed = table_column(README.read_text(encoding="utf-8"), "status")
    assert sorted(listed) == sorted(DEFS["status"]["enum"])
    assert len(listed) == len(set(listed))
    assert set(SCHEMA["properties"]["summary"]["required"]) - {"cases", "compiles"} == set(listed)


@pytest.mark.parametrize("page", [README, CONTRACT], ids=["README", "contract"])
def test_the_execution_levels_are_the_schema_executed_enum(page):
    assert sorted(table_column(page.read_text(encoding="utf-8"), "executed")) == sorted(DEFS["executed"]["enum"])


def test_the_evidence_keys_and_sources_are_the_schema_s():
    text = README.read_text(encoding="utf-8")
    assert sorted(table_column(text, "evidence key")) == sorted(EVIDENCE)
    assert sorted(table_column(text, "source")) == sorted(EVIDENCE["source"]["enum"])
    contract = CONTRACT.read_text(encoding="utf-8")
    for name in [*EVIDENCE, *EVIDENCE["source"]["enum"]]:
        assert f"`{name}`" in contract, name


def test_the_lowering_table_is_the_schema_lowering_enum():
    listed = table_column(README.read_text(encoding="utf-8"), "lowering")
    assert sorted(listed) == sorted(DEFS["lowering_status"]["enum"])
    assert set(listed) - {"undeclared"} <= set(SCHEMA["properties"]["lowering"]["properties"])


@pytest.mark.parametrize("page", [README, CONTRACT], ids=["README", "contract"])
def test_the_exit_rule_is_the_runner_s(page):
    text = page.read_text(encoding="utf-8")
    starts = "Exit status: 0 when every case is" if page == README else "The run exits 0 when every case is"
    zero = set(CODE.findall(sentence(text, starts).split(";")[0]))
    assert zero == set(CLEAN)
    one = set(CODE.findall(sentence(text, starts).split(";")[1]))
    assert one == set(DEFS["status"]["enum"]) - set(CLEAN)


def test_no_page_spells_a_level_or_key_reports_no_longer_write():
    """``backend`` and ``backend_ops`` are the spellings of reports written before the levels."""
    for page in (README, CONTRACT):
        text = page.read_text(encoding="utf-8")
        assert '{"backend": [' not in text, page.name
        assert "`backend_ops`" not in text.replace("(and `target_ops` as\n`backend_ops`)", ""), page.name


@pytest.mark.parametrize("page", [README, CONTRACT], ids=["README", "contract"])
def test_the_contract_says_shapes_mutation_front_end_and_version(page):
    text = page.read_text(encoding="utf-8")
    assert "--static" in text and "dynamic=False" in text and "dynamic=True" in text
    assert re.search(r"write[- ]back|write the new values", text)
    assert "opspec_front_end" in text and "must not" in text and "call your compiler" in text
    assert "unversioned, torch" in text and 'package="my-backend"' in text

"""What opspec writes: files follow the umask like any other program's, and root causes keep names whole."""
from __future__ import annotations

import os
import stat

import pytest

from opspec.results.model import CaseRecord
from opspec.results.tally import cause_of, root_causes
from opspec.spec import atomic


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_follow_the_umask(tmp_path, umask, mode):
    previous = os.umask(umask)
    try:
        atomic.write_text(tmp_path / "report.json", "{}\n")
        atomic.write_text(tmp_path / "report.json", "{}\n")  # a replaced file too
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "report.json").stat().st_mode) == mode


@pytest.mark.parametrize("message, cause", [
    ("float32 and int64 differ by 1.5e-05 at index 7", "float32 and int64 differ by N at index N"),
    ("conv2d of bfloat16: -3 is out of range [0, 2]", "conv2d of bfloat16: N is out of range [N, N]"),
    ("size s0 vs 12.", "size N vs N."),
])
def test_a_root_cause_takes_out_numbers_but_not_the_digits_of_names(message, cause):
    assert cause_of(CaseRecord.from_dict({"op": "aten::abs", "dtype": "float32", "device": "cpu", "status": "fail",
                                          "message": message})) == cause


def test_failures_differing_only_in_numbers_share_a_root_cause():
    records = [{"op": f"aten::op{i}", "dtype": "float32", "device": "cpu", "status": "fail", "blame": "backend",
                "message": f"float32 differs by {i}.5 at index {i}"} for i in range(3)]
    (group,) = root_causes(CaseRecord.from_dict(record) for record in records)
    assert group.count == 3 and group.cause == "float32 differs by N at index N"

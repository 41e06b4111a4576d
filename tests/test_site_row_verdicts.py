"""An op page's special-case table names each published report once per row."""
from __future__ import annotations

from opspec.reports.site import results as results_mod
from opspec.reports.site import special_cases as special_mod
from opspec.spec import special_cases as spec_cases

ROW = spec_cases.SpecialCase("aten::abs", "The absolute value of NaN is NaN.", "nan", {"self": ["nan"]})


def record(report, status, dtype="float32", **fields):
    return results_mod.Record(backend=report, op="aten::abs", dtype=dtype, device="cpu", status=status,
                              report=report, **fields)


def test_a_report_that_fails_a_row_in_one_dtype_and_holds_it_in_another_is_named_once():
    records = [record("xla-cpu", "fail", failed_row=ROW.says), record("xla-cpu", "pass", "float64", rows_held=True),
               record("inductor-cpu", "pass", rows_held=True)]
    verdicts = special_mod.backend_verdicts(ROW, records)
    assert verdicts == "fails on xla-cpu: fail in float32; held on inductor-cpu"
    assert verdicts.count("xla-cpu") == 1


def test_a_report_whose_every_case_failed_the_row_names_no_dtype():
    records = [record("xla-cpu", "fail", failed_row=ROW.says), record("xla-cpu", "xfail", "float64", failed_row=ROW.says)]
    assert special_mod.backend_verdicts(ROW, records) == "fails on xla-cpu: fail, xfail"

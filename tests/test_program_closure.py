"""check-program names why an op outside the version is there: out of scope by decision, a closure gap (with
the open proposal that covers it), or unknown to torch."""
from __future__ import annotations

import dataclasses

from opspec.checks import program as programs
from opspec.spec import load
from opspec.spec.model import OutOfScopeOp


def test_an_op_outside_the_version_says_why():
    opset = dataclasses.replace(load.load_opset("2026.12"), out_of_scope=(
        OutOfScopeOp("aten::_to_sparse", "sparse layouts", "sparse layouts are outside the dense core set", "2026.12", (8,)),))

    decided = programs.outside("aten::_to_sparse", 1, opset, {})
    assert (decided.kind, decided.fails) == ("out-of-scope", True)
    assert decided.detail == ("out of scope in 2026.12 by decision (proposal 0008, sparse layouts): "
                              "sparse layouts are outside the dense core set")

    gap = programs.outside("aten::erfc", 2, opset, {"aten::erfc": [9]})
    assert gap.kind == "closure-gap" and gap.detail.endswith("(a closure gap of 2026.12); proposal 0009 covers it")
    bare = programs.outside("aten::erfc", 2, opset, {})
    assert bare.detail.endswith("no proposal covers it yet; `opspec drift --closure --opset 2026.12` lists the version's gaps")

    assert programs.outside("aten::add_.Tensor", 1, opset, {}).detail == (
        "not in opset 2026.12: an op that writes to its arguments")
    unknown = programs.outside("mylib::custom", 1, opset, {})
    assert unknown.kind == "unknown" and "not an aten op torch" in unknown.detail

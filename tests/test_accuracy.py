"""Accuracy contracts: the data and its loader, ULP distances, the correctly rounded reference, the checker."""
from __future__ import annotations

import json
import math
import re
import shutil
import textwrap

import mpmath
import numpy as np
import pytest
import torch
from opspec_fixtures import ROOT

from opspec.checks import accuracy as check
from opspec.cli import main
from opspec.spec import accuracy as spec_accuracy
from opspec.spec import load
from opspec.spec.model import Interval
from opspec.spec.yamlio import DataError
from opspec.testing import accuracy as measure
from opspec.testing import accuracy_functions as functions
from opspec.testing import accuracy_inputs as inputs
from opspec.testing import correct_rounding as reference
from opspec.testing import ulp

EVERYWHERE = {"self": (Interval.parse("[-inf, inf]"),)}


# ---- the data ----

def test_contracts_load_with_ulp_contracts_and_error_models():
    contracts = spec_accuracy.load_contracts()
    exp = [contracts.ulp_of("aten::exp", dtype) for dtype in ("float64", "float32", "float16", "bfloat16")]
    assert all(c is not None and c.max_ulp <= 1 and c.measured is not None for c in exp)
    assert exp[2].measured.exhaustive and exp[2].measured.inputs == 65536
    sigmoid = contracts.ulp_of("aten::sigmoid", "bfloat16")
    assert sigmoid.subnormals.results == spec_accuracy.MAY_FLUSH and sigmoid.subnormals.reason
    assert {m.op for m in contracts.error_models} >= {"aten::mm", "aten::sum.dim_IntList"}
    assert contracts.ulp_of("aten::log", "float32").domain == {"self": (Interval.parse("[0, inf]"),)}


def test_the_opset_and_its_contracts_agree():
    assert check.validate_findings(ROOT / "opset", load.load_opset()) == []


BAD = """\
ops:
  aten::exp:
    domain: {self: '[1, 0]'}
    dtypes:
      float32:
        max_ulp: 4
      float16:
        max_ulp: 1
        colour: blue
"""


def test_a_malformed_file_gives_each_problem_at_its_line(tmp_path):
    path = tmp_path / "accuracy.yaml"
    path.write_text(BAD)
    contracts, findings = spec_accuracy.read(path)
    assert contracts.ulp == ()
    assert [str(f) for f in findings] == [
        f"{path}:5:7: ops/aten::exp/dtypes/float32: 'reason' is a required property",  # 4 ULP needs one
        f"{path}:9:9: ops/aten::exp/dtypes/float16: unknown key 'colour'",
    ]
    path.write_text(BAD.replace("max_ulp: 4", "max_ulp: 1").replace("        colour: blue\n", ""))
    message = f"{path}:3:14: aten::exp: domain of self: empty interval: '[1, 0]'"
    with pytest.raises(DataError, match="^" + re.escape(message) + "$"):
        spec_accuracy.load_contracts(path)


def test_unsorted_ops_and_unknown_ops_are_findings(tmp_path):
    root = tmp_path / "opset"
    shutil.copytree(ROOT / "opset", root)
    original = (root / "accuracy.yaml").read_text()
    first = next(line for line in original.splitlines() if line.startswith("  aten::"))[2:-1]
    entry = "  {op}:\n    domain: {{self: '[-inf, inf]'}}\n    dtypes:\n      float32:\n        max_ulp: 1\n"
    for op, expected in (("aten::no_such_op", f"ops are sorted by name ({first} after aten::no_such_op)"),
                         ("aten::_aa_no_such_op", "aten::_aa_no_such_op: opset 2027.01 holds no such op")):
        text = original.replace("ops:\n", "ops:\n" + entry.format(op=op), 1)
        (root / "accuracy.yaml").write_text(text)
        findings = check.validate_findings(root, load.load_opset("2027.01"))
        line = text.splitlines().index(f"  {first}:" if "sorted" in expected else "      float32:") + 1
        assert [(f.mark.line, f.message) for f in findings] == [(line, expected if "sorted" not in expected
                                                                 else f"{first}: {expected}")]


def test_an_op_the_reference_measures_needs_a_contract(tmp_path):
    path = tmp_path / "opset" / "accuracy.yaml"
    shutil.copytree(ROOT / "opset", path.parent)
    data = spec_accuracy.yamlio.load_file(path)
    del data["ops"]["aten::exp"]
    path.write_text(spec_accuracy.dump(data))
    findings = check.validate_findings(path.parent, load.load_opset("2027.01"))
    assert [str(f) for f in findings] == [f"{path}:1:1: aten::exp: no accuracy contract for a floating pointwise "
                                          "op (2027.01/core_ops.yaml declares float64, float32, float16, bfloat16; "
                                          "measure it: opspec accuracy --ops aten::exp)"]


def test_every_floating_pointwise_op_and_dtype_needs_a_contract_as_torch_tags_them(tmp_path):
    """Without torch the pointwise categories say which ops; with it, torch's pointwise tag, decomposed ops too."""
    path = tmp_path / "opset" / "accuracy.yaml"
    shutil.copytree(ROOT / "opset", path.parent)
    data = spec_accuracy.yamlio.load_file(path)
    del data["ops"]["aten::silu"], data["ops"]["aten::eq.Tensor"]
    del data["ops"]["aten::maximum"]["dtypes"]["bfloat16"]
    path.write_text(spec_accuracy.dump(data))
    text = path.read_text().splitlines()
    opset = load.load_opset("2027.01")
    from opspec.bridge import torch_ops

    tagged = torch_ops.pointwise_tagged(tuple(op.name for op in opset.active_ops()) + tuple(r.op for r in opset.rules))
    messages = {(f.mark.line, f.message.split(" (")[0]) for f in check.validate_findings(path.parent, opset, tagged)}
    assert messages == {
        (1, "aten::eq.Tensor: no accuracy contract for a floating pointwise op"),
        (1, "aten::silu: no accuracy contract for a floating pointwise op"),
        (text.index("      float64:", text.index("  aten::maximum:")) + 1,
         "aten::maximum: no contract for bfloat16, which 2027.01/core_ops.yaml declares"),
    }


# ---- ULP distance ----

def tensor(values, dtype):
    return torch.tensor(values, dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_ulp_distance_on_hand_made_cases(dtype):
    info = torch.finfo(dtype)
    one = tensor([1.0], dtype)
    above = torch.nextafter(one, tensor([2.0], dtype))
    sub = info.smallest_normal * 2.0 ** -(ulp.format_of(dtype).precision - 1)  # the smallest subnormal
    cases = [
        (above, one, 1.0), (one, above, -1.0),
        (tensor([0.0], dtype), tensor([-0.0], dtype), 0.0),
        (tensor([sub], dtype), tensor([0.0], dtype), 1.0), (tensor([sub], dtype), tensor([-sub], dtype), 2.0),
        (tensor([info.smallest_normal], dtype), tensor([info.smallest_normal - sub], dtype), 1.0),
        (tensor([math.inf], dtype), tensor([math.inf], dtype), 0.0),
        (tensor([math.inf], dtype), tensor([info.max], dtype), ulp.HUGE),
        (tensor([-math.inf], dtype), tensor([math.inf], dtype), ulp.HUGE),
        (tensor([math.nan], dtype), tensor([-math.nan], dtype), 0.0),
        (tensor([math.nan], dtype), one, ulp.HUGE),
        (one, tensor([-1.0], dtype), 2.0 * ulp.ordinals(one)[0]),
    ]
    for a, b, expected in cases:
        assert ulp.distance(a, b)[0] == expected, (a, b)


def test_ordinals_round_trip_every_16_bit_pattern():
    every = inputs.exhaustive(torch.bfloat16)
    assert len(every) == 65536 and len(set(every.view(torch.int16).tolist())) == 65536
    again = ulp.from_ordinals(ulp.ordinals(every), torch.bfloat16)
    finite = torch.isfinite(every)
    assert torch.equal(again[finite].abs(), every[finite].abs())


# ---- the correctly rounded reference ----

def test_the_reference_rounds_once_where_converting_float64_rounds_twice():
    # 1 + 2**-11 + 2**-25 is just above the float16 midpoint between 1 and 1 + 2**-10; torch converts float64 to
    # float16 through float32, which lands on the midpoint and then ties to 1
    shifted = functions.Function("test::shift", lambda x: x + mpmath.mpf(2) ** -11 + mpmath.mpf(2) ** -25,
                                 lambda x: x + np.longdouble(2.0 ** -11) + np.longdouble(2.0 ** -25), 0.0)
    one = torch.ones(1, dtype=torch.float64)
    assert one.add(2 ** -11 + 2 ** -25).to(torch.float16).item() == 1.0
    found = reference.correctly_rounded(shifted, [one], torch.float16)
    assert found.rounded.item() == 1 + 2 ** -10
    assert found.residual[0] == pytest.approx(-0.5 + 2 ** -15)


@pytest.mark.parametrize("op, dtype", [("aten::exp", torch.float32), ("aten::sin", torch.float64),
                                       ("aten::erf", torch.float16), ("aten::log1p", torch.bfloat16)])
def test_the_reference_matches_mpmath_everywhere(op, dtype):
    """Several hundred inputs over every binade (the domain's ends, the largest values, subnormals): the fast
    path agrees with mpmath at 128 and 384 bits on every rounding, and on the residual to its stated error."""
    domain = [Interval.parse("[-1, inf]" if op == "aten::log1p" else "[-inf, inf]")]
    x = inputs.stratified(dtype, domain, 400, seed=3)
    x = x[torch.isfinite(x)]
    function = functions.FUNCTIONS[op]
    fast = reference.correctly_rounded(function, [x], dtype)
    exact = reference._from_mpmath(function, [(v,) for v in x.to(torch.float64).tolist()], ulp.format_of(dtype))
    known = [i for i, e in enumerate(exact) if e is not None]
    assert len(known) > 300
    assert ulp.ordinals(fast.rounded)[known].tolist() == [exact[i][0] for i in known]
    assert np.abs(fast.residual[known] - [exact[i][1] for i in known]).max() < 1e-3


# ---- the checker ----

def test_a_kernel_computed_in_float16_is_caught_naming_op_dtype_input_results_and_distance():
    contract = spec_accuracy.load_contracts().ulp_of("aten::exp", "float32")

    def exp_in_float16(x):
        return torch.exp(x.half()).float()

    found = measure.measure(exp_in_float16, functions.FUNCTIONS["aten::exp"], torch.float32,
                            {"self": (Interval.parse("[-8, 8]"),)}, samples=3000, seed=0)
    finding = check.judge(check.Judged(contract, found))
    worst = found.worst[0]
    assert finding is not None and finding.mark == contract.mark
    for part in ("aten::exp float32", f"self={worst.inputs['self']!r}", f"got {worst.got!r}",
                 f"correctly rounded {worst.rounded!r}", "ULP", "allows 1 ULP"):
        assert part in finding.message
    assert worst.ulp > 1000


def test_an_error_of_four_ulps_on_one_binade_is_caught_and_a_correct_kernel_passes():
    contract = spec_accuracy.load_contracts().ulp_of("aten::sin", "float32")

    def sin_off_on_one_binade(x):
        y = torch.sin(x)
        return torch.where((x >= 1) & (x < 2), ulp.from_ordinals(ulp.ordinals(y) + 4, torch.float32), y)

    def measured(kernel):
        return measure.measure(kernel, functions.FUNCTIONS["aten::sin"], torch.float32, EVERYWHERE, samples=5000)

    off = measured(sin_off_on_one_binade)
    assert 3.5 <= off.max_ulp <= 4.5 and 1 <= off.worst[0].inputs["self"] < 2
    assert check.judge(check.Judged(contract, off)) is not None
    assert check.judge(check.Judged(contract, measured(torch.sin))) is None


def test_the_subnormal_latitude_accepts_flushed_results_and_only_those():
    sigmoid = functions.FUNCTIONS["aten::sigmoid"]
    strict = measure.measure(torch.sigmoid, sigmoid, torch.bfloat16, EVERYWHERE)
    latitude = spec_accuracy.SubnormalPolicy("preserve", spec_accuracy.MAY_FLUSH, "flushes where exp overflows")
    loose = measure.measure(torch.sigmoid, sigmoid, torch.bfloat16, EVERYWHERE, latitude)
    assert strict.max_ulp > 16 and strict.worst[0].got == 0.0 and strict.exhaustive and strict.inputs == 65536
    assert loose.max_ulp <= 0.5 and loose.flushed > 0
    assert sum(loose.histogram.values()) == 65536


def test_the_subnormal_latitude_for_inputs_judges_a_flushed_input_as_zero():
    def sin_flushing_inputs(x):
        tiny = x.abs() < torch.finfo(x.dtype).smallest_normal
        return torch.sin(torch.where(tiny, torch.zeros_like(x).copysign(x), x))

    sin = functions.FUNCTIONS["aten::sin"]
    strict = measure.measure(sin_flushing_inputs, sin, torch.float32, EVERYWHERE, samples=3000)
    latitude = spec_accuracy.SubnormalPolicy(spec_accuracy.MAY_FLUSH, "preserve", "reads subnormal inputs as zero")
    loose = measure.measure(sin_flushing_inputs, sin, torch.float32, EVERYWHERE, latitude, samples=3000)
    assert strict.max_ulp > 1e6 and abs(strict.worst[0].inputs["self"]) < torch.finfo(torch.float32).smallest_normal
    assert loose.max_ulp < 1 and loose.flushed == 0


def test_stratified_samples_cover_every_binade_and_repeat_with_the_seed():
    domain = [Interval.parse("[-1, inf]")]
    first = inputs.stratified(torch.float32, domain, 2000, seed=5)
    assert torch.equal(first[:-1], inputs.stratified(torch.float32, domain, 2000, seed=5)[:-1])
    assert not torch.equal(first[:-1], inputs.stratified(torch.float32, domain, 2000, seed=6)[:-1])
    exponents = set(torch.frexp(first[torch.isfinite(first) & (first > 0)])[1].tolist())
    assert set(range(-125, 129)) <= exponents and min(exponents) < -125  # every positive binade, and subnormals
    assert {-1.0, math.inf, torch.finfo(torch.float32).max}.issubset(set(first.tolist()))
    assert first[:-1].min() == -1 and math.isnan(first[-1])


def test_pairs_cover_every_binade_of_both_operands_put_some_near_and_repeat_with_the_seed():
    domain = [Interval.parse("[-inf, inf]")]
    x, y = inputs.combined(torch.float32, [domain, domain], 4000, seed=1)
    again = inputs.combined(torch.float32, [domain, domain], 4000, seed=1)
    assert len(x) == len(y) > 3900
    assert all(torch.equal(a.nan_to_num(), b.nan_to_num()) for a, b in zip((x, y), again))
    for operand in (x, y):
        exponents = set(torch.frexp(operand[torch.isfinite(operand) & (operand > 0)])[1].tolist())
        assert set(range(-125, 129)) <= exponents and min(exponents) < -125
    near = (np.abs(ulp.distance(x.abs(), y.abs())) <= 2 ** 12) & (x != 0).numpy()
    assert 0.15 < near.mean() < 0.35  # one pair in four, less those moved out of the domain


@pytest.mark.parametrize("op, dtype", [("aten::div.Tensor", torch.float64), ("aten::atan2", torch.float32),
                                       ("aten::addcmul", torch.float64), ("aten::remainder.Tensor", torch.bfloat16)])
def test_the_reference_of_ops_of_several_tensors_matches_mpmath(op, dtype):
    function = functions.FUNCTIONS[op]
    domain = [Interval.parse("[-1e6, 1e6]")]
    args = inputs.combined(dtype, [domain] * len(function.args), 300, seed=2)
    finite = torch.stack([torch.isfinite(a) for a in args]).all(0)
    args = [a[finite] for a in args]
    fast = reference.correctly_rounded(function, args, dtype)
    points = list(zip(*(a.to(torch.float64).tolist() for a in args)))
    exact = reference._from_mpmath(function, points, ulp.format_of(dtype), {})
    known = [i for i, e in enumerate(exact) if e is not None]
    assert len(known) > 250
    assert ulp.ordinals(fast.rounded)[known].tolist() == [exact[i][0] for i in known]


def test_a_binary_kernel_a_few_ulps_off_where_operands_are_close_is_caught_and_eager_passes():
    contract = spec_accuracy.load_contracts().ulp_of("aten::sub.Tensor", "float32")
    sub = functions.FUNCTIONS["aten::sub.Tensor"]

    def sub_off_near_cancellation(x, y):
        z = x - y
        close = (z.abs() < x.abs() * 2 ** -8) & (z != 0)
        return torch.where(close, ulp.from_ordinals(ulp.ordinals(z) + 3, torch.float32), z)

    domains = {"self": (Interval.parse("[-inf, inf]"),), "other": (Interval.parse("[-inf, inf]"),)}
    off = measure.measure(sub_off_near_cancellation, sub, torch.float32, domains, samples=3000, seed=4)
    assert off.max_ulp >= 2.5 and set(off.worst[0].inputs) == {"self", "other"}
    assert check.judge(check.Judged(contract, off)) is not None
    assert measure.measure(torch.sub, sub, torch.float32, domains, samples=3000, seed=4).max_ulp <= 0.5


def test_fixed_arguments_and_masks_reach_kernel_and_reference():
    where = functions.FUNCTIONS["aten::where.self"]
    domains = {"self": (Interval.parse("[-inf, inf]"),), "other": (Interval.parse("[-inf, inf]"),)}
    found = measure.measure(torch.where, where, torch.float16, domains, samples=2000)
    assert found.max_ulp == 0 and set(found.worst) == set()
    swapped = measure.measure(lambda c, x, y: torch.where(c, y, x), where, torch.float16, domains, samples=2000)
    assert swapped.max_ulp == math.inf
    clamp = functions.FUNCTIONS["aten::clamp"]
    fixed = {"min": -0.5, "max": 0.5}
    assert measure.measure(lambda x: torch.clamp(x, **fixed), clamp, torch.float32, EVERYWHERE, samples=2000,
                           arguments=fixed).max_ulp == 0
    assert measure.measure(lambda x: torch.clamp(x, -0.25, 0.5), clamp, torch.float32, EVERYWHERE, samples=2000,
                           arguments=fixed).max_ulp > 1e6


def test_the_histogram_buckets():
    errors = np.array([0.0, 0.25, 0.5, 0.75, 1.0, 3.0, 1e9, math.inf])
    assert measure.histogram(errors) == {"0": 1, "0.5": 2, "1": 2, "4": 1, "1073741824": 1, "inf": 1}
    assert check.principled_bound(0.50001) == 1 and check.principled_bound(0.5) == 0.5
    assert check.principled_bound(2.4) == 4 and check.principled_bound(0) == 0


# ---- the command ----

def test_accuracy_command_passes_eager_and_writes_a_json_report(tmp_path, capsys):
    report = tmp_path / "out" / "eager.json"
    code = main(["accuracy", "--ops", "aten::exp", "--ops", "aten::sigmoid", "--dtypes", "bfloat16", "float32",
                 "--samples", "2000", "--report", str(report)])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "aten::sigmoid  bfloat16  0.5 flush" in out.out and "65536 (all)" in out.out
    data = json.loads(report.read_text())
    assert {(r["op"], r["dtype"]) for r in data["results"]} == {
        (op, dtype) for op in ("aten::exp", "aten::sigmoid") for dtype in ("bfloat16", "float32")}
    assert all(r["holds"] and r["inputs"] > 1990 for r in data["results"])


def test_a_backend_program_is_measured_and_a_failing_kernel_is_a_finding(capsys):
    code = main(["accuracy", "--ops", "aten::sqrt", "--dtypes", "bfloat16", "--backend", "eager", "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert json.loads(out.out)["backend"] == "eager"
    contract = spec_accuracy.load_contracts().ulp_of("aten::sqrt", "bfloat16")
    [judged] = check.measure_all([contract], lambda c: (lambda x: x.float()), samples=10, seed=0, device="cpu")
    finding = check.judge(judged)
    assert not judged.holds and finding.mark == contract.mark
    assert "aten::sqrt bfloat16: nothing to measure: MeasurementError: aten::sqrt: expected torch.bfloat16" in str(finding)


def test_a_backends_log_lines_go_to_the_log_beside_the_report_not_the_terminal(tmp_path, capfd):
    report = tmp_path / "noisy.json"
    code = main(["accuracy", "--ops", "aten::abs", "--dtypes", "bfloat16", "--backend", "conform_faults:noisy",
                 "--report", str(report)])
    out = capfd.readouterr()
    assert code == 0, out.err
    assert "guard chatter" not in out.out + out.err
    assert "noisy backend: guard chatter" in report.with_suffix(".log").read_text()


def test_a_backends_table_says_who_computed_each_measurement(tmp_path, capsys):
    """conform_faults:partitioning takes ceil and trunc into its partitions and leaves every other op to PyTorch: a
    measurement of exp there is PyTorch's, and the table says so as opspec conform would."""
    report = tmp_path / "partitioning.json"
    code = main(["accuracy", "--ops", "aten::ceil", "--ops", "aten::exp", "--dtypes", "bfloat16", "--backend",
                 "conform_faults:partitioning", "--report", str(report)])
    capsys.readouterr()
    assert code == 0
    executed = {r["op"]: r["executed"] for r in json.loads(report.read_text())["results"]}
    assert executed == {"aten::ceil": "target", "aten::exp": "pytorch"}


def test_a_broken_contract_exits_1_naming_it(tmp_path, capsys):
    path = tmp_path / "accuracy.yaml"
    path.write_text(textwrap.dedent("""\
        ops:
          aten::sigmoid:
            domain: {self: '[-inf, inf]'}
            dtypes:
              bfloat16:
                max_ulp: 0.5
        """))
    code = main(["accuracy", "--contracts", str(path), "--format", "json"])
    out = capsys.readouterr()
    assert code == 1
    assert json.loads(out.out)["results"][0]["holds"] is False
    assert out.err.startswith(f"{path}:5:7: aten::sigmoid bfloat16: self=-89.0: got 0.0, correctly rounded ")
    assert "smallest bound that holds: 32" in out.err


def test_record_writes_what_was_measured_beside_the_contract(tmp_path, capsys):
    path = tmp_path / "accuracy.yaml"
    shutil.copy(ROOT / "opset" / "accuracy.yaml", path)
    assert main(["accuracy", "--contracts", str(path), "--ops", "aten::neg", "--dtypes", "float16", "--record"]) == 0
    contracts = spec_accuracy.load_contracts(path)
    measured = contracts.ulp_of("aten::neg", "float16").measured
    assert measured.max_ulp == 0 and measured.inputs == 65536 and measured.device == "cpu"
    assert contracts.ulp_of("aten::exp", "float16").measured == \
        spec_accuracy.load_contracts().ulp_of("aten::exp", "float16").measured
    assert path.read_text().startswith(spec_accuracy.HEADER)


def test_rules_measures_the_opsets_decomposition_rule_not_the_kernel(tmp_path, capsys):
    """log10's optional rule, log(x) * (1 / ln 10), rounds twice: held to the kernel's 1 ULP it breaks."""
    path = tmp_path / "accuracy.yaml"
    text = (ROOT / "opset" / "accuracy.yaml").read_text()
    start = text.index("  aten::log10:\n")
    at = text.index("        max_ulp: ", text.index("      float64:", start))
    end = text.index("\n", at)
    path.write_text(text[:at] + "        max_ulp: 1" + text[end:])
    args = ["accuracy", "--contracts", str(path), "--ops", "aten::log10", "--dtypes", "float64", "--samples",
            "100000", "--format", "json"]
    assert main(args) == 0  # the kernel
    capsys.readouterr()
    assert main([*args, "--rules"]) == 1
    out = capsys.readouterr()
    assert json.loads(out.out)["backend"] == "opset-rules"
    assert "aten::log10 float64: " in out.err and "the contract allows 1 ULP" in out.err


@pytest.mark.parametrize("args, message", [
    (["--rules", "--backend", "inductor"], "cannot be combined with --backend"),
    (["--rules", "--ops", "aten::exp"], "--rules: no chosen op has a decomposition rule in the opset"),
    (["--ops", "aten::nothing*"], "--ops aten::nothing*: no ULP contract matches"),
    (["--samples", "0"], "--samples 0: must be at least 1"),
    (["--record", "--backend", "inductor"], "cannot be combined with --backend"),
])
def test_usage_errors_exit_2_with_one_line(args, message, capsys):
    assert main(["accuracy", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_malformed_contracts_file_exits_2_naming_file_and_line(tmp_path, capsys):
    path = tmp_path / "accuracy.yaml"
    path.write_text(BAD)
    assert main(["accuracy", "--contracts", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:") and "Traceback" not in err and len(err.strip().splitlines()) == 1


# ---- the site's accuracy page ----

def test_the_accuracy_page_shows_contract_histogram_and_each_backends_largest_error(tmp_path):
    from opspec.reports.site import accuracy_page

    contracts = spec_accuracy.load_contracts()
    row = {"op": "aten::exp", "dtype": "float32", "inputs": 1000, "exhaustive": False, "max_ulp": 0.56,
           "histogram": {"0": 10, "0.5": 980, "1": 10}}
    (tmp_path / "eager-cpu.json").write_text(json.dumps({"torch": "2.13.0", "results": [row]}))
    (tmp_path / "inductor-cpu.json").write_text(json.dumps({"torch": "2.13.0", "results": [
        dict(row, max_ulp=2.1), {"op": "aten::exp", "dtype": "float16", "failure": "CompileError: no"}]}))
    (tmp_path / "partial-cpu.json").write_text(json.dumps({"torch": "2.13.0", "results": [
        dict(row, max_ulp=0.5, executed="pytorch")]}))
    (tmp_path / "broken.json").write_text("{")
    tables = accuracy_page.read_tables(tmp_path)
    assert sorted(tables) == ["eager-cpu", "inductor-cpu", "partial-cpu"]
    found = accuracy_page.context(contracts, tables, lambda op: f"ops/{op}.md")
    assert found["backends"] == ["eager-cpu", "inductor-cpu", "partial-cpu"]
    exp32, exp16 = (next(r for r in found["rows"] if r["op"] == "aten::exp" and r["dtype"] == d)
                    for d in ("float32", "float16"))
    assert exp32["buckets"] == ["10", "980", "10", "", "", ""] and exp32["inputs"] == "1,000"
    assert exp32["backends"] == ["0.56", "2.1 **broken**", "0.5 (pytorch)"] and exp16["backends"] == ["", "failed", ""]
    table = accuracy_page.table(found).splitlines()
    assert table[0].startswith("| op | dtype | contract | inputs | exact | ≤0.5 |") and len(table) == 2 + len(found["rows"])
    assert any(m["op"] == "aten::mm" for m in found["models"]) and any(b["op"] == "aten::eq.Tensor"
                                                                        for b in found["boolean"])
    policy = {p["dtype"]: p for p in found["policy"]}  # the subnormal policy, from the data
    assert policy["float32"]["results"] == "may-flush" and "0008" in policy["float32"]["reason"]
    assert policy["float16"]["inputs"] == "preserve" and "kept" in policy["float16"]["reason"]


def test_the_accuracy_page_shows_eager_on_other_torch_versions_beside_it(tmp_path):
    from opspec.reports.site import accuracy_page

    (tmp_path / "torch-versions").mkdir()
    (tmp_path / "eager-cpu.json").write_text(json.dumps({"torch": "2.13.0", "results": [
        {"op": "aten::exp", "dtype": "float32", "max_ulp": 0.51, "histogram": {"0.5": 3}}]}))
    (tmp_path / "torch-versions" / "eager-cpu.json").write_text(json.dumps({"backend": "eager", "device": "cpu", "torch": {
        "2.15.0": {"largest_error": {"aten::exp float32": 0.52}}, "2.9.0": {"largest_error": {"aten::exp float32": 7.0}}}}))
    (tmp_path / "torch-versions" / "broken.json").write_text("{")
    tables = accuracy_page.read_tables(tmp_path)
    older, meta = accuracy_page.read_history(tmp_path)
    assert sorted(older) == ["eager-cpu torch 2.15.0", "eager-cpu torch 2.9.0"] and meta["eager-cpu torch 2.9.0"]["torch"] == "2.9.0"
    found = accuracy_page.context(spec_accuracy.load_contracts(), {**tables, **older}, lambda op: None)
    assert found["backends"] == ["eager-cpu", "eager-cpu torch 2.9.0", "eager-cpu torch 2.15.0"]  # oldest first
    exp32 = next(r for r in found["rows"] if r["op"] == "aten::exp" and r["dtype"] == "float32")
    assert exp32["backends"] == ["0.51", "7 **broken**", "0.52"]


def test_the_committed_history_covers_every_contract_on_torch_2_9_and_2_15():
    from opspec.reports.site import accuracy_page

    older, _ = accuracy_page.read_history(ROOT / "conformance" / "accuracy")
    contracts = {(c.op, c.dtype): c.max_ulp for c in spec_accuracy.load_contracts().ulp}
    for version in ("2.9.0", "2.15.0"):
        measured = older[f"eager-cpu torch {version}"]
        broken = [key for key, found in measured.items() if key in contracts and found["max_ulp"] > contracts[key]]
        assert broken == [], (version, broken)


def test_the_command_measures_binary_ops_fixed_arguments_and_decomposed_ops_through_their_rule(tmp_path, capsys):
    report = tmp_path / "eager.json"
    code = main(["accuracy", "--ops", "aten::atan2", "--ops", "aten::clamp", "--ops", "aten::silu",
                 "--dtypes", "float32", "--samples", "2000", "--report", str(report)])
    out = capsys.readouterr()
    assert code == 0, out.err
    results = {r["op"]: r for r in json.loads(report.read_text())["results"]}
    assert set(results) == {"aten::atan2", "aten::clamp", "aten::silu"} and all(r["holds"] for r in results.values())
    assert results["aten::atan2"]["inputs"] > 1900 and not results["aten::atan2"]["exhaustive"]
    assert results["aten::clamp"]["max_ulp"] == 0  # measured at the contract's min and max
    assert "aten::silu" not in {op.name for op in load.load_opset().active_ops()}  # so its rule was run

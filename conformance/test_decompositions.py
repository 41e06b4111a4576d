"""Generated tests: one property per decomposition rule of the opset, per dtype and device.

For each rule: the values of the decomposition match the eager kernel on drawn
inputs (the shared comparison rule), and tracing the decomposition produces only
the core ops the rule declares. Random rules are checked by properties and a
two-sample test instead of values. Every rule also meets its op's special cases
(``opset/special_cases``) exactly, as torch's kernel does.
"""
from __future__ import annotations

import functools

import pytest
import torch
from conftest import device_params, with_cuda_note
from hypothesis import given, settings
from hypothesis import strategies as st

from opspec.bridge import versions
from opspec.checks import decomp_check
from opspec.conform import expectations
from opspec.conform.cases import Case
from opspec.spec import load
from opspec.spec.special_cases import load_special_cases

CLOSURE_EXAMPLES = 3  # tracing costs ~20 ms; the produced ops rarely depend on more than rank and dtype
RANDOM_EXAMPLES = 3  # each random example is a statistical test on tens of thousands of draws


@functools.lru_cache(maxsize=None)
def opset(version: str | None):
    return load.load_opset(version)


@functools.lru_cache(maxsize=None)
def subject(version: str | None, op: str) -> decomp_check.Subject:
    the_opset = opset(version)
    return decomp_check.subject_for_rule(the_opset, the_opset.rules_by_op[op])


@functools.lru_cache(maxsize=None)
def known_failures(version: str | None) -> expectations.Expectations:
    """conformance/expectations/decompositions.yaml: torch's decompositions known to fail, per torch version."""
    path = expectations.default_path("decompositions")
    return expectations.read(path, opset(version)) if path else expectations.Expectations()


@functools.lru_cache(maxsize=None)
def special_cases() -> dict:
    return load_special_cases()


def expectation_marks(version: str | None, test: str, op: str, dtype: str, device: str) -> list:
    """A strict xfail for a known failure (a case that passes fails as stale), a skip for one that must not run."""
    entry = known_failures(version).lookup(Case(op, dtype, device))
    if entry is None or (entry.tests and test not in entry.tests):
        return []
    reason = f"{entry.reason} ({entry.where})"
    return [pytest.mark.skip(reason=reason) if entry.status == "skip" else pytest.mark.xfail(strict=True, reason=reason)]


def pytest_generate_tests(metafunc):
    if "special_case" in metafunc.fixturenames:
        return _special_case_params(metafunc)
    if "rule_case" not in metafunc.fixturenames:
        return
    version = metafunc.config.getoption("--opset")
    test = metafunc.function.__name__.removeprefix("test_")
    random_only = test == "random_rule"
    cases = []
    for rule in opset(version).rules:
        if rule.random != random_only:
            continue
        absence = versions.rule_absence(rule)
        if absence:  # one skipped case says why; the other rules are unaffected
            cases.append(pytest.param(None, id=f"{rule.op.removeprefix('aten::')}-absent", marks=pytest.mark.skip(reason=str(absence))))
            continue
        for dtype in decomp_check.dtypes_for(subject(version, rule.op)):
            name = str(dtype).removeprefix("torch.")
            for device in device_params():
                case = (version, rule.op, dtype, device.values[0])
                marks = expectation_marks(version, test, rule.op, name, device.values[0])
                cases.append(pytest.param(case, id=f"{rule.op.removeprefix('aten::')}-{name}-{device.id}", marks=marks))
    metafunc.parametrize("rule_case", with_cuda_note(cases))


def _special_case_params(metafunc):
    """One case per (rule, dtype, device) where the rule's op has special cases in that dtype."""
    version = metafunc.config.getoption("--opset")
    cases = []
    for rule in opset(version).rules:
        rows = special_cases().get(rule.op, ())
        absence = versions.rule_absence(rule)
        if absence or not rows:
            continue  # test_values already says why an absent rule is skipped
        for name in decomp_check.special_case_dtypes(subject(version, rule.op), rows):
            for device in device_params():
                marks = expectation_marks(version, "special_cases", rule.op, name, device.values[0])
                cases.append(pytest.param((version, rule.op, name, device.values[0]),
                                          id=f"{rule.op.removeprefix('aten::')}-{name}-{device.id}", marks=marks))
    metafunc.parametrize("special_case", with_cuda_note(cases))


def draw_case(rule_case, data):
    """The subject, one drawn call and its dtype for a (version, op, dtype, device) case."""
    version, op, dtype, device = rule_case
    the_subject = subject(version, op)
    return the_subject, data.draw(decomp_check.draw_calls(the_subject, dtype, device), label="call"), dtype


@given(data=st.data())
def test_values(rule_case, data):
    decomp_check.check_values(*draw_case(rule_case, data))


@settings(max_examples=CLOSURE_EXAMPLES)
@given(data=st.data())
def test_closure(rule_case, data):
    decomp_check.check_closure(*draw_case(rule_case, data))


@settings(max_examples=RANDOM_EXAMPLES)
@given(data=st.data())
def test_random_rule(rule_case, data):
    torch.manual_seed(0)
    decomp_check.check_random(*draw_case(rule_case, data), seed=0)


def test_special_cases(special_case):
    version, op, dtype, device = special_case
    problems = decomp_check.check_special_cases(subject(version, op), special_cases()[op], dtype, device)
    assert not problems, "\n".join(problems)

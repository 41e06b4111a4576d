"""Backend conformance as pytest cases: ``pytest conformance/test_backend.py --backend NAME``.

The same cases as ``opspec conform --backend NAME`` (float32; each op that takes
no float32 in its first dtype), one test per (op, dtype, device), with the
backend's expectation file applied: an xfail case that fails is xfailed, one
that passes fails as a stale expectation, a skip case is skipped. Without
``--backend`` every test here is skipped with the reason, so the default run
is unaffected. Runs in parallel with pytest-xdist (``-n auto``); a backend
that crashes takes its xdist worker down, which xdist reports and replaces.
"""
from __future__ import annotations

import functools

import pytest
from conftest import device_params, with_cuda_note

from opspec.conform import backends, cases, expectations
from opspec.conform.runner import CaseRunner, Settings
from opspec.spec import load

DTYPES = ["float32"]


@functools.lru_cache(maxsize=None)
def runner(backend: str, version: str | None) -> CaseRunner:
    return CaseRunner(Settings(backend=backend, opset=version))


@functools.lru_cache(maxsize=None)
def expected(backend: str, version: str | None) -> expectations.Expectations:
    path = runner(backend, version).backend.declaration.expectations_path()  # the declaration's default
    return expectations.read(path, load.load_opset(version)) if path else expectations.Expectations()


def pytest_generate_tests(metafunc):
    if "backend_case" not in metafunc.fixturenames:
        return
    backend = metafunc.config.getoption("--backend")
    version = metafunc.config.getoption("--opset")
    if not backend:
        reason = "no --backend given (pytest conformance/ --backend NAME runs the backend conformance suite)"
        metafunc.parametrize("backend_case", [pytest.param(None, id="no-backend", marks=pytest.mark.skip(reason=reason))])
        return
    try:
        runner(backend, version)
    except backends.UnknownBackend as err:
        raise pytest.UsageError(f"--backend: {err}") from None
    params = []
    for op in load.load_opset(version).active_ops():
        for device in device_params():
            for case in cases.cases_for([op], DTYPES, [device.values[0]]):
                params.append(pytest.param((backend, version, case), id=case.id))
    metafunc.parametrize("backend_case", with_cuda_note(params))


def test_backend(backend_case):
    backend, version, case = backend_case
    expectation = expected(backend, version).lookup(case)
    if expectation is not None and expectation.status == "skip":
        pytest.skip(f"{expectation.reason} ({expectation.where})")
    record = expectations.apply(runner(backend, version).run(case), expectation)
    if record["status"] == "xfail":
        pytest.xfail(f"{record['outcome']}: {record['message']} ({expectation.reason})")
    if record["status"] == "skip":
        pytest.skip(record["message"])
    if record["status"] == "fallback":  # right, but PyTorch computed it: not a pass, not a failure
        pytest.xfail(record["message"])
    if record["status"] != "pass":
        pytest.fail(f"{record['status']}: {record['message']}\n\nrepro:\n{record.get('repro', '')}", pytrace=False)

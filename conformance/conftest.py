"""pytest entry of the conformance suite: options, hypothesis profiles, devices.

    pytest conformance/                                  # the ci profile, whatever the environment
    OPSPEC_HYPOTHESIS_PROFILE=dev pytest conformance/    # random exploration (`make explore`)
    pytest conformance/ --hypothesis-profile=thorough --opset 2026.11
"""
from __future__ import annotations

import os

import pytest
import torch
from hypothesis import HealthCheck, Phase, settings

# ci: derandomized and bounded, so every run checks the same inputs and fails the same way.
settings.register_profile(
    "ci",
    max_examples=10,  # per rule and dtype: ~80 calls per rule across its dtypes, in about 2 minutes for the opset
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    max_examples=1000,
    deadline=None,
    phases=tuple(Phase),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
# The default is the derandomized profile on every machine, so the README's test command gives
# the same verdict every run; random exploration is asked for by name (`make explore`).
settings.load_profile(os.environ.get("OPSPEC_HYPOTHESIS_PROFILE") or "ci")

CUDA = torch.cuda.is_available()


def device_params() -> list:
    """cpu always; cuda where it is available (elsewhere `with_cuda_note` stands for all its cases at once)."""
    return [pytest.param("cpu", id="cpu"), *([pytest.param("cuda", id="cuda")] if CUDA else [])]


def with_cuda_note(params: list) -> list:
    """The params, and where CUDA is absent one skipped case saying how many cuda cases were not generated
    (one line, rather than a skipped twin of every cpu case)."""
    if CUDA:
        return params
    twins = sum(1 for param in params if param.id.endswith("-cpu"))
    reason = f"CUDA is not available on this machine: the {twins} cuda cases are not generated"
    return [*params, pytest.param(None, id="cuda-absent", marks=pytest.mark.skip(reason=reason))]


def pytest_addoption(parser):
    group = parser.getgroup("opspec")
    group.addoption("--opset", action="store", default=None, metavar="V", help="opset version to check (default: newest)")
    group.addoption("--backend", action="store", default=None, metavar="NAME",
                    help="run test_backend.py against this backend (a torch.compile backend name, export, "
                         "onnxruntime or pkg.module:callable); without it those tests are skipped")


# device -> the case whose device fault poisoned it in this process; later cases on that device
# here would fail for its sake, so they are skipped naming it (a fresh process runs them).
POISONED: dict[str, str] = {}


def device_of(item) -> str | None:
    """The device of a generated case: its id ends in -cpu or -cuda."""
    callspec = getattr(item, "callspec", None)
    suffix = callspec.id.rsplit("-", 1)[-1] if callspec else None
    return suffix if suffix in ("cpu", "cuda") else None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A dtype the device has no kernel for is a skip with the kernel's words; a device fault is the
    case's crash, and the cases after it on that device in this process are skipped, naming it.
    A hook rather than code in the tests: hypothesis derives the ci profile's draws from the test's source."""
    from opspec.checks import decomp_check
    from opspec.testing import kernel_errors

    device = device_of(item)
    if device in POISONED:
        pytest.skip(f"not run: a device fault in {POISONED[device]} poisoned {device} in this process; "
                    f"run this case again in a fresh process (pytest {item.nodeid!r})")
    try:
        return (yield)
    except decomp_check.KernelMissing as err:
        pytest.skip(str(err))
    except Exception as err:
        # a fault can surface anywhere, wrapped in another error (a tensor literal that cannot be made)
        if not (isinstance(err, kernel_errors.DeviceFault) or kernel_errors.mentions_device_fault(err)):
            raise
        if device is not None:
            POISONED[device] = item.nodeid
        pytest.fail(f"crash: device fault: {kernel_errors.first_line(err)}; the cases after it on "
                    f"{device or 'this device'} in this process are skipped", pytrace=False)


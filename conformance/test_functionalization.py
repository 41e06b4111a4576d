"""Functionalization of every in-place and ``out=`` variant of the core ops, with hypothesis drawing the calls.

One test per (variant, device): hypothesis draws a call of the functional op from
the strategy layer and a mutation shape (graph input or intermediate, written
directly or through a view), builds the mutating program, exports it and checks
that the lowered graph is functional core ops and matches eager, values and
written inputs alike. Mutation shapes recorded as findings for the installed
torch (``conformance/expectations/functionalization.yaml``) are not drawn; the
``--functionalization`` section of ``opspec conform`` reports them. Draws the
variant's program cannot be built from (a view that cannot reach a scalar
output, a call the in-place kernel refuses) are rejected with ``assume``.
"""
from __future__ import annotations

import functools
import zlib

import pytest
from conftest import device_params, with_cuda_note
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st

from opspec.bridge import functional_variants
from opspec.conform import cases
from opspec.conform import functionalization as section
from opspec.conform import functionalization as fx
from opspec.spec import load
from opspec.testing import strategies

# Every variant goes through torch.export and its decompositions, ~0.25 s each on a CPU core: the 287 exports are a
# sweep (`make sweep`, CI), as `opspec conform --functionalization` is for a backend. `make test` checks the machinery
# on a few variants of its own (tests/test_mutating_variants.py).
pytestmark = pytest.mark.sweep

# exporting is ~100x dearer than an eager call: a tenth of the profile's examples per variant (one in the ci
# profile, five in dev, a hundred in thorough)
EXAMPLES = max(1, settings.default.max_examples // 10)


@functools.lru_cache(maxsize=None)
def opset(version: str | None):
    return load.load_opset(version)


@functools.lru_cache(maxsize=None)
def table(version: str | None) -> dict:
    return fx.lowering_table(opset(version))


@functools.lru_cache(maxsize=None)
def findings(version: str | None) -> section.Findings:
    variants = functional_variants.variants(op.name for op in opset(version).active_ops())
    return section.read_findings(section.default_path(), variants, opset(version))


def rotated(mutations: list, variant_id: str) -> list:
    """The mutation shapes, starting at one picked by a stable hash of the variant: a run of one example per variant
    draws the first, so across the variants every shape (input or intermediate, direct or through a view) is checked."""
    start = zlib.crc32(variant_id.encode()) % len(mutations) if mutations else 0
    return mutations[start:] + mutations[:start]


def pytest_generate_tests(metafunc):
    if "variant_case" not in metafunc.fixturenames:
        return
    version = metafunc.config.getoption("--opset")
    params = []
    for variant in functional_variants.variants(op.name for op in opset(version).active_ops()):
        for device in device_params():
            params.append(pytest.param((version, variant, device.values[0]), id=f"{variant.id}-{device.id}"))
    metafunc.parametrize("variant_case", with_cuda_note(params))


@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_variant_functionalizes(variant_case, data):
    version, variant, device = variant_case
    mutations = rotated([m for m in fx.mutations(variant) if findings(version).lookup(m) is None], variant.id)
    if not mutations:
        pytest.skip("every mutation of this variant is a recorded finding")
    core = opset(version).ops_by_name[variant.functional]
    dtype = cases.dtypes_for(core, ["float32"])[0]
    call = data.draw(strategies.calls(core.schema, core.testing, dtype, device), label="call")
    assume(cases.PRECONDITIONS.get(core.name, lambda c: True)(call))
    note(f"call of the functional op:\n{call.repro()}")
    mutation = data.draw(st.sampled_from(mutations), label="mutation")
    program = fx.build(mutation, call)
    assume(program is not None)
    verdict = fx.check(program, opset(version), table(version), fx.tolerance_of(opset(version), variant))
    note(f"graph ops: {', '.join(verdict.graph_ops)}")
    assert verdict.status == "pass", f"{mutation.id}: {verdict.status}: {verdict.message}"

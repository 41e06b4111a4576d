"""`opspec proposal measure`: run the checks a proposal's changes imply and record them as evidence.

A rule added or changed is run through the decomposition checker (values against the
eager kernel, closure over the declared targets) on drawn inputs; the testing hints
of an added op, or an op's new hints, must yield calls the eager kernel accepts. Each
result becomes one ``evidence`` entry, which `opspec proposal check` requires before a
proposal is accepted.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from opspec.proposals.model import Proposal
from opspec.proposals.opsetview import base_version, read_index
from opspec.proposals.readiness import EVIDENCE_FOR_ACTION
from opspec.spec.errors import one_line

VALID_SHARE = 0.5  # an op's proposed hints must make at least half the drawn calls valid, on every dtype


def measure(p: Proposal, opset_root: Path, *, max_examples: int, seed: int, date: str) -> list[dict[str, Any]]:
    """One evidence entry per op the changes add or give new hints, or per rule they add or change, in change order."""
    from opspec.bridge import torch_ops

    torch_version = torch_ops.version()
    version = base_version(read_index(opset_root), p.target_version)
    command = f"opspec proposal measure {p.id} --max-examples {max_examples} --seed {seed}"
    entries = []
    for change in p.changes:
        check = EVIDENCE_FOR_ACTION.get(change["action"])
        if check == "check-decomp":
            ok, detail = _check_rule(change["rule"], opset_root, version, max_examples, seed)
            name = change["rule"]["op"]
        elif check == "strategy":
            ok, detail = _check_strategy(change["op"], change.get("testing") or {}, max_examples, seed)
            name = change["op"]
        else:
            continue
        entries.append({"check": check, "op": name, "result": "pass" if ok else "fail", "torch": torch_version,
                        "date": date, "command": command, "detail": detail})
    return entries


def merged(old: tuple, new: list[dict]) -> list[dict]:
    """Earlier evidence with the entries for the same (check, op) replaced by the new ones."""
    fresh = {(e["check"], e["op"]) for e in new}
    return [dict(e) for e in old if (e["check"], e["op"]) not in fresh] + new


def _check_rule(rule: dict, opset_root: Path, version: str | None, max_examples: int, seed: int) -> tuple[bool, str]:
    from opspec.checks import decomp_check
    from opspec.spec import load
    from opspec.spec.model import DecompositionRule

    try:
        opset = load.load_opset(version, opset_root)
        subject = decomp_check.subject_for_rule(opset, DecompositionRule.from_dict(rule))
        dtypes = decomp_check.dtypes_for(subject)
        outcome = decomp_check.run(subject, dtypes=dtypes, max_examples=max_examples, seed=seed)
    except Exception as err:  # a candidate may fail in any way: that is the measurement
        return False, f"the check could not run: {one_line(err)}"
    names = ", ".join(str(d).removeprefix("torch.") for d in dtypes)
    if outcome.ok:
        return True, f"{outcome.examples} drawn calls ({max_examples} per dtype: {names}) match the eager kernel and trace to the declared targets"
    return False, outcome.problem


def _check_strategy(op: str, testing: dict, max_examples: int, seed: int) -> tuple[bool, str]:
    from opspec.bridge import torch_ops
    from opspec.checks.strategy_report import run_calls
    from opspec.spec.model import TestingHints
    from opspec.testing import strategies

    hints = TestingHints.from_dict(testing)
    results = []
    try:
        schema = torch_ops.schema_of(op)
        for dtype in strategies.dtypes_under_test(op, hints):
            drawn = strategies.draw_examples(strategies.calls(schema, hints, dtype, "cpu"), max_examples, seed)
            valid, first_error = run_calls(drawn)
            results.append((str(dtype).removeprefix("torch."), len(drawn), valid, first_error))
    except Exception as err:  # noqa: BLE001 - no calls at all is the finding
        return False, f"cannot draw calls: {one_line(err)}"
    source = strategies.strategy_source(op, hints)
    counts = ", ".join(f"{name} {valid}/{drawn}" for name, drawn, valid, _ in results)
    bad = [r for r in results if not r[1] or r[2] < VALID_SHARE * r[1]]
    if bad:
        name, drawn, valid, error = bad[0]
        return False, f"{source} strategy: valid calls {counts}; {name}: {error or 'nothing drawn'}"
    return True, f"{source} strategy: calls the eager kernel accepts, {counts}"

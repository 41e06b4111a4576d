"""``export``: torch.export lowered with the opset's decomposition table, the exported module run on eager kernels.

A pass says the exported program computes the op; a failure torch.export alone
does not show is the decompositions' (the opset's own, where its rule is not torch's).
"""
from __future__ import annotations

from opspec.conform.backends import program
from opspec.conform.backends.base import Backend, Declaration, versioned


def _build(declaration: Declaration, opset, dynamic: bool) -> Backend:
    return Backend(declaration.name, program.export_compile, versioned(), dynamic, table=program.opset_table(opset),
                   package="torch", declaration=declaration)


def _unexplained(own_rule: bool) -> tuple[str, str, str]:
    if own_rule:
        return "opspec", "decomposition", "export alone passes; the opset's own decomposition rule does not"
    return "frontend", "decomposition", "export alone passes; with the opset's decompositions it does not"


DECLARATIONS = (
    Declaration(
        "export", _build,
        evidence="reference", target="PyTorch's eager kernels behind the exported program",
        evidence_note="torch.export and the opset's decompositions, then PyTorch's eager kernels: a pass says the "
                      "exported program computes the op",
        stages=program.export_stages,
        unexplained=_unexplained,
        lowering_meaning="torch.export, then the opset's decompositions, then the exported program runs with the "
                         "eager kernels: nothing is lowered or handed back, so there is no lowering figure.",
        lowering_figure=False,
    ),
)

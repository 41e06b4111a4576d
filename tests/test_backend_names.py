"""Nothing outside ``conform/backends/`` tests a backend's name: what differs between backends is in their
declarations (DESIGN.md, layer 5)."""
from __future__ import annotations

import ast
from pathlib import Path

from opspec.conform.backends import registry

SRC = Path(__file__).resolve().parents[1] / "src" / "opspec"
BACKENDS = SRC / "conform" / "backends"


def names() -> set[str]:
    return set(registry.BUILT_IN)


def comparisons(source: str, known: set[str]) -> list[tuple[int, str]]:
    """(line, the comparison) for each ``==``, ``!=``, ``in`` or ``not in`` with a backend's name as an operand."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        constants = [item for operand in operands
                     for item in (operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand])]
        if any(isinstance(c, ast.Constant) and c.value in known for c in constants):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_scan_sees_a_comparison_with_a_backend_name():
    source = 'if backend == "inductor":\n    pass\nok = name in ("xla", "openxla")\nfine = name == "sin"\n'
    assert [line for line, _ in comparisons(source, names())] == [1, 3]


def test_no_module_outside_the_backends_compares_a_backend_name():
    known = names()
    found = [f"{path.relative_to(SRC.parent)}:{line}: {text}"
             for path in sorted(SRC.rglob("*.py")) if not path.is_relative_to(BACKENDS)
             for line, text in comparisons(path.read_text(encoding="utf-8"), known)]
    assert found == []

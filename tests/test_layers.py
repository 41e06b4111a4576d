"""The packages of opspec are layers: each may import only the layers listed before it.

The table is the architecture; the test reads every import in the source (module
level and inside functions) and fails on one that climbs the table.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "opspec"

# The layers, lowest first: each may import the layers before it, never one after it.
ORDER = ["spec", "results", "decompositions", "bridge", "testing", "checks", "conform", "proposals", "reports", "examples", "cli"]
LAYERS: dict[str, set[str]] = {name: set(ORDER[:i]) for i, name in enumerate(ORDER)}
# Modules at the top of the package that any layer may use.
ROOT_MODULES = {"opspec"}


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "opspec":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "opspec"


def imported_modules(path: Path, source: Path) -> list[tuple[int, str]]:
    package = ".".join(path.relative_to(source.parent).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("opspec."):
            # modules named by string (importlib, forkserver preload) count as imports too
            found.append((node.lineno, node.value.split(":")[0]))
    return found


def upward_imports(source: Path) -> list[str]:
    problems = []
    for path in sorted(source.rglob("*.py")):
        own = layer_of(".".join(path.relative_to(source.parent).with_suffix("").parts))
        if own not in LAYERS:
            continue
        for line, module in imported_modules(path, source):
            target = layer_of(module)
            if target in (None, own) or target in ROOT_MODULES or target in LAYERS[own]:
                continue
            problems.append(f"{path.relative_to(source.parent)}:{line}: {own} imports {module} ({target})")
    return problems


def import_cycles(source: Path) -> list[list[str]]:
    """Modules that import each other, directly or through others, counting imports inside functions too:
    a lazy import hides a loop from Python, not from the design. Each cycle is one sorted list."""
    import graphlib

    modules = {}
    for path in sorted(source.rglob("*.py")):
        parts = path.relative_to(source.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def module_of(name: str) -> str | None:  # "pkg.mod.attr" -> "pkg.mod", the longest known prefix
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {name: {m for _, imported in imported_modules(path, source)
                    if (m := module_of(imported)) not in (None, name)} for name, path in modules.items()}
    cycles = []
    while graph:
        try:
            graphlib.TopologicalSorter(graph).prepare()
            return cycles
        except graphlib.CycleError as err:
            cycle = sorted(set(err.args[1]))
            cycles.append(cycle)
            graph = {name: deps - set(cycle) for name, deps in graph.items() if name not in cycle}
    return cycles


def test_no_import_loops_lazy_ones_included():
    assert import_cycles(SOURCE) == []


def test_an_added_lazy_import_loop_fails(tmp_path):
    import shutil

    copy = tmp_path / "opspec"
    shutil.copytree(SOURCE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    module = copy / "conform" / "evidence.py"
    module.write_text(module.read_text() + "\n\ndef _late():\n    from opspec.conform.backends import registry\n")
    cycles = import_cycles(copy)
    assert cycles and "opspec.conform.evidence" in cycles[0] and len(cycles[0]) > 1


def test_no_layer_imports_upward():
    assert upward_imports(SOURCE) == []


def test_every_package_is_in_the_table():
    packages = {p.parent.name for p in SOURCE.glob("*/__init__.py")}
    assert packages == set(LAYERS)


@pytest.mark.parametrize("layer, upward", [("spec", "opspec.bridge.torch_ops"), ("testing", "opspec.conform.runner"),
                                           ("checks", "opspec.reports.browse"), ("proposals", "opspec.cli.main")])
def test_an_added_upward_import_fails(tmp_path, layer, upward):
    """The check can fail: a copy of the tree with one upward import added is refused."""
    import shutil

    copy = tmp_path / "opspec"
    shutil.copytree(SOURCE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    module = copy / layer / "__init__.py"
    module.write_text(module.read_text() + f"\nimport {upward}\n")
    problems = upward_imports(copy)
    assert len(problems) == 1 and problems[0].startswith(f"opspec/{layer}/__init__.py:") and upward in problems[0]

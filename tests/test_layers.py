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
ORDER = ["spec", "decompositions", "bridge", "testing", "checks", "conform", "proposals", "reports", "examples", "cli"]
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

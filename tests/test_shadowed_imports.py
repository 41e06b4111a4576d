"""No function assigns a name its module imports: the import is then unreachable in the whole function.

Code that only runs with an optional extra installed (ExecuTorch, OpenVINO) is not
exercised where the extra is missing; a local variable that shadows a module the
function also uses raises UnboundLocalError there and nowhere else. Read from the
symbol tables, so it holds for every module whether or not its extras are installed.
"""
from __future__ import annotations

import ast
import symtable
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _imported(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


def _shadowing(table: symtable.SymbolTable, imported: set[str], where: str) -> list[str]:
    found = []
    for child in table.get_children():
        if child.get_type() == "function":
            found += [f"{where}:{child.get_lineno()} {child.get_name()} assigns {symbol.get_name()}, a module import"
                      for symbol in child.get_symbols()
                      if symbol.get_name() in imported and symbol.is_assigned() and symbol.is_local()
                      and not symbol.is_imported()]
        found += _shadowing(child, imported, where)
    return found


def test_no_function_shadows_a_module_import():
    found = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        where = str(path.relative_to(SRC.parent))
        found += _shadowing(symtable.symtable(text, where, "exec"), _imported(ast.parse(text)), where)
    assert not found, "\n".join(found)


def test_it_finds_the_shadowing_it_is_for():
    text = "from pkg import program\n\ndef build():\n    x = program.make()\n    program = x.run()\n"
    assert _shadowing(symtable.symtable(text, "m.py", "exec"), _imported(ast.parse(text)), "m.py") == [
        "m.py:3 build assigns program, a module import"]

"""The package is importable without torch for data work, and the wheel carries the opset."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from opspec.spec import load

ROOT = Path(__file__).resolve().parents[1]


def test_loading_the_data_does_not_import_torch():
    code = (
        "import sys; sys.modules['torch'] = None\n"  # any `import torch` now raises ImportError
        "from opspec.spec import load\n"
        "opset = load.load_opset()\n"
        "print(len(opset.ops), len(opset.rules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    ops, rules = map(int, result.stdout.split())
    newest = load.load_opset()  # the same data read in this process, where torch may be loaded
    assert ops == len(newest.ops) >= 193 and rules == len(newest.rules) >= 60


def test_declared_packages_cover_the_source_tree():
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared = set(config["tool"]["setuptools"]["packages"])
    on_disk = {
        ".".join(path.parent.relative_to(ROOT / "src").parts)
        for path in (ROOT / "src" / "opspec").rglob("__init__.py")
    }
    assert on_disk <= declared, f"missing from pyproject packages: {sorted(on_disk - declared)}"


@pytest.mark.slow
def test_wheel_carries_the_opset_data(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {result.stderr.strip().splitlines()[-1:]}")
    [wheel] = tmp_path.glob("opspec-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for data_file in (ROOT / "opset").rglob("*"):
        if data_file.is_file() and data_file.suffix in (".yaml", ".json"):
            assert f"opspec/_opset/{data_file.relative_to(ROOT / 'opset').as_posix()}" in names
    assert {"opspec/_opset/descriptions.yaml", "opspec/_opset/schema/descriptions.schema.json",
            "opspec/_opset/schema/special_cases.schema.json", "opspec/_opset/special_cases/README.md"} <= names
    for template in (ROOT / "src" / "opspec" / "reports" / "templates").rglob("*.j2"):
        assert f"opspec/{template.relative_to(ROOT / 'src' / 'opspec').as_posix()}" in names
    for folder, package in (("conformance/backends", "_backends"), ("conformance/expectations", "_expectations"),
                            ("conformance/costs", "_costs")):
        for data_file in (ROOT / folder).glob("*.yaml"):
            assert f"opspec/{package}/{data_file.name}" in names
    # Installed from the wheel alone, away from the checkout, the package reads its own copy of the data.
    target = tmp_path / "installed"
    zipfile.ZipFile(wheel).extractall(target)
    code = ("from opspec.spec import load, resources\n"
            "from opspec.spec.special_cases import load_special_cases\n"
            "print(resources.opset_root()); print(len(load.load_opset().ops), len(load.load_descriptions()))\n"
            "print(sum(map(len, load_special_cases().values())))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    where, counts, rows = run.stdout.splitlines()
    newest = len(load.load_opset().ops)
    assert where == str(target / "opspec" / "_opset") and counts == f"{newest} {newest}"
    from opspec.spec.special_cases import load_special_cases

    assert int(rows) == sum(map(len, load_special_cases().values()))  # every row of the checkout travels

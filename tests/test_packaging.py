"""The package is importable without torch for data work, and the wheel carries the opset."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib

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
    assert ops == 193 and rules >= 60


def test_declared_packages_cover_the_source_tree():
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

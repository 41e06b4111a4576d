"""Time ``opspec validate`` after the edits people make, beside a full run and an unchanged one.

    python benchmarks/validate_edits.py [--repeat 5] [--opspec .venv/bin/opspec]

Works on a copy of the bundled opset with a draft version after the newest (a copy of it,
as a contributor's next version starts) and a result cache of its own. Times a full run
without the cache (``--no-cache``), a run with an empty cache, a run with nothing changed,
and a run after each edit below. An edit writes its repetition's number, so every timed
run is the first after a new edit. Prints the median wall and CPU time (user + sys of the
command) of each case and the load average around it: on a shared machine say what else
ran when you quote a number.
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRAFT = "2099.01"


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path}: {old!r}"
    path.write_text(text.replace(old, new), encoding="utf-8")


# name -> (file under the opset copy, the text edited, what it becomes in repetition {n})
EDITS = {
    "a special-case row's claim": ("special_cases/pointwise-unary.yaml", "says: The absolute value of -0.0 is +0.0.",
                                   "says: The absolute value of -0.0 is +0.0 (edit {n})."),
    "a description's prose": ("descriptions.yaml", "description: 'Absolute value of each element;",
                              "description: 'Absolute value of each element (edit {n});"),
    "a formula_check": ("descriptions.yaml", "else torch.where(self < 0, -self, self)",
                        "else torch.where(self < 0 * {n}, -self, self)"),
    "the draft's core_ops.yaml": (f"{DRAFT}/core_ops.yaml", "rationale: Absolute value is a single instruction",
                                   "rationale: Absolute value (edit {n}) is a single instruction"),
    "an erratum's text": ("errata.yaml", "now: torch.sign(NaN) is 0 in torch,", "now: torch.sign(NaN) is 0 (edit {n}) in torch,"),
}


def opset_with_a_draft(where: Path) -> Path:
    """The bundled opset copied, with a draft version after the newest holding the newest's files."""
    opset = where / "opset"
    shutil.copytree(ROOT / "opset", opset, ignore=shutil.ignore_patterns("__pycache__"))
    newest = re.findall(r"^  - version: '([^']+)'", (opset / "versions.yaml").read_text(), flags=re.M)[-1]
    shutil.copytree(opset / newest, opset / DRAFT)
    for path in (opset / DRAFT).glob("*.yaml"):
        _replace(path, f"opset: '{newest}'", f"opset: '{DRAFT}'")
    with (opset / "versions.yaml").open("a", encoding="utf-8") as index:
        index.write(f"  - version: '{DRAFT}'\n    status: draft\n    torch: 2.13.0\n")
    return opset


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(wall s, CPU s of the command, exit status)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.returncode


def report(name: str, runs: list[tuple[float, float, int]], loads: tuple[float, float]) -> None:
    walls, cpus, codes = zip(*runs)
    print(f"{name:32s} wall {statistics.median(walls):5.2f} s ({min(walls):.2f}-{max(walls):.2f}), "
          f"CPU {statistics.median(cpus):5.2f} s, exit {sorted(set(codes))}, load {loads[0]:.1f} -> {loads[1]:.1f}",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--opspec", default=str(ROOT / ".venv" / "bin" / "opspec"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        opset = opset_with_a_draft(Path(scratch))
        env = {**os.environ, "OPSPEC_CACHE_DIR": str(Path(scratch) / "cache")}
        validate = [args.opspec, "validate", "--opset-dir", str(opset)]

        def case(name: str, before_each=lambda n: None, *extra: str) -> None:
            load = os.getloadavg()[0]
            runs = []
            for n in range(args.repeat):
                before_each(n)
                runs.append(timed([*validate, *extra], env))
            report(name, runs, (load, os.getloadavg()[0]))

        case("full, --no-cache", lambda n: None, "--no-cache")
        case("full, empty cache", lambda n: shutil.rmtree(env["OPSPEC_CACHE_DIR"], ignore_errors=True))
        case("unchanged")
        for name, (file, old, new) in EDITS.items():
            path = opset / file
            original = path.read_text(encoding="utf-8")
            if original.count(old) != 1:  # an edit that misses times an unchanged run under its name
                raise SystemExit(f"{path}: the text to edit is not there once: {old!r}")
            timed(validate, env)  # the state before the edits is kept
            case(f"after {name}", lambda n: path.write_text(original.replace(old, new.format(n=n), 1), encoding="utf-8"))
            path.write_text(original, encoding="utf-8")


if __name__ == "__main__":
    main()

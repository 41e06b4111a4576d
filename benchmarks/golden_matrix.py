"""The compatibility table: golden programs exported with torch X, loaded and run with torch Y.

    python benchmarks/golden_matrix.py [--versions 2.11.0 2.15.0] [--venvs DIR] [--work DIR] [--opset V]
    python benchmarks/golden_matrix.py --table-only     # rewrite the README table from the JSON

For each torch X: ``tools/make_golden.py V --models`` in the venv ``DIR/torch-X`` writes
the golden programs of opset V exported with X (every core op's drawn call, plus
opspec's example models) into ``WORK/torch-X``. Then for each torch Y, one
``opspec golden --dir WORK/torch-* --format json`` in ``DIR/torch-Y`` says, for every
program, whether it loads, runs on its recorded inputs and matches its recorded
outputs. The venvs are the version matrix's (``benchmarks/version_matrix.py`` makes
them; here torch 2.13.0 may also be this interpreter's). Results go to
``benchmarks/results/golden_matrix.json`` (written after each step) and the table
between the markers in ``benchmarks/README.md``; the site's Compatibility page shows both.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
from opspec.spec import atomic, portable  # noqa: E402

VERSIONS = ("2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0")
RESULTS = REPO / "benchmarks" / "results" / "golden_matrix.json"
README = REPO / "benchmarks" / "README.md"
START, END = "<!-- golden-matrix:start -->", "<!-- golden-matrix:end -->"
TIMEOUT_S = 3600


def key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("+")[0].split("."))


def python_for(version: str, venvs: Path) -> Path:
    candidate = venvs / f"torch-{version}" / "bin" / "python"
    if candidate.is_file():
        return candidate
    here = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    if here.stdout.strip().split("+")[0] == version:
        return Path(sys.executable)
    raise SystemExit(f"no venv for torch {version}: {candidate} is missing (make it as benchmarks/version_matrix.py does)")


def run(python: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([str(python), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)


def export_with(version: str, python: Path, work: Path, opset: str) -> dict:
    out = work / f"torch-{version}"
    began = time.perf_counter()
    done = run(python, "tools/make_golden.py", opset, "--models", "--out", str(out))
    summary = (done.stdout.strip().splitlines() or [""])[-1]
    return {"ok": done.returncode == 0, "summary": summary if done.returncode == 0 else (done.stderr.strip().splitlines() or [""])[-1],
            "duration_s": round(time.perf_counter() - began, 1)}


def load_with(version: str, python: Path, folders: list[Path]) -> dict:
    began = time.perf_counter()
    done = run(python, "-m", "opspec", "golden", "--format", "json", "--dir", *map(str, folders))
    try:
        replayed = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1], "duration_s": round(time.perf_counter() - began, 1)}
    cells = {}
    for folder in replayed:
        programs = folder["programs"]
        cells[folder["exported_with"]] = {
            "programs": len(programs),
            "loads": sum(p["loads"] for p in programs), "runs": sum(p["runs"] for p in programs),
            "matches": sum(p["matches"] for p in programs),
            "failures": [{"file": p["file"], "detail": p["detail"], "failed_ops": p["failed_ops"]}
                         for p in programs if not p["matches"]],
        }
    return {"cells": cells, "duration_s": round(time.perf_counter() - began, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", nargs="+", default=list(VERSIONS), metavar="X")
    parser.add_argument("--venvs", type=Path, default=Path(os.environ.get("OPSPEC_VENVS", Path.home() / ".cache" / "opspec" / "venvs")))
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "opspec-golden-matrix",
                        help="where the programs go")
    parser.add_argument("--opset", default="2026.12")
    parser.add_argument("--skip-export", action="store_true", help="reuse the programs already in --work")
    parser.add_argument("--parallel", type=int, default=5, metavar="N", help="torch versions replaying at once")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--table-only", action="store_true")
    args = parser.parse_args(argv)
    results = json.loads(args.out.read_text()) if args.out.is_file() else {"exported": {}, "loaded": {}}
    if not args.table_only:
        results["opset"] = args.opset
        pythons = {v: python_for(v, args.venvs) for v in args.versions}
        for version in args.versions:
            if args.skip_export and (args.work / f"torch-{version}" / "index.yaml").is_file():
                results["exported"].setdefault(version, {"ok": True, "summary": f"programs reused from {args.work}"})
                continue
            print(f"export with torch {version} ...", flush=True)
            results["exported"][version] = export_with(version, pythons[version], args.work, args.opset)
            print(f"  {results['exported'][version]}", flush=True)
            atomic.write_text(args.out, portable.portable_json(results, REPO, indent=2, sort_keys=True))
        folders = [args.work / f"torch-{v}" for v in args.versions if (args.work / f"torch-{v}" / "index.yaml").is_file()]
        # one process per torch Y, run side by side: each mostly waits on loading programs
        with ThreadPoolExecutor(args.parallel) as pool:
            done = pool.map(lambda version: (version, load_with(version, pythons[version], folders)), args.versions)
            for version, loaded in done:
                print(f"loaded with torch {version}: {loaded.get('error') or 'ok'} ({loaded['duration_s']} s)", flush=True)
                results["loaded"][version] = loaded
                results["measured"] = time.strftime("%Y-%m-%d", time.gmtime())
                atomic.write_text(args.out, portable.portable_json(results, REPO, indent=2, sort_keys=True))
    write_table(results)
    return 0


def cell_text(cell: dict | None) -> str:
    if not cell:
        return "not run"
    n = cell["programs"]
    if cell["matches"] == n:
        return f"✅ {n}/{n}"
    return f"❌ loads {cell['loads']}/{n}, runs {cell['runs']}/{n}, matches {cell['matches']}/{n}"


def rows(results: dict) -> list[str]:
    exported = sorted(results.get("exported", {}), key=key)
    loaded = sorted(results.get("loaded", {}), key=key)
    lines = ["| exported with ↓ / loaded with → | " + " | ".join(loaded) + " |", "|---|" + "---|" * len(loaded)]
    for x in exported:
        cells = [cell_text(results["loaded"][y].get("cells", {}).get(x)) for y in loaded]
        lines.append(f"| {x} | " + " | ".join(cells) + " |")
    return lines


def write_table(results: dict) -> None:
    text = README.read_text(encoding="utf-8")
    if START not in text:
        return
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    atomic.write_text(README, head + START + "\n" + "\n".join(rows(results)) + "\n" + END + tail)


if __name__ == "__main__":
    sys.exit(main())

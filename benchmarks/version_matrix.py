"""The version matrix: opspec on every supported torch, one venv each, CPU.

    python benchmarks/version_matrix.py [--versions 2.11.0 2.15.0] [--venvs DIR] [--steps ...]
    python benchmarks/version_matrix.py --table-only     # rewrite the README table from the JSON
    python benchmarks/version_matrix.py --here --device cuda --steps special_cases decompositions inductor \
        --keep DIR                                        # this interpreter's torch, on a GPU machine

For each torch version: a venv ``DIR/torch-X`` (torch==X from the registry and
opspec's other dependencies at the versions in constraints.txt; made once, reused
after), then with the working tree on ``PYTHONPATH``:

- ``wheel``: would ``pip install opspec.whl`` keep this torch? (a dry run, torch must not be in the plan);
- ``validate``: ``opspec validate``, its findings and notes;
- ``special_cases``: ``python -m opspec.checks.special_cases --json``, every special-case row against this
  torch's eager kernel: each row's status (the op pages list the torch versions where a row held), false rows;
- ``drift``: ``opspec drift --format json``, drifted and absent entries, and whether anything besides its progress lines leaks to stderr;
- ``decompositions``: ``pytest conformance/test_decompositions.py`` (the ci profile), its counts and failures;
- ``inductor``: ``opspec conform --backend inductor --isolate --dtypes float32``, its summary and non-passing cases.

``--here`` runs the steps with this interpreter and its torch instead of a venv, and
``--device cuda`` runs the rows, the decomposition suite's CUDA cases and the
inductor run on the GPU: that leg is kept as the entry ``X cuda`` beside the CPU
entry ``X`` of the same torch. ``--keep DIR`` keeps the inductor report there.

Results are merged per version into ``benchmarks/results/version_matrix.json``
(written atomically after each step, so a long run keeps what it finished), and the
table between the markers in ``benchmarks/README.md`` is rewritten from it.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import tomllib
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
from opspec.spec import atomic, portable  # noqa: E402

VERSIONS = ("2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0")
STEPS = ("wheel", "validate", "special_cases", "drift", "decompositions", "inductor")
RESULTS = REPO / "benchmarks" / "results" / "version_matrix.json"
README = REPO / "benchmarks" / "README.md"
START, END = "<!-- version-matrix:start -->", "<!-- version-matrix:end -->"
TIMEOUT_S = 3 * 3600
CONFORM_STATUSES = ("pass", "fallback", "xfail", "xpass", "skip", "fail", "compile-error", "run-error", "crash", "timeout")
PROGRESS_LINE = re.compile(r"^drift: \w+ \d+/\d+$")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", nargs="+", default=list(VERSIONS), metavar="X")
    parser.add_argument("--venvs", type=Path, default=Path(os.environ.get("OPSPEC_VENVS", Path.home() / ".cache" / "opspec" / "venvs")))
    parser.add_argument("--steps", nargs="+", choices=STEPS, default=list(STEPS))
    parser.add_argument("--dtypes", nargs="+", default=["float32"], help="dtypes of the inductor run (default float32)")
    parser.add_argument("--inductor-sample", type=int, default=1, metavar="K",
                        help="run inductor on every K-th core op (sorted by name) to bound the time; 1: every op")
    parser.add_argument("--workers", default="2", help="pytest-xdist workers for the decomposition suite (default 2)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--here", action="store_true", help="use this interpreter and its torch (no venv)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--jobs", help="worker processes of the inductor run (default: conform's, the cores)")
    parser.add_argument("--step-timeout", type=float, default=TIMEOUT_S, metavar="S",
                        help="seconds a step may take before it is recorded as timed out")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the inductor report in DIR (its journal too, if it stops)")
    parser.add_argument("--table-only", action="store_true", help="only rewrite the README table from the JSON")
    args = parser.parse_args(argv)
    results = json.loads(args.out.read_text()) if args.out.is_file() else {"versions": {}}
    if args.here:
        run_here(args, results)
    elif not args.table_only:
        for version in args.versions:
            run_version(version, args, results)
    if args.out.resolve() == RESULTS:  # the README's table is the published results', not a scratch file's
        write_table(results)
    return 0


def run_version(version: str, args, results: dict) -> None:
    venv = args.venvs / f"torch-{version}"
    run_steps(ensure_venv(venv, version), version, args, results)


def run_here(args, results: dict) -> None:
    """The steps with this interpreter's torch, on ``args.device``; a GPU leg is its own entry."""
    import torch

    version = torch.__version__.split("+")[0]
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("version_matrix: --device cuda: CUDA is not available on this machine")
    run_steps(Path(sys.executable), version if args.device == "cpu" else f"{version} {args.device}", args, results)


def run_steps(python: Path, key: str, args, results: dict) -> None:
    version = key
    entry = results["versions"].setdefault(key, {})
    entry["torch"] = output(python, "-c", "import torch; print(torch.__version__)").strip()
    entry["python"] = output(python, "-c", "import platform; print(platform.python_version())").strip()
    entry["platform"] = platform.platform(terse=True)
    entry["device"] = args.device
    if args.device == "cuda":
        entry["device_name"] = output(python, "-c", "import torch; print(torch.cuda.get_device_name())").strip()
    for step in args.steps:
        print(f"torch {version}: {step} ...", flush=True)
        began = time.perf_counter()
        try:
            entry[step] = STEP_FUNCTIONS[step](python, args)
        except subprocess.TimeoutExpired:
            entry[step] = {"ok": False, "exit": None, "summary": f"timed out after {args.step_timeout:.0f} s"}
        entry[step]["duration_s"] = round(time.perf_counter() - began, 1)
        print(f"torch {version}: {step}: {entry[step]['summary']} ({entry[step]['duration_s']} s)", flush=True)
        entry["measured"] = time.strftime("%Y-%m-%d", time.gmtime())
        atomic.write_text(args.out, portable.portable_json(results, REPO, indent=2, sort_keys=True))
    # the steps' own times, so a run of some steps keeps the times the others were measured with
    entry["total_s"] = round(sum(data["duration_s"] for data in entry.values() if isinstance(data, dict)
                                 and "duration_s" in data), 1)
    atomic.write_text(args.out, portable.portable_json(results, REPO, indent=2, sort_keys=True))


# ---- venvs ----

def ensure_venv(venv: Path, version: str) -> Path:
    """``venv/bin/python`` with torch==version and opspec's other requirements (pinned as in constraints.txt); a
    venv made for other requirements (pyproject.toml changed since) gets what it lacks."""
    python = venv / "bin" / "python"
    stamp = venv / ".torch-installed"
    requirements = _requirements()
    if stamp.is_file() and stamp.read_text() == "\n".join(requirements):
        return python
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pins = [line for line in (REPO / "constraints.txt").read_text().splitlines()
            if line and not line.startswith(("#", "torch=="))]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
        handle.write("\n".join(pins) + "\n")
    # constraints.txt pins torch 2.13.0; here torch is the variable, so only the other pins apply
    env = {**os.environ, "PIP_CONSTRAINT": os.devnull}
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "-c", handle.name, f"torch=={version}", *requirements],
                   check=True, env=env)
    stamp.write_text("\n".join(requirements))
    return python


def _requirements() -> list[str]:
    """What opspec requires, its test extras included, but torch (the variable here): as pyproject.toml says."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    return sorted(r for r in wanted if re.match(r"[A-Za-z0-9._-]+", r).group(0).lower() != "torch")


# ---- steps ----

def run(python: Path, *args: str, timeout: float = TIMEOUT_S, env: dict | None = None) -> subprocess.CompletedProcess:
    # the tree's src first; a PYTHONPATH already set (packages unpacked beside a system torch) stays after it
    path = os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))
    environment = {**os.environ, "PYTHONPATH": path, "CI": "1", "OPSPEC_HYPOTHESIS_PROFILE": "ci"}
    environment.update(env or {})
    # a session of its own, so a step that runs out of time takes its worker processes with it
    with subprocess.Popen([str(python), *args], cwd=REPO, env=environment, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, start_new_session=True) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def output(python: Path, *args: str) -> str:
    return run(python, *args).stdout


def step_wheel(python: Path, args) -> dict:
    """Would installing opspec's wheel beside this torch keep it? A resolver dry run."""
    wheels = Path(tempfile.mkdtemp(prefix="opspec-wheel-"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(REPO)],
                           capture_output=True, text=True)
    if built.returncode:
        return {"ok": False, "summary": "the wheel did not build", "detail": built.stderr[-500:]}
    [wheel] = wheels.glob("opspec-*.whl")
    plan = run(python, "-m", "pip", "install", "--dry-run", "--quiet", "--report", "-", str(wheel), env={"PIP_CONSTRAINT": os.devnull})
    if plan.returncode:
        return {"ok": False, "summary": "pip cannot resolve the wheel", "detail": plan.stderr[-500:]}
    installs = {item["metadata"]["name"].lower(): item["metadata"]["version"] for item in json.loads(plan.stdout)["install"]}
    keeps = "torch" not in installs
    return {"ok": keeps, "would_install": installs,
            "summary": "keeps torch" if keeps else f"would replace torch with {installs['torch']}"}


FINDING = re.compile(r"^(?P<where>\S+:\d+:\d+): (?P<message>.+)$")


def step_validate(python: Path, args) -> dict:
    done = run(python, "-m", "opspec", "validate")
    lines = [m for m in map(FINDING.match, done.stdout.splitlines()) if m]
    notes = [m["message"].removeprefix("note: ") for m in lines if m["message"].startswith("note: ")]
    findings = [m["message"] for m in lines if not m["message"].startswith(("note: ", "missing: "))]
    summary = f"exit {done.returncode}, {len(findings)} finding(s), {len(notes)} note(s)"
    return {"exit": done.returncode, "ok": done.returncode == 0, "findings": findings, "notes": notes, "summary": summary}


def step_special_cases(python: Path, args) -> dict:
    return special_cases_result(run(python, "-m", "opspec.checks.special_cases", "--json", "--device", args.device,
                                    timeout=args.step_timeout))


def special_cases_result(done: subprocess.CompletedProcess) -> dict:
    """The check's JSON as the matrix keeps it: rows that held, rows torch contradicts, rows outside this torch."""
    try:
        report = json.loads(done.stdout)
        rows = report["rows"]
    except (json.JSONDecodeError, KeyError, TypeError):
        lines = [line for line in done.stdout.splitlines() if line.strip()]
        return {"exit": done.returncode, "ok": False, "summary": f"exit {done.returncode}, the data is unusable",
                "findings": lines[:50], "detail": done.stderr[-500:]}
    by_status: dict[str, list[str]] = {}
    for key, status in rows.items():
        by_status.setdefault(status, []).append(key)
    held, false = sorted(by_status.get("holds", [])), sorted(by_status.get("false", []))
    outside, unusable = sorted(by_status.get("outside", [])), sorted(by_status.get("unusable", []))
    parts = [f"{len(held)} of {len(rows)} rows hold"]
    parts += [f"{len(v)} {k}" for k, v in (("false", false), ("unusable", unusable), ("outside this torch", outside)) if v]
    return {"exit": done.returncode, "ok": done.returncode == 0 and not false and not unusable,
            "torch": report.get("torch"), "checked": report.get("checked"), "held": held, "false": false,
            "outside": outside, "unusable": unusable, "findings": report.get("findings", []),
            "summary": f"exit {done.returncode}, " + ", ".join(parts)}


def step_drift(python: Path, args) -> dict:
    done = run(python, "-m", "opspec", "drift", "--format", "json")
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"exit": done.returncode, "ok": False, "summary": "no report", "detail": done.stderr[-1000:]}
    drifted = [{"op": r["op"], "problem": r["problem"] or f"produces undeclared {', '.join(r['undeclared'])}"}
               for r in report["rules"] if r["undeclared"] or r["problem"]]
    # drift's own progress lines ("drift: rules 13/121") are expected off a terminal; anything else leaked
    stderr = [line for line in done.stderr.splitlines() if line.strip() and not PROGRESS_LINE.match(line)]
    result = {
        "exit": done.returncode, "ok": done.returncode == 0 and not stderr, "drifted_rules": drifted,
        "absent": report.get("absent", []), "core_added": sorted(report["core_added"]),
        "core_removed": report["core_removed"], "schema_changed": [c["op"] for c in report["schema_changed"]],
        "table_changes": report["table_changes"], "rules_traced": len(report["rules"]), "stderr_lines": len(stderr),
    }
    parts = [f"{len(drifted)} of {len(report['rules'])} traced rules drifted"]
    parts += [f"{len(result[key])} {key.replace('_', ' ')}" for key in ("absent", "core_added", "core_removed", "schema_changed") if result[key]]
    if stderr:
        parts.append(f"{len(stderr)} line(s) on stderr")
    result["summary"] = f"exit {done.returncode}, " + ", ".join(parts)
    return result


def step_decompositions(python: Path, args) -> dict:
    # On a GPU leg only the CUDA cases (ids end in -cuda; the CPU ones are that torch's CPU entry), in two
    # runs: a row that faults the device poisons its worker, so the rows' cases must not cost the drawn ones.
    selections = [["-k", "cuda and not test_special_cases"], ["-k", "cuda and test_special_cases"]] if args.device == "cuda" else [[]]
    counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0, "xfailed": 0}
    failures, skips, exits, detail = [], {}, [], ""
    for selection in selections:
        with tempfile.TemporaryDirectory() as folder:
            junit = Path(folder) / "junit.xml"
            done = run(python, "-m", "pytest", "conformance/test_decompositions.py", "-p", "no:cacheprovider", "-q",
                       "-n", args.workers, *selection, f"--junitxml={junit}", "-o", "junit_family=xunit2",
                       timeout=args.step_timeout / len(selections))
            exits.append(done.returncode)
            if not junit.is_file():
                detail += done.stdout[-1500:] + done.stderr[-500:]
                continue
            read_junit(junit, counts, failures, skips)
    if detail and not any(counts.values()):
        return {"exit": max(exits), "ok": False, "summary": "pytest wrote no results", "detail": detail}
    summary = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    return {"exit": max(exits), "ok": max(exits) == 0 and not counts["errors"] and not detail, "counts": counts,
            "failures": failures, "skips": skips, "summary": f"exit {max(exits)}, {summary}"}


def read_junit(junit: Path, counts: dict, failures: list, skips: dict) -> None:
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        name = case.get("name")
        problem = next(iter(case), None)
        if problem is None:
            counts["passed"] += 1
        elif problem.tag == "skipped":
            reason = (problem.get("message") or "").removeprefix("Skipped: ")
            if problem.get("type") == "pytest.xfail":
                counts["xfailed"] += 1
                reason = "xfail: " + reason
            else:
                counts["skipped"] += 1
            skips[reason] = skips.get(reason, 0) + 1
        elif problem.tag in ("failure", "error"):
            counts["failed" if problem.tag == "failure" else "errors"] += 1
            failures.append({"test": name, "message": (problem.get("message") or "").splitlines()[0][:300] if problem.get("message") else ""})


def step_inductor(python: Path, args) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        folder = args.keep or Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        report_path = folder / f"inductor-{args.device}.json"
        ops = sample_ops(args.inductor_sample)
        done = run(python, "-m", "opspec", "conform", "--backend", "inductor", "--isolate", "--dtypes", *args.dtypes,
                   "--device", args.device, *(["-j", args.jobs] if args.jobs else []),
                   "--report", str(report_path), *(["--ops", ",".join(ops)] if ops else []), timeout=args.step_timeout)
        if not report_path.is_file():
            return {"exit": done.returncode, "ok": False, "summary": "no report", "detail": done.stderr[-1500:]}
        report = json.loads(report_path.read_text())
    summary = report["summary"]
    off = [{"op": r["op"], "dtype": r["dtype"], "status": r["status"], "message": (r.get("message") or "").splitlines()[0][:300] if r.get("message") else ""}
           for r in report["results"] if r["status"] not in ("pass", "xfail")]
    counts = {k: summary[k] for k in CONFORM_STATUSES if summary.get(k)}
    return {"exit": done.returncode, "ok": done.returncode == 0, "device": args.device, "dtypes": args.dtypes, "ops": ops or "all", "cases": len(report["results"]),
            "counts": counts, "not_passing": off,
            "warnings": report.get("warnings", []), "summary": f"exit {done.returncode}, " + ", ".join(f"{v} {k}" for k, v in counts.items())}


def sample_ops(every: int) -> list[str]:
    """Every ``every``-th active core op of the newest opset, by name (exact names, not globs); [] for all."""
    if every <= 1:
        return []
    from opspec.spec import load

    names = sorted(op.name for op in load.load_opset().active_ops())
    return [name.removeprefix("aten::") for name in names[::every]]


STEP_FUNCTIONS = {"wheel": step_wheel, "validate": step_validate, "special_cases": step_special_cases, "drift": step_drift,
                  "decompositions": step_decompositions, "inductor": step_inductor}


# ---- the table ----

def entry_order(key: str) -> tuple:
    """'2.11.0' before '2.11.0 cuda' before '2.12.1'."""
    version, _, device = key.partition(" ")
    return (*(int(p) for p in version.split(".")), device)


def write_table(results: dict) -> None:
    rows = ["| torch | wheel keeps torch | `opspec validate` | special cases | `opspec drift` | decomposition suite (ci profile) | inductor (`--isolate`, float32) | time |",
            "|---|---|---|---|---|---|---|---|"]
    for version in sorted({*VERSIONS, *results["versions"]}, key=entry_order):
        entry = results["versions"].get(version, {})

        def cell(step: str, render) -> str:
            data = entry.get(step)
            if not data:
                return "not run"
            return ("✅ " if data.get("ok") else "❌ ") + render(data)

        validate = cell("validate", lambda d: f"{len(d['findings'])} findings" + (f", absent: {', '.join(n.split(': ')[0].removeprefix('aten::') for n in d['notes'])}" if d["notes"] else ""))
        special = cell("special_cases", lambda d: d["summary"].partition(", ")[2] or d["summary"])
        drift = cell("drift", lambda d: f"{len(d['drifted_rules'])} of {d['rules_traced']} rules drifted"
                     + (f", absent: {', '.join(a['op'].removeprefix('aten::') for a in d['absent'])}" if d["absent"] else "")
                     + (f", {d['stderr_lines']} stderr lines" if d["stderr_lines"] else ""))
        decomps = cell("decompositions", lambda d: ", ".join(f"{n} {k}" for k, n in d["counts"].items() if n))
        inductor = cell("inductor", lambda d: ", ".join(f"{d['counts'][k]} {k}" for k in CONFORM_STATUSES if k in d["counts"])
                        + ("" if d.get("ops", "all") == "all" else f" ({d['cases']} sampled ops)"))
        wheel = cell("wheel", lambda d: "yes" if d["ok"] else d["summary"])
        total = entry.get("total_s")
        torch = entry.get("torch", version) + (f" ({entry['device_name']})" if entry.get("device", "cpu") != "cpu" else "")
        rows.append(f"| {torch} | {wheel} | {validate} | {special} | {drift} | {decomps} | {inductor} | "
                    f"{f'{total / 60:.0f} min' if total else ''} |")
    text = README.read_text(encoding="utf-8")
    if START not in text:
        return
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    atomic.write_text(README, head + START + "\n" + "\n".join(rows) + "\n" + END + tail)


if __name__ == "__main__":
    sys.exit(main())

"""Run the conformance workflow (.github/workflows/conformance.yml) on this machine: its matrix, jobs and steps.

    python tools/conformance_matrix.py                          # every job, the workflow's whole matrix
    python tools/conformance_matrix.py --matrix backend=eager,inductor --matrix shard=1/2,2/2 --jobs shard merge
    python tools/conformance_matrix.py --env CONFORM_OPS='abs,relu' --env CONFORM_DTYPES=float32
    python tools/conformance_matrix.py --dry-run                # print each job's commands, run nothing

The matrix, the jobs, their order (``needs``) and every ``run:`` step come from the
workflow file itself, so a local run and the fleet cannot drift apart. Each job
instance gets a fresh copy of the working tree (as a runner gets a fresh checkout) in
the work folder; ``${{ ... }}`` expressions are evaluated as GitHub does (matrix,
inputs with their defaults, env, strategy.job-index; ``||``, ``&&``, ``==``,
``fromJSON``); ``run:`` steps run in bash with ``-eo pipefail``. What only a hosted
runner does has a local stand-in:

- ``actions/checkout``, ``actions/setup-python``: the fresh copy, and ``python`` on
  PATH is this interpreter (``--python``) with the copy's ``src`` on PYTHONPATH;
- steps with ``id: install``: not run; the interpreter must have the matrix's torch
  (``--venvs DIR`` finds ``DIR/torch-X/bin/python`` for another torch X; a
  combination with no such interpreter is skipped, and said so);
- ``actions/upload-artifact`` / ``actions/download-artifact``: a folder per artifact
  under ``WORK/artifacts``; ``actions/upload-pages-artifact`` too (the site ends in
  ``WORK/artifacts/github-pages``); ``configure-pages`` and ``deploy-pages`` do nothing.

Any other ``uses:`` is an error, so a step added to the workflow without a local
stand-in is noticed. Exit 0 when every job instance succeeded, 1 when one failed
(jobs that need it are not run), 2 for a workflow this script cannot run.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "conformance.yml"


class WorkflowError(Exception):
    """The workflow uses something this script cannot stand in for: one line."""


# ---- GitHub expressions: ${{ ... }} ----

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<op>\|\||&&|==|!=|[!()\[\],.])"
                    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))")
_FUNCTIONS = {
    "fromjson": lambda text: json.loads(text),
    "tojson": lambda value: json.dumps(value, indent=2),
    "format": lambda text, *args: re.sub(r"\{(\d+)\}", lambda m: as_text(args[int(m.group(1))]), text),
    "contains": lambda where, what: (what in where) if isinstance(where, list) else str(what).lower() in str(where).lower(),
    "always": lambda: True,
    "success": lambda: True,
    "failure": lambda: False,
    "cancelled": lambda: False,
}


def tokens(text: str) -> list[tuple[str, str]]:
    found, at = [], 0
    while at < len(text.rstrip()):
        match = _TOKEN.match(text, at)
        if not match:
            raise WorkflowError(f"cannot read the expression {text!r} at {text[at:]!r}")
        kind = match.lastgroup
        found.append((kind, match.group(kind)))
        at = match.end()
    return found


class Expression:
    """A recursive-descent reader of GitHub's expression syntax, evaluated against ``contexts``."""

    def __init__(self, text: str, contexts: dict[str, Any]):
        self.text, self.items, self.at, self.contexts = text, tokens(text), 0, contexts

    def value(self) -> Any:
        result = self._or()
        if self.at != len(self.items):
            raise WorkflowError(f"unexpected {self.items[self.at][1]!r} in {self.text!r}")
        return result

    def _peek(self) -> str | None:
        return self.items[self.at][1] if self.at < len(self.items) else None

    def _take(self, expected: str | None = None) -> tuple[str, str]:
        if self.at >= len(self.items) or (expected is not None and self.items[self.at][1] != expected):
            raise WorkflowError(f"expected {expected or 'more'} in {self.text!r}")
        self.at += 1
        return self.items[self.at - 1]

    def _or(self) -> Any:
        left = self._and()
        while self._peek() == "||":
            self._take()
            right = self._and()
            left = left if truthy(left) else right
        return left

    def _and(self) -> Any:
        left = self._compare()
        while self._peek() == "&&":
            self._take()
            right = self._compare()
            left = right if truthy(left) else left
        return left

    def _compare(self) -> Any:
        left = self._unary()
        if self._peek() in ("==", "!="):
            op = self._take()[1]
            right = self._unary()
            same = loose_equal(left, right)
            return same if op == "==" else not same
        return left

    def _unary(self) -> Any:
        if self._peek() == "!":
            self._take()
            return not truthy(self._unary())
        return self._primary()

    def _primary(self) -> Any:
        kind, text = self._take()
        if text == "(":
            inner = self._or()
            self._take(")")
            return inner
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return float(text) if "." in text else int(text)
        if kind != "name":
            raise WorkflowError(f"unexpected {text!r} in {self.text!r}")
        if text in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[text]
        if self._peek() == "(":
            function = _FUNCTIONS.get(text.lower())
            if function is None:
                raise WorkflowError(f"no local stand-in for the function {text}() in {self.text!r}")
            self._take("(")
            args = []
            while self._peek() != ")":
                args.append(self._or())
                if self._peek() == ",":
                    self._take(",")
            self._take(")")
            return function(*args)
        if text not in self.contexts:
            raise WorkflowError(f"no local stand-in for the context {text!r} in {self.text!r}")
        value = self.contexts[text]
        while self._peek() in (".", "["):
            if self._take()[1] == ".":
                key = self._take()[1]
            else:
                key = self._or()
                self._take("]")
            value = value.get(key) if isinstance(value, dict) else None
        return value


def truthy(value: Any) -> bool:
    return value not in (None, False, 0, "") and not (isinstance(value, float) and value != value)


def loose_equal(left: Any, right: Any) -> bool:
    if isinstance(left, str) and isinstance(right, str):
        return left.lower() == right.lower()  # GitHub compares strings ignoring case
    return left == right


def as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


_EMBEDDED = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def evaluate(value: Any, contexts: dict[str, Any]) -> Any:
    """A workflow value with its ``${{ }}`` parts evaluated: a whole-expression string gives the expression's
    value (a list, a bool), text around expressions gives text; lists and mappings are evaluated inside."""
    if isinstance(value, dict):
        return {key: evaluate(item, contexts) for key, item in value.items()}
    if isinstance(value, list):
        return [evaluate(item, contexts) for item in value]
    if not isinstance(value, str):
        return value
    whole = _whole(value)
    if whole is not None:
        return Expression(whole, contexts).value()
    return _EMBEDDED.sub(lambda m: as_text(Expression(m.group(1), contexts).value()), value)


def condition(text: Any, contexts: dict[str, Any]) -> bool:
    """An ``if:``, with or without ``${{ }}``."""
    if text is None:
        return True
    if isinstance(text, bool):
        return text
    inner = _whole(str(text))
    return truthy(Expression(inner if inner is not None else str(text), contexts).value())


def _whole(text: str) -> str | None:
    """The expression inside ``${{ }}`` when it is the whole of ``text``."""
    found = list(_EMBEDDED.finditer(text.strip()))
    return found[0].group(1) if len(found) == 1 and found[0].span() == (0, len(text.strip())) else None


# ---- the workflow ----

def load_workflow(path: Path) -> dict[str, Any]:
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if True in data:  # YAML 1.1 reads the key `on` as True
        data["on"] = data.pop(True)
    return data


def input_defaults(workflow: dict[str, Any], given: dict[str, str]) -> dict[str, Any]:
    declared = ((workflow.get("on") or {}).get("workflow_dispatch") or {}).get("inputs") or {}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise WorkflowError(f"--input {unknown[0]}: the workflow declares no such input (it has {', '.join(declared)})")
    return {name: given.get(name, spec.get("default", "")) for name, spec in declared.items()}


def expand_matrix(matrix: dict[str, Any] | None, contexts: dict[str, Any],
                  overrides: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The matrix's combinations as GitHub builds them: axes crossed, ``exclude`` removed, ``include`` merged into
    the combinations it matches (or added); ``overrides`` replace an axis' values first."""
    if not matrix:
        return [{}]
    matrix = evaluate(matrix, contexts)
    axes = {key: values for key, values in matrix.items() if key not in ("include", "exclude")}
    for key, values in overrides.items():
        if key not in axes:
            raise WorkflowError(f"--matrix {key}: the matrix has no such axis (it has {', '.join(axes)})")
        axes[key] = values
    for key, values in axes.items():
        if not isinstance(values, list):
            raise WorkflowError(f"matrix axis {key}: expected a list, got {values!r}")
    combos = [dict(zip(axes, values)) for values in itertools.product(*axes.values())]
    for rule in matrix.get("exclude") or []:
        combos = [c for c in combos if not all(loose_equal(as_text(c.get(k)), as_text(v)) for k, v in rule.items())]
    for extra in matrix.get("include") or []:
        matched = False
        for combo in combos:
            original = {k: v for k, v in extra.items() if k in axes}
            if all(loose_equal(as_text(combo.get(k)), as_text(v)) for k, v in original.items()):
                matched = True
                for key, value in extra.items():
                    combo.setdefault(key, value)
        if not matched and not any(k in overrides for k in extra):  # an axis narrowed here drops what it left out
            combos.append(dict(extra))
    return combos


def job_order(jobs: dict[str, Any]) -> list[str]:
    order: list[str] = []

    def visit(name: str, path: tuple[str, ...] = ()) -> None:
        if name in order:
            return
        if name in path:
            raise WorkflowError(f"jobs need each other in a cycle: {' -> '.join((*path, name))}")
        if name not in jobs:
            raise WorkflowError(f"job {path[-1]} needs {name}, which the workflow does not define")
        for need in needs_of(jobs[name]):
            visit(need, (*path, name))
        order.append(name)

    for name in jobs:
        visit(name)
    return order


def needs_of(job: dict[str, Any]) -> list[str]:
    needs = job.get("needs") or []
    return [needs] if isinstance(needs, str) else list(needs)


# ---- running ----

class Runner:
    def __init__(self, args, workflow: dict[str, Any]):
        self.args, self.workflow = args, workflow
        self.work = args.work
        self.artifacts = self.work / "artifacts"
        self.inputs = input_defaults(workflow, dict(args.input))
        self.env = {k: as_text(v) for k, v in (workflow.get("env") or {}).items()}
        declared = set(self.env)
        for key, value in args.env:
            if key not in declared:
                raise WorkflowError(f"--env {key}: the workflow sets no such variable (it has {', '.join(sorted(declared))})")
            self.env[key] = value
        self.failed: set[str] = set()

    def run(self) -> int:
        jobs = self.workflow.get("jobs") or {}
        wanted = self.args.jobs or list(jobs)
        for name in wanted:
            if name not in jobs:
                raise WorkflowError(f"--jobs {name}: the workflow has no such job (it has {', '.join(jobs)})")
        for name in job_order(jobs):
            if name not in wanted:
                continue
            blocked = [need for need in needs_of(jobs[name]) if need in self.failed]
            if blocked:
                print(f"== {name}: not run, it needs {', '.join(blocked)}, which failed", flush=True)
                self.failed.add(name)
                continue
            self.run_job(name, jobs[name])
        if not self.args.dry_run:
            print(f"artifacts: {self.artifacts}", flush=True)
        return 1 if self.failed else 0

    def contexts(self, matrix: dict[str, Any], index: int, env: dict[str, str]) -> dict[str, Any]:
        return {"matrix": matrix, "inputs": self.inputs, "env": env, "strategy": {"job-index": index},
                "runner": {"os": "Linux", "temp": str(self.work / "tmp")}, "github": {"workspace": "", "event_name": "workflow_dispatch"},
                "steps": {}, "needs": {}, "vars": {}, "secrets": {}}

    def run_job(self, name: str, job: dict[str, Any]) -> None:
        base = self.contexts({}, 0, self.env)
        combos = expand_matrix((job.get("strategy") or {}).get("matrix"), base, dict(self.args.matrix))
        for index, matrix in enumerate(combos):
            env = {**self.env, **{k: as_text(v) for k, v in evaluate(job.get("env") or {}, self.contexts(matrix, index, self.env)).items()}}
            contexts = self.contexts(matrix, index, env)
            title = as_text(evaluate(job.get("name", name), contexts)) or name
            runs_on = evaluate(job.get("runs-on", ""), contexts)
            print(f"== {name} [{index + 1}/{len(combos)}]: {title} (runs-on {json.dumps(runs_on)})", flush=True)
            python = self.python_for(matrix)
            if python is None:
                print(f"   skipped: no interpreter with torch {matrix.get('torch')} (see --venvs)", flush=True)
                continue
            if not self.run_steps(job, contexts, python, f"{name}-{index}"):
                self.failed.add(name)

    def python_for(self, matrix: dict[str, Any]) -> Path | None:
        wanted = matrix.get("torch")
        if wanted is None or self.args.dry_run or Version(str(wanted)).public == self.installed_torch(self.args.python):
            return self.args.python
        if self.args.venvs is not None:
            candidate = self.args.venvs / f"torch-{wanted}" / "bin" / "python"
            if candidate.is_file() and Version(str(wanted)).public == self.installed_torch(candidate):
                return candidate
        return None

    @staticmethod
    def installed_torch(python: Path) -> str | None:
        done = subprocess.run([str(python), "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
        return Version(done.stdout.strip()).public if done.returncode == 0 else None

    def run_steps(self, job: dict[str, Any], contexts: dict[str, Any], python: Path, instance: str) -> bool:
        folder = self.work / "jobs" / instance
        if not self.args.dry_run:
            fresh_copy(folder)
            (self.work / "tmp").mkdir(parents=True, exist_ok=True)
        contexts["github"]["workspace"] = str(folder)
        for number, step in enumerate(job.get("steps") or [], 1):
            env = {**contexts["env"], **{k: as_text(v) for k, v in evaluate(step.get("env") or {}, contexts).items()}}
            step_contexts = {**contexts, "env": env}
            if not condition(step.get("if"), step_contexts):
                continue
            label = as_text(evaluate(step.get("name") or step.get("uses") or step.get("id") or f"step {number}", step_contexts))
            if "uses" in step:
                problem = self.stand_in(step["uses"], evaluate(step.get("with") or {}, step_contexts), folder, label)
                if problem:
                    print(f"   failed: {problem}", flush=True)
                    return False
                continue
            script = as_text(evaluate(step.get("run", ""), step_contexts))
            if step.get("id") == "install":
                print(f"   - {label}: not run here; python is {python}", flush=True)
                continue
            print(f"   - {label}", flush=True)
            if self.args.dry_run:
                print("\n".join(f"       {line}" for line in script.rstrip().splitlines()), flush=True)
                continue
            cwd = folder / as_text(evaluate(step.get("working-directory", "."), step_contexts))
            if not self.shell(script, cwd, env, python, folder):
                print(f"   failed: {label}", flush=True)
                return False
        return True

    def shell(self, script: str, cwd: Path, env: dict[str, str], python: Path, folder: Path) -> bool:
        # `python` on PATH runs the interpreter by its own path (a venv knows itself by where it is called from)
        bin_dir = self.work / "bin" / str(python).strip("/").replace("/", "_")
        bin_dir.mkdir(parents=True, exist_ok=True)
        wrapper = bin_dir / "python"
        if not wrapper.exists():
            wrapper.write_text(f'#!/bin/sh\nexec "{python}" "$@"\n')
            wrapper.chmod(0o755)
        environment = {**os.environ, **env, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
                       "PYTHONPATH": str(folder / "src"), "GITHUB_WORKSPACE": str(folder),
                       "RUNNER_TEMP": str(self.work / "tmp"), "CI": "true"}
        return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=cwd,
                              env=environment).returncode == 0

    def stand_in(self, action: str, options: dict[str, Any], folder: Path, label: str) -> str | None:
        """Do locally what the action does on a runner; what went wrong (the job fails), or None."""
        name = action.split("@")[0]
        if name in ("actions/checkout", "actions/setup-python", "actions/configure-pages", "actions/deploy-pages"):
            return None
        if name not in ("actions/upload-artifact", "actions/download-artifact", "actions/upload-pages-artifact"):
            raise WorkflowError(f"{action}: no local stand-in for this action (tools/conformance_matrix.py)")
        print(f"   - {label}", flush=True)
        if self.args.dry_run:
            return None
        if name == "actions/download-artifact":
            return self.download(options, folder)
        artifact = "github-pages" if name == "actions/upload-pages-artifact" else options["name"]
        source = folder / options["path"]
        target = self.artifacts / artifact
        if target.exists():
            return f"artifact {artifact} uploaded twice (artifact names must be unique)"
        if not source.exists() or (source.is_dir() and not any(source.iterdir())):
            return f"nothing at {options['path']} to upload" if options.get("if-no-files-found") == "error" else None
        copy(source, target)
        return None

    def download(self, options: dict[str, Any], folder: Path) -> str | None:
        target = folder / options.get("path", ".")
        if "name" in options:
            found = [self.artifacts / options["name"]]
            if not found[0].is_dir():
                return f"artifact {options['name']} was not uploaded"
        else:
            pattern = re.compile(re.escape(options.get("pattern", "*")).replace(r"\*", ".*") + "$")
            found = sorted(p for p in self.artifacts.glob("*") if pattern.match(p.name))
        for artifact in found:
            merged = "name" in options or str(options.get("merge-multiple", False)).lower() == "true"
            copy(artifact, target if merged else target / artifact.name)
        return None


def copy(source: Path, target: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, target, dirs_exist_ok=True)
    else:
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target / source.name)


def fresh_copy(folder: Path) -> None:
    """The working tree as a runner's checkout sees it: tracked files and untracked ones git does not ignore."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    if folder.exists():
        shutil.rmtree(folder)
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / name)


def pairs(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=VALUE")
    return key, value


def axis(text: str) -> tuple[str, list[str]]:
    key, value = pairs(text)
    return key, [v.strip() for v in value.split(",") if v.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workflow", type=Path, default=WORKFLOW)
    parser.add_argument("--jobs", nargs="+", metavar="JOB", help="only these jobs (default: all, in `needs` order)")
    parser.add_argument("--matrix", type=axis, action="append", default=[], metavar="AXIS=V1,V2",
                        help="replace a matrix axis' values (repeatable), e.g. backend=eager shard=1/2,2/2")
    parser.add_argument("--input", type=pairs, action="append", default=[], metavar="NAME=VALUE",
                        help="a workflow_dispatch input (default: its declared default)")
    parser.add_argument("--env", type=pairs, action="append", default=[], metavar="NAME=VALUE",
                        help="override a variable of the workflow's env, e.g. CONFORM_OPS='abs,relu'")
    parser.add_argument("--python", type=Path, default=Path(sys.executable), help="the interpreter steps run (default: this one)")
    parser.add_argument("--venvs", type=Path, help="DIR/torch-X/bin/python for a matrix torch X other than --python's")
    parser.add_argument("--work", type=Path, help="where job copies and artifacts go (default: a new temporary folder)")
    parser.add_argument("--dry-run", action="store_true", help="print what each job instance would run")
    args = parser.parse_args(argv)
    made = args.work is None  # a folder of our own is kept only when a run leaves artifacts in it
    args.work = (args.work or Path(tempfile.mkdtemp(prefix="opspec-fleet-"))).resolve()
    code = 2
    try:
        code = Runner(args, load_workflow(args.workflow)).run()
    except (WorkflowError, OSError) as err:
        print(f"conformance_matrix: error: {err}", file=sys.stderr)
    finally:
        if made and (code == 2 or args.dry_run):
            shutil.rmtree(args.work, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())

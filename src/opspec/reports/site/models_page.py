"""The "Real models" page: the model-zoo benchmark (``benchmarks/model_zoo.json``) as a table.

The benchmark runs ``opspec coverage`` on real architectures and checks its answer
against an independent op-set computation and against what each backend does with
the model; this page shows its committed result (or says there is none yet).
"""
from __future__ import annotations

import json
from pathlib import Path

from opspec.reports.site import sanitize

PAGE = "models.md"


def pages(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {PAGE: "---\ntitle: Real models\n---\n\n# Real models\n\nNo model-zoo results in this checkout "
                      "(`benchmarks/model_zoo.json`; run `python benchmarks/model_zoo.py`).\n"}
    data = json.loads(path.read_text(encoding="utf-8"))
    summary, env = data["summary"], data["environment"]
    lines = [
        "---", "title: Real models", "hide:", "  - navigation", "  - toc", "---", "",
        "# Real models",
        "",
        "`opspec coverage` run on real architectures (built from torchvision and transformers with random weights), "
        "and its answer checked twice: the op set against `torch.export` -> `run_decompositions(core_aten_decompositions())` "
        "with `Tag.core`, and each backend's verdicts against what the backend does with the model on CPU "
        "(Inductor's generated code, the ONNX export run in ONNX Runtime, eager and aot_eager runs).",
        "",
        f"*{summary['models']} models, {summary['model_op_pairs']} model x op pairs; op sets agree on "
        f"{summary['op_set_agrees']} of {summary['models']}"
        + (f" ({summary['op_set_agrees_given_rules']} more where only the opset's own rules lower further)"
           if summary.get("op_set_agrees_given_rules") else "")
        + f", backend verdicts on {summary['backend_agrees']} of "
        f"{summary['models'] * next((len(m['backends']) for m in data['models'] if 'backends' in m), 0)} model x backend pairs. "
        f"Measured with {sanitize.inline(', '.join(f'{k} {v}' for k, v in env.items()))} "
        f"(`{sanitize.inline(data['command'])}`).*",
        "",
        "| model | ops (calls) | bookkeeping / outside the opset | flagged | op set agrees | backends agree | failures |",
        "|---|---|---|---|---|---|---|",
    ]
    # The table keeps to short cells so its seven columns fit the page; failure messages follow it in full.
    details = []
    for m in data["models"]:
        if "coverage_error" in m:  # coverage gave no report for this model
            details.append(f"- **{sanitize.inline(m['model'])}**: coverage failed: {sanitize.inline(m['coverage_error'][:300])}")
            lines.append(f"| {sanitize.inline(m['model'])} | coverage failed | | | | | [below](#failures) |")
            continue
        extra = ", ".join(sanitize.code(o) for o in m["bookkeeping"] + m["outside_opset"]) or "-"
        flagged = "; ".join(f"{b}: {', '.join(sanitize.code(o) for o in ops)}" for b, ops in m["flagged"].items() if ops) or "none"
        failed = {b: v for b, v in m["backends"].items() if not v["ran"]}
        details += [f"- **{sanitize.inline(m['model'])}** on {sanitize.inline(b)} ({sanitize.inline(v['failure_cause'])}): "
                    f"{sanitize.inline(v['failure'][:300])}" for b, v in failed.items()]
        failures = ", ".join(f"{sanitize.inline(b)} ({sanitize.inline(v['failure_cause'])})" for b, v in failed.items())
        lines.append(f"| {sanitize.inline(m['model'])} | {m['ops']} ({m['calls']}) | {extra} | {flagged} | "
                     f"{_op_set(m['op_set'])} | {_agree(m['backends'])} | "
                     f"{f'{failures}, [below](#failures)' if failures else '-'} |")
    if details:
        lines += ["", "## Failures", "", "What each backend said when it could not run the model:", "", *details]
    return {PAGE: "\n".join(lines) + "\n"}


def _agree(backends: dict) -> str:
    """Whether each backend's verdicts matched what it did: "all 4", or the ones that did not."""
    wrong = [b for b, v in backends.items() if not v["agrees"]]
    if not wrong:
        return f"all {len(backends)}"
    return f"**no**: {sanitize.inline(', '.join(wrong))}; yes: {sanitize.inline(', '.join(b for b in backends if b not in wrong)) or '-'}"


def _op_set(op_set: dict) -> str:
    if op_set["agrees"]:
        return "yes"
    if op_set.get("agrees_given_rules"):
        lowered = ", ".join(sanitize.code(o) for o in op_set["lowered_further"])
        return f"yes, but torch's core table keeps {lowered}, which an opset rule lowers"
    return "**no**"

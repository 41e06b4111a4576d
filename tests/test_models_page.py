"""The site's "Real models" page renders the committed model-zoo benchmark, and says so when there is none."""
from __future__ import annotations

import json

from opspec.reports.site import models_page


def test_page_from_results_and_without(tmp_path):
    assert "No model-zoo results" in models_page.pages(tmp_path / "missing.json")[models_page.PAGE]
    verdict = {"agrees": True, "disagreements": [], "ran": True, "failure": "", "failure_cause": ""}
    failing = {"agrees": True, "disagreements": [], "ran": False, "failure": "RuntimeError: Cannot view a tensor <x>",
               "failure_cause": "not an op"}
    data = {
        "command": "python benchmarks/model_zoo.py", "environment": {"torch": "2.13.0"},
        "summary": {"models": 1, "model_op_pairs": 2, "op_set_agrees": 1, "backend_agrees": 2},
        "models": [{"model": "transformers:t5_encoder", "ops": 2, "calls": 5, "bookkeeping": ["aten::_assert_tensor_metadata"],
                    "outside_opset": [], "flagged": {"eager": [], "onnxruntime": []}, "op_set": {"agrees": True},
                    "backends": {"eager": verdict, "onnxruntime": failing}}],
    }
    path = tmp_path / "model_zoo.json"
    path.write_text(json.dumps(data))
    page = models_page.pages(path)[models_page.PAGE]
    row = next(line for line in page.splitlines() if line.startswith("| transformers:t5\\_encoder"))
    assert "<code>aten::&#95;assert&#95;tensor&#95;metadata</code>" in row and "| all 2 |" in row
    assert "onnxruntime (not an op), [below](#failures)" in row  # the message itself follows the table, in full
    failure = next(line for line in page.splitlines() if line.startswith("- **transformers:t5\\_encoder**"))
    assert "on onnxruntime (not an op): RuntimeError: Cannot view a tensor &lt;x\\>" in failure  # escaped: text from errors
    assert page.index("## Failures") > page.index(row)
    assert "hide:\n  - navigation\n  - toc" in page  # the whole width for seven columns


def test_backends_that_disagree_are_named(tmp_path):
    agrees = {"agrees": True, "disagreements": [], "ran": True, "failure": "", "failure_cause": ""}
    data = {
        "command": "python benchmarks/model_zoo.py", "environment": {"torch": "2.13.0"},
        "summary": {"models": 1, "model_op_pairs": 1, "op_set_agrees": 1, "backend_agrees": 1},
        "models": [{"model": "torchvision:resnet18", "ops": 1, "calls": 1, "bookkeeping": [], "outside_opset": [],
                    "flagged": {}, "op_set": {"agrees": True},
                    "backends": {"eager": agrees, "inductor": {**agrees, "agrees": False}}}],
    }
    path = tmp_path / "model_zoo.json"
    path.write_text(json.dumps(data))
    page = models_page.pages(path)[models_page.PAGE]
    assert "| **no**: inductor; yes: eager |" in page and "## Failures" not in page


def test_a_model_coverage_could_not_answer_for_and_a_difference_the_rules_explain_are_said_so(tmp_path):
    verdict = {"agrees": True, "disagreements": [], "ran": True, "failure": "", "failure_cause": ""}
    data = {
        "command": "python benchmarks/model_zoo.py", "environment": {"torch": "2.13.0"},
        "summary": {"models": 1, "model_op_pairs": 3, "op_set_agrees": 0, "op_set_agrees_given_rules": 1,
                    "backend_agrees": 1, "coverage_failed": 1},
        "models": [
            {"model": "torchvision:raft_small", "coverage_error": "opspec coverage exited 2: torch.export failed"},
            {"model": "transformers:wav2vec2", "ops": 3, "calls": 9, "bookkeeping": [], "outside_opset": [],
             "flagged": {"eager": []}, "backends": {"eager": verdict},
             "op_set": {"agrees": False, "agrees_given_rules": True, "lowered_further": ["aten::linalg_vector_norm"]}},
        ],
    }
    path = tmp_path / "model_zoo.json"
    path.write_text(json.dumps(data))
    page = models_page.pages(path)[models_page.PAGE]
    failed = next(line for line in page.splitlines() if line.startswith("| torchvision:raft"))
    assert "coverage failed" in failed and "[below](#failures)" in failed
    assert "- **torchvision:raft\\_small**: coverage failed: opspec coverage exited 2: torch.export failed" in page
    explained = next(line for line in page.splitlines() if line.startswith("| transformers:wav2vec2"))
    assert "an opset rule lowers" in explained and "linalg" in explained
    assert "1 more where only the opset's own rules lower further" in page

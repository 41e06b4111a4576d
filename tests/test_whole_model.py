"""`opspec conform --model`: a whole model against a backend, and the op that diverges, as a repro that replays."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from opspec.cli import main

MODEL = "opspec.examples.models:transformer_block"
WRONG = "opspec.examples.wrong_backend:wrong_gelu"


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def wrong_run(tmp_path_factory):
    """The model on the backend that is wrong on gelu alone; run once for the tests below."""
    folder = tmp_path_factory.mktemp("model")
    code = main(["conform", "--model", MODEL, "--backend", WRONG, "--report", str(folder / "report.json")])
    return code, json.loads((folder / "report.json").read_text()), folder


def test_a_backend_wrong_on_one_op_is_named(wrong_run):
    code, report, folder = wrong_run
    assert code == 1
    assert report["status"] == "fail" and report["comparison"]["ok"] is False
    assert report["first_divergence"] == "gelu"
    culprit = report["culprit"]
    assert culprit["op"] == "aten::gelu" and culprit["node"] == "gelu"
    assert Path(culprit["repro"]).parent == folder / "report.repros"  # beside the report, as op runs keep theirs


def test_the_repro_replays_at_op_level(wrong_run, capsys, tmp_path):
    repro = wrong_run[1]["culprit"]["repro"]
    recorded = json.loads(Path(repro).read_text())
    assert recorded["op"] == "aten::gelu" and recorded["format"] == "opspec-ir/1"
    code, out, _ = run_cli(capsys, "conform", "--backend", WRONG, "--ops", "gelu", "--inputs", repro,
                           "--report", str(tmp_path / "wrong.json"))
    [record] = json.loads((tmp_path / "wrong.json").read_text())["results"]
    assert code == 1 and record["op"] == "aten::gelu" and record["status"] == "fail"
    # the same recorded inputs pass on a correct backend: the repro is about the backend, not the inputs
    code, out, _ = run_cli(capsys, "conform", "--backend", "eager", "--ops", "gelu", "--inputs", repro,
                           "--report", str(tmp_path / "eager.json"))
    [record] = json.loads((tmp_path / "eager.json").read_text())["results"]
    assert code == 0 and record["status"] == "pass" and record["examples"] == 1


def test_a_correct_backend_passes_a_model_with_keyword_inputs(capsys, tmp_path):
    code, out, _ = run_cli(capsys, "conform", "--model", "opspec.examples.models:masked_pooling", "--backend",
                           "aot_eager", "--report", str(tmp_path / "m.json"))
    assert code == 0, out
    report = json.loads((tmp_path / "m.json").read_text())
    assert report["status"] == "pass" and report["culprit"] is None and report["nodes"] > 5


@pytest.mark.parametrize("argv, expected", [
    (["--model", MODEL, "--backend", "eager", "--ops", "gelu"], "--model runs a whole model; it takes no --ops"),
    (["--model", "no_such_pkg.mod:build", "--backend", "eager"], "cannot import no_such_pkg.mod"),
    (["--model", MODEL, "--backend", "no_such_backend"], "unknown backend 'no_such_backend'"),
])
def test_model_usage_errors_are_one_line(capsys, argv, expected):
    code, out, err = run_cli(capsys, "conform", *argv)
    assert code == 2 and len(err.strip().splitlines()) == 1 and expected in err, err


def test_inputs_must_match_the_selected_ops(wrong_run, capsys, tmp_path):
    repro = wrong_run[1]["culprit"]["repro"]
    code, _, err = run_cli(capsys, "conform", "--backend", "eager", "--ops", "relu", "--inputs", repro)
    assert code == 2 and "records aten::gelu, which --ops does not select" in err
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    code, _, err = run_cli(capsys, "conform", "--backend", "eager", "--inputs", str(bad))
    assert code == 2 and f"{bad}: entry 0 is not an opspec-ir/1 recorded call" in err


def test_a_model_the_backend_hands_back_to_pytorch_is_a_fallback_not_a_pass(capsys, tmp_path, monkeypatch):
    (tmp_path / "handback.py").write_text("def compile_fn(gm, example_inputs):\n    return gm  # runs nothing itself\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, _ = run_cli(capsys, "conform", "--model", "opspec.examples.models:masked_pooling", "--backend",
                           "handback:compile_fn", "--report", str(tmp_path / "m.json"))
    report = json.loads((tmp_path / "m.json").read_text())
    assert report["comparison"]["ok"] is True  # the right answer, computed by PyTorch
    assert report["status"] == "fallback" and report["executed"] == "pytorch", report
    assert code == 0 and "ran in PyTorch, not in the backend" in out
    assert report["evidence"]["source"] == "partition" and report["evidence"]["pytorch_ops"]


def test_a_model_run_keeps_warnings_and_torch_logs_in_its_log_file(capsys, tmp_path, monkeypatch):
    import logging
    import warnings

    (tmp_path / "noisy.py").write_text(
        "import warnings\n\ndef compile_fn(gm, example_inputs):\n"
        "    warnings.warn('the backend package speaks')\n    return gm\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    torch_handlers = list(logging.getLogger("torch").handlers)
    code, out, err = run_cli(capsys, "conform", "--model", "opspec.examples.models:masked_pooling", "--backend",
                             "noisy:compile_fn", "--report", str(tmp_path / "m.json"))
    assert code == 0 and "the backend package speaks" not in out + err
    assert "the backend package speaks" in (tmp_path / "m.log").read_text()
    assert f"torch's log: {tmp_path / 'm.log'}" in out
    assert list(logging.getLogger("torch").handlers) == torch_handlers  # put back after the run
    with pytest.warns(UserWarning, match="after the run"):
        warnings.warn("after the run")

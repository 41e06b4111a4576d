"""`opspec coverage` on the example models, its usage errors, and backend manifests."""
from __future__ import annotations

import importlib.metadata
import re
import shutil
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from opspec.bridge import decomp_table
from opspec.checks import coverage
from opspec.cli import main
from opspec.spec import load, manifests, resources
from opspec.spec.model import CoreOp, Opset

pytestmark = pytest.mark.usefixtures("warm_validate_parts")  # validate reuses the bundled opset's parts

VERSION = "2026.12"
MODELS = "opspec.examples.models"
REAL_LOAD_OPSET = load.load_opset  # before the fixture below swaps it for the CLI
FINDING = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<message>.+)$")

# Worked out by hand from MLP((16, 32, 32, 10)) on a [4, 16] input: each of the three
# nn.Linear calls is aten::linear, which decomposes to t (-> permute) and addmm on a 2-D
# input; two relu; log_softmax is the core _log_softmax.
MLP_OPS = {"aten::addmm": 3, "aten::permute": 3, "aten::relu": 2, "aten::_log_softmax": 1}


def _opset_or_core_only() -> Opset:
    """The real opset; while a version's rules file is absent, its core ops with no rules of its own."""
    try:
        return REAL_LOAD_OPSET(VERSION)
    except load.OpsetError:
        loaded = load.read(resources.opset_root() / VERSION / "core_ops.yaml", "core_ops.schema.json")
        assert not loaded.findings, loaded.findings
        info = next(v for v in load.load_versions() if v.version == VERSION)
        return Opset(VERSION, info, tuple(CoreOp.from_dict(e) for e in loaded.data["ops"]), ())


@pytest.fixture(scope="module")
def opset() -> Opset:
    return _opset_or_core_only()


@pytest.fixture(scope="module")
def table(opset):
    return decomp_table.decomposition_table(opset)


@pytest.fixture(autouse=True)
def _cli_opset(monkeypatch, opset):
    """The CLI loads the same opset the fixtures use."""
    monkeypatch.setattr(load, "load_opset", lambda version=None, root=None: opset)


@pytest.fixture(scope="module")
def reports(opset, table) -> dict[str, coverage.Report]:
    inductor = manifests.load_manifest(manifests.manifest_path("inductor"))
    built = {}
    for name in ("mlp", "small_cnn", "transformer_block", "uses_outside_op", "binned"):
        built[name] = coverage.coverage(coverage.load_model(f"{MODELS}:{name}"), opset, table, inductor, name)
    return built


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- reports ---------------------------------------------------------------------------


def test_mlp_report_matches_the_hand_checked_ops(reports):
    report = reports["mlp"]
    assert {use.op: use.count for use in report.ops} == MLP_OPS
    assert all(use.opset == "core" for use in report.ops)
    # on CPU Inductor's addmm lowering calls ATen's GEMM (extern_kernels.addmm): its own choice, a library call
    assert {use.op: use.backends["inductor"][0] for use in report.ops} == {
        **{op: "lowered" for op in MLP_OPS}, "aten::addmm": "library"}
    assert report.exit_code == 0 and report.library_calls("inductor") == ["aten::addmm"]
    # the notes speak of the model's float32 only: addmm falls back in complex on CPU, which this model never runs
    notes = " ".join(note for use in report.ops for _, note in use.backends.values())
    assert "complex" not in notes and "extern_kernels.addmm (aten::addmm) in float32" in notes


@pytest.mark.parametrize("name", ["mlp", "small_cnn", "transformer_block"])
def test_example_models_stay_inside_the_opset(reports, name):
    report = reports[name]
    assert [use.op for use in report.ops if use.opset == "outside"] == []
    # on CPU Inductor's lowerings of convolution, bmm and addmm call library kernels (ATen's), as the conformance
    # report's evidence shows: lowered, shown as library calls, not flagged
    library = {"mlp": ["aten::addmm"], "small_cnn": ["aten::convolution", "aten::addmm"],
               "transformer_block": ["aten::addmm", "aten::bmm"]}
    assert report.flagged == () and report.library_calls("inductor") == library[name]
    for use in report.ops:
        if use.op in library[name]:
            assert use.backends["inductor"][1].startswith(f"on cpu: library call: extern_kernels.{use.op[6:]}")


def test_small_cnn_ops(reports):
    # conv/bn/relu/maxpool twice; global average pool is mean.dim; flatten is view; linear is permute+addmm.
    assert {use.op: use.count for use in reports["small_cnn"].ops} == {
        "aten::convolution": 2,
        "aten::_native_batch_norm_legit_no_training": 2,
        "aten::relu": 2,
        "aten::max_pool2d_with_indices": 2,
        "aten::mean.dim": 1,
        "aten::view": 1,
        "aten::permute": 1,
        "aten::addmm": 1,
    }


def test_transformer_block_core_pieces(reports):
    counts = {use.op: use.count for use in reports["transformer_block"].ops}
    # two layer norms, four linears on 3-D inputs (addmm on a flattened view; the
    # qkv one included), attention as two batched matmuls plus the output projection.
    assert counts["aten::native_layer_norm"] == 2
    assert counts["aten::addmm"] == 3
    assert counts["aten::bmm"] == 3
    assert counts["aten::_softmax"] == 1
    assert counts["aten::gelu"] == 1


def test_outside_op_model_is_flagged(reports):
    report = reports["uses_outside_op"]
    flagged = {use.op: use for use in report.flagged}
    assert set(flagged) == {"aten::searchsorted.Tensor"}  # addmm: a library call on CPU, not flagged
    assert flagged["aten::searchsorted.Tensor"].opset == "outside"
    assert flagged["aten::searchsorted.Tensor"].backends["inductor"][0] == "undeclared"
    assert report.exit_code == 1


def test_ops_inductor_hands_back_are_still_flagged(reports):
    """cumsum and bucketize run their ATen kernels inside Inductor's program on CPU (make_fallback): fallbacks."""
    report = reports["binned"]
    assert report.not_lowered("inductor") == ["aten::bucketize.Tensor", "aten::cumsum"] and report.exit_code == 1
    assert report.library_calls("inductor") == ["aten::addmm"]
    cumsum = next(use for use in report.ops if use.op == "aten::cumsum")
    assert cumsum.backends["inductor"] == ("fallback", "on cpu: ATen kernel: aten::cumsum ran instead in float32")


def test_fallback_in_manifest_is_flagged(opset):
    manifest = manifests.BackendManifest("toy", VERSION, "by hand, for a test", {"aten::addmm": ""}, {"aten::permute": "no transpose unit"})
    report = coverage.classify(Counter({"aten::addmm": 2, "aten::permute": 1, "aten::relu": 1}), opset, manifest)
    assert {use.op: use.backends["toy"][0] for use in report.flagged} == {"aten::permute": "fallback", "aten::relu": "undeclared"}
    assert "no transpose unit" in next(u.backends["toy"][1] for u in report.ops if u.op == "aten::permute")


# -- CLI -------------------------------------------------------------------------------


def test_cli_table_and_exit_codes(capsys):
    code, out, _ = run_cli(capsys, "coverage", f"{MODELS}:mlp", "--backend", "none")
    assert code == 0
    assert "aten::addmm" in out and "0 outside the opset" in out
    code, out, _ = run_cli(capsys, "coverage", f"{MODELS}:uses_outside_op", "--backend", "eager")
    assert code == 1
    assert re.search(r"^! aten::searchsorted\.Tensor\s+1\s+outside\s+undeclared", out, re.M)
    assert "1 not lowered by eager" in out
    # named as PyTorch/XLA's debugging tool names them, so its lowering guide starts from this line
    assert "eager: Op(s) not lowered: aten::searchsorted.Tensor" in out.splitlines()


def test_cli_json(capsys):
    import json

    code, out, _ = run_cli(capsys, "coverage", f"{MODELS}:uses_outside_op", "--backend", "none", "--format", "json")
    data = json.loads(out)
    assert code == 1
    assert data["outside_opset"] == ["aten::searchsorted.Tensor"]
    assert data["backends"] == [] and data["exit_code"] == 1


@pytest.mark.parametrize(
    "model, backend, expected",
    [
        ("no_colon_here", "none", "must be pkg.module:factory, path/to/file.py:factory"),
        ("opspec_no_such_module:build", "none", "cannot import opspec_no_such_module: no module named "
         "'opspec_no_such_module'; run from the folder that holds opspec_no_such_module, add it to PYTHONPATH, "
         "or give the file: path/to/opspec_no_such_module.py:build"),
        ("missing/model.py:build", "none", "no model file missing/model.py"),
        ("torchvision:no_such_net", "none", "no zoo model torchvision:no_such_net (known: torchvision:resnet18, "),
        (f"{MODELS}:no_such_factory", "none", "has no factory no_such_factory"),
        ("opspec_test_models:raising", "none", "factory opspec_test_models:raising raised ValueError: bad config"),
        ("opspec_test_models:not_a_pair", "none", "must return (nn.Module, example_inputs)"),
        ("opspec_test_models:bad_mapping", "none", "returned a mapping; it takes model, args, kwargs, dynamic_shapes (got inputs, model)"),
        ("opspec_test_models:unexportable", "none", "torch.export failed"),
        (f"{MODELS}:mlp", "tpu9000", "no manifest for backend 'tpu9000' (known: aot_eager, eager, inductor, onnxruntime, xla, none"),
        (f"{MODELS}:mlp", "missing/dir/x.yaml", "no backend manifest at missing/dir/x.yaml"),
    ],
)
def test_usage_errors_are_one_line(capsys, tmp_path, monkeypatch, model, backend, expected):
    (tmp_path / "opspec_test_models.py").write_text(
        textwrap.dedent(
            """
            import torch

            def raising():
                raise ValueError("bad config\\nsecond line")

            def not_a_pair():
                return torch.nn.Linear(2, 2)

            def bad_mapping():
                return {"model": torch.nn.Linear(2, 2), "inputs": ()}

            class Branchy(torch.nn.Module):
                def forward(self, x):
                    return x * 2 if x.sum().item() > 0 else x  # data-dependent: export refuses

            def unexportable():
                return Branchy(), (torch.ones(3),)
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = run_cli(capsys, "coverage", model, "--backend", backend)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert expected in err
    assert err.startswith("opspec coverage: error: ")


# -- manifests -------------------------------------------------------------------------


def test_bundled_manifests_are_clean(opset):
    findings = manifests.manifest_findings(manifests.backends_dir(), lambda version: opset)
    assert [str(f) for f in findings] == []
    assert manifests.known_backends() == ["aot_eager", "eager", "inductor", "onnxruntime", "xla"]


def test_bundled_manifests_are_measured(opset):
    for name in manifests.known_backends():
        manifest = manifests.load_manifest(manifests.manifest_path(name))
        assert manifest.measured_with.startswith("torch 2.") and "tools/measure_lowering.py" in manifest.measured_with
        listed = set(manifest.lowered) | set(manifest.fallback) | set(manifest.unsupported)
        assert listed >= opset.core_names()
        # beyond the core set: the bookkeeping ops, and the ops real models carry (benchmarks/model_zoo.json)
        assert set(opset.bookkeeping_by_name) <= listed
    eager = manifests.load_manifest(manifests.manifest_path("eager"))
    assert set(eager.lowered) >= opset.core_names() and not eager.fallback
    inductor = manifests.load_manifest(manifests.manifest_path("inductor"))
    assert "aten::nonzero" in inductor.fallback and "aten::addmm" in inductor.lowered


def _write(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return path


def _toy_manifest(folder: Path, body: str) -> Path:
    """toy.yaml: a manifest of the backend ``toy`` for opset 2026.12 (3 header lines), then ``body``."""
    header = "opset: '2026.12'\nbackend: toy\nmeasured_with: by hand, for a test\n"
    return _write(folder, "toy.yaml", header + textwrap.dedent(body).lstrip())


def test_manifest_schema_error_has_file_line(tmp_path, opset):
    path = _toy_manifest(
        tmp_path,
        """
        lowered:
          - aten::addmm
        fallback:
          - op: aten::permute
            because: no transpose unit
        """,
    )
    findings = manifests.manifest_findings(tmp_path, lambda version: opset)
    assert len(findings) == 1
    assert findings[0].mark.path == str(path) and findings[0].mark.line == 7
    assert FINDING.match(str(findings[0]))


def test_manifest_unknown_ops_and_duplicates(tmp_path, opset):
    path = _toy_manifest(
        tmp_path,
        """
        lowered:
          - aten::addmm
          - aten::add.Tensr
        fallback:
          - aten::addmm
          - op: aten::searchsorted.Tensor
            reason: not in any opset
        """,
    )
    from opspec.bridge import torch_ops

    known = torch_ops.all_aten_schemas()
    messages = {f.mark.line: f.message for f in manifests.manifest_findings(tmp_path, lambda version: opset, known)}
    # bucketize.Tensor is beyond the opset but a real aten op: a manifest may say what a backend does with it
    assert messages == {
        6: "aten::add.Tensr is neither an op of opset 2026.12 nor of the installed torch (did you mean aten::add.Tensor?)",
        8: "aten::addmm is listed twice (first at line 5)",
    }
    assert all(f.mark.path == str(path) for f in manifests.manifest_findings(tmp_path, lambda version: opset, known))
    # without torch, names beyond the opset are taken as written; duplicates are still found
    assert {f.mark.line for f in manifests.manifest_findings(tmp_path, lambda version: opset)} == {8}


def test_manifest_fallback_args_must_be_arguments_with_defaults(tmp_path, opset):
    _toy_manifest(
        tmp_path,
        """
        lowered:
          - op: aten::addmm
            fallback_args: [beta, gamma]
          - op: aten::convolution
            fallback_args: [groups]
          - op: aten::sub.Tensor
            fallback_args: [alpha, other:bool]
          - op: aten::index.Tensor
            fallback_args: [indices:bool, mask:bool]
        fallback: []
        """,
    )
    messages = {f.mark.line: f.message for f in manifests.manifest_findings(tmp_path, lambda version: opset)}
    tail = "not an argument with a default (NAME) or an argument (NAME:DTYPE) of"
    assert messages == {
        5: f"aten::addmm: fallback_args names gamma, {tail} aten::addmm(Tensor self, "
           "Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
        # groups has no default: a model always sets it
        7: f"aten::convolution: fallback_args names groups, {tail} {opset.ops_by_name['aten::convolution'].schema}",
        11: f"aten::index.Tensor: fallback_args names mask:bool, {tail} {opset.ops_by_name['aten::index.Tensor'].schema}",
    }


def test_manifest_unknown_version_and_name_mismatch(tmp_path):
    _write(
        tmp_path,
        "toy.yaml",
        """
        opset: '2031.01'
        backend: other
        measured_with: by hand, for a test
        lowered: []
        fallback: []
        """,
    )

    def loader(version):
        return REAL_LOAD_OPSET(version, resources.opset_root())

    messages = {f.mark.line: f.message for f in manifests.manifest_findings(tmp_path, loader)}
    assert "does not match the file name toy.yaml" in messages[2]
    assert "unknown opset version '2031.01'" in messages[1]


def test_backend_path_and_version_mismatch(tmp_path, capsys):
    source = manifests.manifest_path("eager")
    copy = tmp_path / "eager.yaml"
    shutil.copy(source, copy)
    code, _, _ = run_cli(capsys, "coverage", f"{MODELS}:mlp", "--backend", str(copy))
    assert code == 0
    copy.write_text(copy.read_text(encoding="utf-8").replace("opset: '2026.12'", "opset: '2026.05'"), encoding="utf-8")
    code, out, err = run_cli(capsys, "coverage", f"{MODELS}:mlp", "--backend", str(copy))
    # a manifest of another version still answers, saying so and how to make the figures exact
    assert code == 0 and "describes opset 2026.05, not 2026.12" in err and "--opset 2026.12" in err
    assert "aten::addmm" in out


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "onnxruntime"])
def test_manifests_match_a_fresh_measurement(backend):
    """Manifests are measured, never hand-edited (inductor is checked by `measure_lowering.py --check`)."""
    import runpy

    tool = runpy.run_path(str(Path(__file__).resolve().parents[1] / "tools" / "measure_lowering.py"))
    path = manifests.manifest_path(backend)
    packages = tool["BACKENDS"][backend].packages
    try:
        installed = tool["measured_with"](packages)
    except importlib.metadata.PackageNotFoundError as missing:
        pytest.skip(f"{missing}: the onnx extra is not installed")
    if manifests.load_manifest(path).measured_with != installed:
        pytest.skip(f"manifest measured with other versions than the installed {installed}")
    measured = tool["yamlio"].dump(tool["measure"](backend, VERSION), tool["HEADER"])
    assert measured == path.read_text(encoding="utf-8")


# -- models people point at, the bookkeeping class -----------------------------------


def test_keyword_and_non_tensor_inputs_and_the_bookkeeping_class(opset, table):
    inductor = manifests.load_manifest(manifests.manifest_path("inductor"))
    example = coverage.load_model(f"{MODELS}:masked_pooling")
    assert set(example.kwargs) == {"mask", "scale"} and example.kwargs["scale"] == 0.5
    report = coverage.coverage(example, opset, table, [inductor], "masked_pooling")
    uses = {use.op: use for use in report.ops}
    # mask.to(float32) on a float32 mask: export keeps only the metadata assertion
    assert uses["aten::_assert_tensor_metadata"].opset == "bookkeeping"
    assert "may-skip" in uses["aten::_assert_tensor_metadata"].note
    assert not uses["aten::_assert_tensor_metadata"].flagged
    assert report.to_dict()["bookkeeping"] == ["aten::_assert_tensor_metadata"]
    # the non-tensor scale is baked into the graph as a constant: one mul by 0.5 besides the masking
    assert uses["aten::mul.Tensor"].count == 2


def test_bookkeeping_policy_is_data(opset):
    policy = opset.bookkeeping_by_name
    assert policy["aten::_assert_tensor_metadata"].backend == "may-skip"
    assert policy["aten::_assert_scalar"].backend == "must-honour"
    assert policy["aten::sym_constrain_range_for_size"].kind == "constraint"
    assert not set(policy) & opset.core_names()


def test_bookkeeping_file_is_validated(tmp_path):
    from opspec.checks.validate import validate

    root = tmp_path / "opset"
    shutil.copytree(resources.opset_root(), root)
    newest = load.load_versions()[-1].version  # validate checks the newest version's schemas against torch
    path = root / newest / "bookkeeping_ops.yaml"
    text = path.read_text(encoding="utf-8")
    text = text.replace("backend: may-skip\n    description: Checks a tensor's", "backend: maybe\n    description: Checks a tensor's")
    text = text.replace("aten::sym_constrain_range(Scalar size, *,", "aten::sym_constrain_range(Scalar size,")
    path.write_text(text, encoding="utf-8")
    report = validate(root)
    sealed = "has changed since its release"  # the version is released: editing its file also breaks its seal
    assert any(sealed in f.message for f in report.findings)
    messages = [f"{f.mark.line}: {f.message}" for f in report.findings if sealed not in f.message]
    assert len(messages) == 1 and "'maybe' is not one of 'may-skip', 'must-honour'" in messages[0], messages
    path.write_text(text.replace("backend: maybe", "backend: may-skip"), encoding="utf-8")
    messages = [f.message for f in validate(root).findings if sealed not in f.message]
    assert messages == ["aten::sym_constrain_range: schema differs from torch, which prints: "
                        "aten::sym_constrain_range(Scalar size, *, int? min=None, int? max=None) -> ()"]


def test_file_path_models_several_backends_and_dynamic_shapes(capsys, tmp_path):
    import json

    model_file = tmp_path / "my_model.py"
    model_file.write_text(textwrap.dedent(
        """
        import torch

        class Net(torch.nn.Module):
            def forward(self, x, *, bias):
                return torch.cumsum(x, 1) + bias

        def build():
            return {"model": Net(), "args": (torch.randn(2, 3),), "kwargs": {"bias": torch.randn(3)}}
        """))
    code, out, _ = run_cli(capsys, "coverage", f"{model_file}:build", "--backend", "inductor,eager", "--format", "json")
    data = json.loads(out)
    assert data["backends"] == ["inductor", "eager"]
    ops = {entry["op"]: entry for entry in data["ops"]}
    assert set(ops["aten::cumsum"]["backends"]) == {"inductor", "eager"}
    code, out, _ = run_cli(capsys, "coverage", f"{model_file}:build", "--backend", "none", "--dynamic", "--format", "json")
    assert code == 0 and {e["op"] for e in json.loads(out)["ops"]} == {"aten::cumsum", "aten::add.Tensor"}


def test_none_cannot_be_combined(capsys):
    code, out, err = run_cli(capsys, "coverage", f"{MODELS}:mlp", "--backend", "none", "--backend", "eager")
    assert code == 2 and "cannot be combined" in err


def test_zoo_shortcut_without_its_library(capsys):
    import importlib.util

    if importlib.util.find_spec("transformers") is not None:
        pytest.skip("transformers is installed here")
    code, out, err = run_cli(capsys, "coverage", "transformers:bert", "--backend", "none")
    assert code == 2 and out == ""
    assert err.strip() == ("opspec coverage: error: transformers:bert needs transformers, which is not installed "
                           "(see benchmarks/README.md for the zoo's venv)")


def test_per_device_facts_decide_lowered(opset):
    """cumsum: Inductor lowers it to a scan on CUDA (all but complex), but its CPU code calls the ATen kernel."""
    inductor = manifests.load_manifest(manifests.manifest_path("inductor"))
    assert "cpu" in inductor.devices
    assert inductor.status("aten::cumsum", "cpu", dtype="float32")[0] == "fallback"
    assert "aten::cumsum ran instead" in inductor.status("aten::cumsum", "cpu")[1]
    assert "complex" not in inductor.status("aten::cumsum", "cpu", dtype="float32")[1]
    assert inductor.status("aten::cumsum", "cuda", dtype="float32")[0] == "lowered"
    assert inductor.status("aten::cumsum", "cuda", dtype="complex64")[0] == "fallback"
    float32 = {"aten::cumsum": frozenset({"float32"}), "aten::add.Tensor": frozenset({"float32"})}
    report = coverage.classify(Counter({"aten::cumsum": 1, "aten::add.Tensor": 1}), opset, [inductor], device="cpu",
                               dtypes=float32)
    assert report.not_lowered("inductor") == ["aten::cumsum"]
    # add.Tensor runs in PyTorch for complex64 only: calls of unknown dtype may be those
    assert coverage.classify(Counter({"aten::add.Tensor": 1}), opset, [inductor], device="cpu").not_lowered("inductor") \
        == ["aten::add.Tensor"]
    assert coverage.classify(Counter({"aten::cumsum": 1}), opset, [inductor], device="cuda", dtypes=float32).exit_code == 0
    # of unknown dtype, a cumsum call on CUDA may be a complex one, which falls back
    assert coverage.classify(Counter({"aten::cumsum": 1}), opset, [inductor], device="cuda").exit_code == 1


def test_assertions_have_measured_verdicts(opset):
    """Bookkeeping ops are listed in every manifest with what the backend does with them."""
    onnx = manifests.load_manifest(manifests.manifest_path("onnxruntime"))
    status, note = onnx.status("aten::_assert_scalar")
    assert status == "lowered" and "removes it before translating" in note  # must-honour, yet not checked: said
    inductor = manifests.load_manifest(manifests.manifest_path("inductor"))
    assert inductor.status("aten::_assert_tensor_metadata", "cpu")[0] == "lowered"


def test_fallback_on_names_a_measured_device(tmp_path, opset):
    _write(tmp_path, "toy.yaml", """
        opset: '2026.11'
        backend: toy
        measured_with: by hand, for a test
        devices: [cpu]
        lowered:
          - op: aten::cumsum
            fallback_on: {cuda: no scan unit on this device}
        fallback: []
        """)
    [finding] = manifests.manifest_findings(tmp_path, lambda version: opset)
    assert "fallback_on names device 'cuda', which the manifest's devices do not list" in finding.message

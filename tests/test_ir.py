"""The IR round trip: FX nodes as flat JSON records, rebuilt from each op's schema alone."""
from __future__ import annotations

import json

import pytest
import torch

from opspec.cli import main
from opspec.conform import backends, ir
from opspec.spec import load

aten = torch.ops.aten


def _roundtrip(module: torch.nn.Module, *inputs, dynamic_shapes=None):
    exported = torch.export.export(module, inputs, dynamic_shapes=dynamic_shapes, strict=False)
    extracted = ir.program_of(exported)
    text = extracted.to_json()
    return json.loads(text), ir.Program.from_json(text, extracted.constants)


class Indexing(torch.nn.Module):
    def forward(self, x, rows, cols):
        picked = aten.index.Tensor(x, [None, cols])  # Tensor?[] with a None in front
        joined = aten.cat.default([picked, picked * 0.5], 1)  # Tensor[]; a scalar standing in for a Tensor
        return joined, aten.index.Tensor(x, [rows, None])


def test_tensor_lists_none_positions_and_scalar_stand_ins():
    x, rows, cols = torch.randn(4, 5), torch.tensor([3, 0]), torch.tensor([1, 1, 4])
    data, program = _roundtrip(Indexing(), x, rows, cols)
    records = {r["op"]: r for r in data["records"]}  # the last of each op
    masks = [r["attrs"][ir.MASKS] for r in data["records"] if r["op"] == "aten.index.Tensor"]
    assert masks == [{"indices": [True, False]}, {"indices": [False, True]}]
    assert records["aten.cat.default"]["attrs"][ir.SIZES] == {"tensors": 2}
    assert records["aten.mul.Tensor"]["attrs"] == {"other": 0.5} and len(records["aten.mul.Tensor"]["inputs"]) == 1
    expected = Indexing()(x, rows, cols)
    for got, want in zip(program.run(x, rows, cols), expected):
        torch.testing.assert_close(got, want, rtol=0, atol=0)


class Creation(torch.nn.Module):
    def forward(self, x):
        ones = torch.ones(x.shape[1], 3, dtype=torch.float64, device=x.device)  # keyword-only dtype, device
        return aten._to_copy.default(x, dtype=torch.float64) @ ones


def test_keyword_only_arguments_and_meta_device_creation_run_where_the_records_run():
    data, program = _roundtrip(Creation(), torch.empty(2, 4, device="meta"))  # extracted without any data
    full = next(r for r in data["records"] if r["op"] == "aten.ones.default")
    assert full["attrs"]["device"] == {"device": "meta"} and full["attrs"]["dtype"] == {"dtype": "float64"}
    x = torch.randn(2, 4)
    [got] = program.run(x)
    assert got.device.type == "cpu"
    torch.testing.assert_close(got, x.double() @ torch.ones(4, 3, dtype=torch.float64))


class Reshape(torch.nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0] * x.shape[1], -1).sum(0)


def test_symbolic_sizes_are_references_to_the_nodes_that_compute_them():
    from torch.export import Dim

    data, program = _roundtrip(Reshape(), torch.randn(3, 4, 5), dynamic_shapes=({0: Dim.AUTO, 1: Dim.AUTO},))
    ops = [r["op"] for r in data["records"]]
    assert ops[:3] == ["aten.sym_size.int", "aten.sym_size.int", "operator.mul"]  # sizes computed on the host
    reshape = next(r for r in data["records"] if r["op"] == "aten.reshape.default")
    assert reshape["attrs"]["shape"] == [{"ref": "mul"}, -1]
    x = torch.randn(6, 2, 5)  # other sizes than the export's: the references carry them
    torch.testing.assert_close(program.run(x)[0], Reshape()(x))


def test_recorded_calls_keep_values_strides_and_dtypes_exactly():
    base = torch.tensor([[1.5, float("nan")], [float("-inf"), 1e-30]], dtype=torch.bfloat16)
    view = base.t()[1:]  # a strided view with a storage offset
    data = ir.call_to_json("aten::where.self", (view > 0, view, torch.tensor(0.1, dtype=torch.bfloat16)), {})
    text = json.dumps(data)
    op, args, kwargs = ir.call_from_json(json.loads(text))
    assert op == "aten::where.self" and kwargs == {}
    for got, want in zip(args, (view > 0, view)):
        assert (got.stride(), got.storage_offset(), got.dtype) == (want.stride(), want.storage_offset(), want.dtype)
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)


def test_unknown_files_are_refused_in_one_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"format": "something-else"}')
    with pytest.raises(ir.IRError, match="entry 0 is not an opspec-ir/1 recorded call"):
        ir.read_calls(str(path))


def test_ir_roundtrip_backend_runs_ops_through_json(tmp_path, capsys):
    backend = backends.resolve("ir-roundtrip", load.load_opset())
    x = torch.randn(3, 4)
    run = backend.compile(lambda t: (aten.topk.default(t, 2, 1), aten.amax.default(t, [0])), [x])
    (values, indices), maxima = run(x)
    torch.testing.assert_close(values, x.topk(2, 1).values)
    assert "aten::topk" in backend.handed
    code = main(["conform", "--backend", "ir-roundtrip", "--ops", "index.Tensor,cat,full,_to_copy",
                 "--report", str(tmp_path / "r.json"), "--max-examples", "2"])
    assert code == 0, capsys.readouterr().out
    statuses = {r["op"]: r["status"] for r in json.loads((tmp_path / "r.json").read_text())["results"]}
    assert statuses == dict.fromkeys(["aten::_to_copy", "aten::cat", "aten::full", "aten::index.Tensor"], "pass")

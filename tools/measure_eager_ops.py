"""Where PyTorch/XLA runs the non-core ops that real models call eagerly: the xla manifest's ``eager_ops``.

Export decomposes a model's graph into core ops, but PyTorch/XLA runs the model's own
Python code, so it sees the ops the eager dispatcher calls, and some are not core:
``torch._weight_norm`` calls ``aten::_weight_norm_interface``, which the graph shows
as ``norm``, ``div`` and ``mul``. For every model of the zoo, one eager run
records, on the XLA device (composite ops choose by device what they call), the first
call of each op that is neither a core op of the opset nor listed in the manifest
already; each recorded call then runs alone on the device with the counters cleared,
and ``executed_fallback_ops()`` says whether XLA lowered it. The
models only choose which ops and which inputs: each verdict is the op's own run.
``opspec coverage --backend xla`` counts a model's eager calls against this section.

    PJRT_DEVICE=CPU python tools/measure_eager_ops.py [--models KEY ...] [--check]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from opspec.bridge import torch_ops  # noqa: E402
from opspec.spec import atomic, load, manifests, yamlio  # noqa: E402

MANIFEST = ROOT / "conformance" / "backends" / "xla.yaml"
HEADER = "# yaml-language-server: $schema=../../opset/schema/backend_manifest.schema.json\n"


def recorded_calls(example, skip: set[str]) -> dict[str, tuple]:
    """op -> (overload, args, kwargs) of its first call in one run of the model on the XLA device, for ops not in
    ``skip``, its tensors copied to the CPU. On the device, because composite ops choose by device what they call
    (scaled_dot_product_attention calls a CPU flash kernel on CPU, not on XLA)."""
    import torch
    from torch.utils import _pytree
    from torch.utils._python_dispatch import TorchDispatchMode

    from opspec.conform.backends import xla

    calls: dict[str, tuple] = {}

    class Recording(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = torch_ops.op_name(func)
            # PyTorch/XLA's own ops (xla::max_pool2d_forward, aten::_propagate_xla_data) are not the model's calls
            if name.startswith("aten::") and "xla" not in name and name not in skip and name not in calls:
                copy = _pytree.tree_map(lambda t: t.detach().cpu().clone() if isinstance(t, torch.Tensor) else t,
                                        (args, kwargs or {}))
                calls[name] = (func, *copy)
            return func(*args, **(kwargs or {}))

    device = xla.device()
    model = example.model.to(device)
    with torch.no_grad(), Recording():
        model(*xla._moved(list(example.args), device), **xla._moved(dict(example.kwargs), device))
    return calls


def on_xla(func, args, kwargs) -> tuple[str, str]:
    """("lowered" | "fallback" | "refused", what the counters or the error said) for one call run alone on XLA."""
    from opspec.conform.backends import xla

    metrics = xla._metrics()
    metrics.clear_all()
    try:
        xla.on_device(lambda *inputs: func(*inputs[0], **inputs[1]), creating=True)(list(args), dict(kwargs))
    except Exception as err:  # noqa: BLE001 - a call XLA refuses says nothing of where it runs
        return "refused", f"{type(err).__name__}: {str(err).strip().splitlines()[0][:200] if str(err).strip() else ''}"
    _, fell_back = xla.executed(metrics.counter_names(), metrics.executed_fallback_ops())
    packet = torch_ops.op_name(func).split(".")[0]
    own = sorted(f for f in fell_back if f.split(".")[0] == packet)
    return ("fallback", f"executed_fallback_ops: {', '.join(own)}") if own else ("lowered", "")


def measure(keys: list[str], manifest: manifests.BackendManifest, version: str) -> list[dict]:
    from opspec.checks import models
    from opspec.examples import zoo

    core = {op.name for op in load.load_opset(version).ops}
    known = core | set(manifest.lowered) | set(manifest.fallback) | set(manifest.unsupported)
    found: dict[str, dict] = {}
    for key in keys:
        example = models.load_model(key, zoo.ZOO)
        for name, (func, args, kwargs) in sorted(recorded_calls(example, known | set(found)).items()):
            verdict, said = on_xla(func, args, kwargs)
            if verdict == "refused":
                print(f"{name}: XLA refused the call recorded from {key}: {said}", file=sys.stderr)
                continue
            note = f"a call recorded from {key}'s eager run, run alone" + (f" ({said})" if said else "")
            found[name] = {"op": name, "status": verdict, "note": note}
    return [found[name] for name in sorted(found)]


def main() -> int:
    from opspec.examples import zoo

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", metavar="KEY", help="zoo models (default: every one)")
    parser.add_argument("--check", action="store_true", help="compare with the manifest instead of writing it")
    args = parser.parse_args()
    version = load.latest_version()
    manifest = manifests.load_manifest(MANIFEST)
    measured = measure(args.models or list(zoo.ZOO), manifest, version)
    data = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    data["eager_ops"] = measured
    new = yamlio.dump(data, HEADER)
    fallbacks = [e["op"] for e in measured if e["status"] == "fallback"]
    print(f"{len(measured)} non-core eager ops measured, {len(fallbacks)} fall back: {', '.join(fallbacks) or 'none'}")
    if args.check:
        return 0 if new == MANIFEST.read_text(encoding="utf-8") else 1
    atomic.write_text(MANIFEST, new)
    return 0


if __name__ == "__main__":
    sys.exit(main())

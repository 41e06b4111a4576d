"""Loading a user's model for ``opspec coverage`` and ``opspec conform --model``.

A model is named three ways:

- ``pkg.module:factory``: imported like ``python -m`` does (the current folder first);
- ``path/to/file.py:factory``: the file is loaded by path, no package needed;
- ``torchvision:NAME`` or ``transformers:NAME``: a model of a zoo the caller
  passes (the CLI passes ``opspec.examples.zoo.ZOO``), built from its library's
  own definition with random weights (nothing is downloaded); refused with a
  clear message when the library is not installed.

The factory returns ``(module, args)``, ``(module, args, kwargs)`` or a mapping
with keys ``model``, ``args`` and optionally ``kwargs`` and ``dynamic_shapes``
(as ``torch.export.export`` takes them). ``args`` and ``kwargs`` may hold
non-tensor values (flags, sizes, None) as well as tensors.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from opspec.bridge import torch_ops
from opspec.spec.errors import one_line

ZOO_LIBRARIES = ("torchvision", "transformers")


class ModelError(Exception):
    """The model cannot be built or exported; the message is one line naming the case."""


@dataclass(frozen=True)
class ExampleModel:
    model: Any  # torch.nn.Module
    args: tuple = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    dynamic_shapes: Any = None

    def with_all_dims_dynamic(self) -> "ExampleModel":
        """Every dimension of every tensor input symbolic (``Dim.AUTO``: export keeps what the model allows)."""
        from torch.export import Dim

        torch = torch_ops.torch_module()

        def spec(value):
            return {i: Dim.AUTO for i in range(value.dim())} if isinstance(value, torch.Tensor) else None

        shapes = _by_name(self.model, tuple(spec(a) for a in self.args), {k: spec(v) for k, v in self.kwargs.items()})
        return replace(self, dynamic_shapes=shapes)

    def run(self):
        """The model in eager mode on its example inputs."""
        return self.model(*self.args, **dict(self.kwargs))


def _by_name(model, args: tuple, kwargs: dict) -> dict[str, Any]:
    """dynamic_shapes keyed by the forward's parameter names, as torch.export accepts for args and kwargs together."""
    import inspect

    names = [p.name for p in inspect.signature(model.forward).parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(names) < len(args):
        raise ModelError("--dynamic: the forward takes *args; give dynamic_shapes from the factory instead")
    return {**dict(zip(names, args)), **kwargs}


FORMS = "pkg.module:factory, path/to/file.py:factory, torchvision:NAME or transformers:NAME"


def load_model(spec: str, zoo: Mapping[str, Any] | None = None) -> ExampleModel:
    """Build the model ``spec`` names and check what its factory returned; ``zoo`` maps ``library:NAME`` to factories."""
    target, sep, attribute = spec.rpartition(":")
    if not sep or not target or not attribute:
        raise ModelError(f"MODEL must be {FORMS}, got {spec!r}")
    if target in ZOO_LIBRARIES and zoo is not None:
        factory = _zoo_factory(zoo, target, attribute)
    elif target.endswith(".py") or os.sep in target or "/" in target:
        factory = _file_factory(Path(target), attribute)
    else:
        factory = _module_factory(target, attribute)
    try:
        result = factory()
    except ModelError:
        raise
    except Exception as err:
        raise ModelError(f"factory {spec} raised {one_line(err)}") from None
    return _checked(result, spec)


def _module_factory(module_name: str, attribute: str):
    # Like ``python -m``: a model module next to the user resolves without installing it.
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        hint = (f"; run from the folder that holds {module_name.split('.')[0]}, add it to PYTHONPATH, "
                f"or give the file: path/to/{module_name.split('.')[-1]}.py:{attribute}")
        raise ModelError(f"cannot import {module_name}: no module named {err.name!r}{hint}") from None
    except Exception as err:  # the user's module may fail in any way
        raise ModelError(f"cannot import {module_name}: {one_line(err)}") from None
    return _factory_of(module, module_name, attribute)


def _file_factory(path: Path, attribute: str):
    if not path.is_file():
        raise ModelError(f"no model file {path}")
    name = f"_opspec_model_{path.stem}"
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses and pickling look the module up by name
        sys.path.insert(0, str(path.resolve().parent))  # its own sibling imports
        spec.loader.exec_module(module)
    except Exception as err:
        sys.modules.pop(name, None)
        raise ModelError(f"cannot load {path}: {one_line(err)}") from None
    return _factory_of(module, str(path), attribute)


def _factory_of(module, where: str, attribute: str):
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise ModelError(f"{where} has no factory {attribute}")
    return factory


def _zoo_factory(zoo: Mapping[str, Any], library: str, name: str):
    key = f"{library}:{name}"
    if key not in zoo:
        known = ", ".join(k for k in zoo if k.startswith(library + ":"))
        raise ModelError(f"no zoo model {key} (known: {known})")
    if importlib.util.find_spec(library) is None:
        raise ModelError(f"{key} needs {library}, which is not installed (see benchmarks/README.md for the zoo's venv)")
    return zoo[key]


def _checked(result: Any, spec: str) -> ExampleModel:
    torch = torch_ops.torch_module()
    if isinstance(result, Mapping):
        unknown = set(result) - {"model", "args", "kwargs", "dynamic_shapes"}
        if unknown or "model" not in result:
            raise ModelError(f"factory {spec} returned a mapping; it takes model, args, kwargs, dynamic_shapes "
                             f"(got {', '.join(sorted(map(str, result)))})")
        example = ExampleModel(result["model"], result.get("args", ()), result.get("kwargs") or {},
                               result.get("dynamic_shapes"))
    elif isinstance(result, tuple) and len(result) in (2, 3):
        example = ExampleModel(*result)
    else:
        raise ModelError(f"factory {spec} must return (nn.Module, example_inputs) or (nn.Module, args, kwargs), "
                         f"got {type(result).__name__}")
    if not isinstance(example.model, torch.nn.Module):
        raise ModelError(f"factory {spec} must return an nn.Module first, got {type(example.model).__name__}")
    if not isinstance(example.args, tuple):
        raise ModelError(f"factory {spec}: example inputs must be a tuple (of tensors or other values)")
    if not isinstance(example.kwargs, Mapping):
        raise ModelError(f"factory {spec}: keyword inputs must be a dict")
    return replace(example, kwargs=dict(example.kwargs))

"""Running special-case rows: their inputs as torch values, and the exact judgement of a result.

A row (:class:`opspec.spec.special_cases.SpecialCase`) states inputs and the exact
result. ``materialize`` turns its inputs into a call of the op, reading the op's
FunctionSchema so every argument name is checked and omitted ones take their
defaults; ``judge`` decides whether an output (or the exception raised) is what
the row says. Judging is exact (NaN matches NaN, a zero written ``'-0.0'`` must
be negative) unless the row gives ``rtol``; it is not :mod:`opspec.testing.compare`,
which compares two runs within tolerances.
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import torch

from opspec.bridge import torch_ops
from opspec.spec.errors import one_line
from opspec.spec.model import public_version, torch_specifier
from opspec.spec.special_cases import SpecialCase
from opspec.testing import subnormal_latitude
from opspec.testing.strategies.schema_args import arguments_of

FLOATING = ("float64", "float32", "float16", "bfloat16")
STRICT_ZEROS = {"-0.0": True, "+0.0": False}  # name -> sign bit


class CaseError(ValueError):
    """A row that cannot be run as written (unknown argument, a value its type cannot hold)."""


@dataclass(frozen=True)
class Judgement:
    ok: bool
    detail: str = ""  # one line: what was expected, what came
    latitude: str | None = None  # the allowed result used, and why it is allowed
    expected: str = ""
    got: str = ""  # what came, as text; left empty where the row holds exactly (the text is the costly part)
    reason: str = ""  # what differs beyond the values (dtype, shape, which output), when something does


def dtype_of(name: "str | torch.dtype") -> torch.dtype:
    if isinstance(name, torch.dtype):
        return name
    value = getattr(torch, str(name), None)
    if not isinstance(value, torch.dtype):
        raise CaseError(f"unknown dtype {name!r}")
    return value


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def case_dtypes(case: SpecialCase, hint_dtypes: Iterable["str | torch.dtype"]) -> list[str]:
    """The dtypes a row is checked in: its own, else the floating ones among the op's testing dtypes.

    An op tested in no floating dtype (bitwise ops) checks its rows in each of its dtypes.
    """
    if case.dtypes:
        return list(case.dtypes)
    names = [dtype_name(dtype_of(d)) for d in hint_dtypes] or ["float32"]
    return [n for n in names if n in FLOATING] or names


def applies(case: SpecialCase, torch_version: str, device: str = "cpu") -> bool:
    """Whether the row holds on this torch and device (its ``torch:`` specifier and ``devices``)."""
    if case.torch and not torch_specifier(case.torch).contains(public_version(torch_version), prereleases=True):
        return False
    return not case.devices or torch.device(device).type in case.devices


# --- values ---------------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)  # a row's literal names these thousands of times; finfo is not free
def special_value(name: str, dtype: torch.dtype) -> Any:
    """A special name's value in ``dtype`` (README: nan, inf, max, tiny, subnormal, ...)."""
    if name in STRICT_ZEROS:
        return -0.0 if STRICT_ZEROS[name] else 0.0
    negative, base = (True, name[1:]) if name.startswith("-") else (False, name)
    if dtype.is_floating_point or dtype.is_complex:
        info = torch.finfo(dtype)
        value = {"nan": math.nan, "inf": math.inf, "max": info.max, "min": -info.max, "tiny": info.smallest_normal,
                 "subnormal": info.smallest_normal * info.eps, "eps": info.eps}.get(base)
    elif dtype == torch.bool:
        value = None if negative else {"max": True, "min": False}.get(base)
    else:
        info = torch.iinfo(dtype)
        value = {"max": info.max, "min": info.min}.get(base)
    if value is None:
        raise CaseError(f"{name!r} has no {dtype_name(dtype)} value")
    return -value if negative else value


def _resolve(value: Any, dtype: torch.dtype) -> tuple[Any, Any]:
    """(nested Python values, nested sign-strictness flags) of a literal's ``values``."""
    if isinstance(value, list):
        pairs = [_resolve(item, dtype) for item in value]
        return [p[0] for p in pairs], [p[1] for p in pairs]
    if isinstance(value, str):
        return special_value(value, dtype), value in STRICT_ZEROS
    return value, False


def tensor_literal(literal: Any, dtype: "str | torch.dtype", device: str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """(tensor, mask of the zeros whose sign the literal states) for a tensor literal in the row's ``dtype``.

    A mapping's own ``dtype`` wins over the row's; ``shape`` alone is a zero-filled tensor, with ``fill`` filled with
    that value (a dim longer than a vector or a block, written in a line), with ``values`` a reshape.
    """
    spec = literal if isinstance(literal, dict) else {"values": literal}
    if "fill" in spec and ("values" in spec or "shape" not in spec):
        raise CaseError(f"{_show_literal(literal)}: fill needs a shape and no values")
    target = dtype_of(spec.get("dtype", dtype))
    if "values" not in spec:
        shape = tuple(spec["shape"])
        value, strict = _resolve(spec.get("fill", 0), target)
        try:
            return (torch.full(shape, value, dtype=target, device=device),
                    torch.full(shape, bool(strict), dtype=torch.bool))
        except (RuntimeError, TypeError, ValueError, OverflowError) as err:
            raise CaseError(f"{_show_literal(literal)} is no {dtype_name(target)} tensor: {one_line(err, 200)}") from None
    values, strict = _resolve(spec["values"], target)
    try:
        tensor = torch.tensor(values, dtype=target, device=device)
        mask = torch.tensor(strict, dtype=torch.bool)
        if "shape" in spec:
            tensor, mask = tensor.reshape(spec["shape"]), mask.reshape(spec["shape"])
    except (RuntimeError, TypeError, ValueError, OverflowError) as err:
        raise CaseError(f"{_show_literal(literal)} is no {dtype_name(target)} tensor: {one_line(err, 200)}") from None
    return tensor, mask


def _scalar(value: Any, dtype: torch.dtype, kind: str) -> Any:
    if isinstance(value, str):
        value = special_value(value, dtype if kind == "number" else (torch.float64 if kind == "float" else torch.int64))
    if kind == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if kind in ("int", "SymInt") and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _argument_value(argument, value: Any, dtype: torch.dtype, device: str) -> Any:
    kind = argument.base_type
    if value is None:
        if argument.optional or kind == "List[Optional[Tensor]]":
            return None
        raise CaseError(f"argument {argument.name!r} ({argument.type}) cannot be null")
    if kind == "Tensor":
        return tensor_literal(value, dtype, device)[0]
    if kind in ("List[Tensor]", "List[Optional[Tensor]]"):
        if not isinstance(value, list):
            raise CaseError(f"argument {argument.name!r} ({argument.type}) takes a list of tensor literals")
        return [None if item is None else tensor_literal(item, dtype, device)[0] for item in value]
    if kind in ("number", "float", "int", "SymInt"):
        return _scalar(value, dtype, kind)
    if kind in ("List[int]", "List[SymInt]", "List[float]") and isinstance(value, list):
        return [_scalar(item, dtype, kind[5:-1]) for item in value]
    if kind in ("ScalarType", "Layout", "MemoryFormat") and isinstance(value, str):
        resolved = getattr(torch, value, None)
        if resolved is None:
            raise CaseError(f"argument {argument.name!r}: torch has no {kind} {value!r}")
        return resolved
    if kind == "Device" and isinstance(value, str):
        return torch.device(value)
    return value


def materialize(case: SpecialCase, op_overload: Any, dtype: "str | torch.dtype",
                device: str = "cpu") -> tuple[tuple, dict]:
    """(args, kwargs) calling ``op_overload`` (an OpOverload or its qualified name) as the row says.

    Argument names are checked against the op's FunctionSchema; an omitted argument takes the
    schema's default (an optional one without a default is None). CaseError when the row does not fit.
    """
    op = torch_ops.resolve(op_overload) if isinstance(op_overload, str) else op_overload
    target = dtype_of(dtype)
    name, arguments = arguments_of(op._schema)
    known = {a.name for a in arguments}
    unknown = [key for key in case.inputs if key not in known]
    if unknown:
        raise CaseError(f"{name} has no argument {unknown[0]!r} (its schema: {op._schema})")
    positional = [a for a in arguments if not a.kwarg_only]
    needed = [i for i, a in enumerate(positional) if a.name in case.inputs or not (a.has_default or a.optional)]
    args = []
    for argument in positional[: (max(needed) + 1) if needed else 0]:
        if argument.name in case.inputs:
            args.append(_argument_value(argument, case.inputs[argument.name], target, device))
        elif argument.has_default:
            args.append(argument.default)
        elif argument.optional:
            args.append(None)
        else:
            raise CaseError(f"row gives no value for {name}'s required argument {argument.name!r}")
    kwargs = {}
    for argument in (a for a in arguments if a.kwarg_only):
        if argument.name in case.inputs:
            kwargs[argument.name] = _argument_value(argument, case.inputs[argument.name], target, device)
        elif argument.name == "device" and torch.device(device).type != "cpu":
            kwargs["device"] = torch.device(device)  # factory ops build on the device under test
        elif argument.name == "dtype" and argument.base_type == "ScalarType" and not any(a.is_tensor for a in arguments):
            kwargs["dtype"] = target  # a factory op has no tensor to carry the row's dtype: its dtype argument does
        elif not argument.has_default:
            if not argument.optional:
                raise CaseError(f"row gives no value for {name}'s required argument {argument.name!r}")
            kwargs[argument.name] = None
    return tuple(args), kwargs


# --- judging --------------------------------------------------------------------------------------------------------

def _show_literal(literal: Any) -> str:
    return repr(literal)[:200]


def _show_number(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)  # shortest text that reads back the same: 1e-10 stays 1e-10
    return repr(value)


def _number_pieces(item: Any) -> Iterator[str]:
    """A nested list's text, a piece at a time: brackets, separators and numbers."""
    if not isinstance(item, list):
        yield _show_number(item)
        return
    yield "["
    for position, inner in enumerate(item):
        if position:
            yield ", "
        yield from _number_pieces(inner)
    yield "]"


def _pieces_up_to(pieces: Iterable[str], length: int) -> Iterator[str]:
    """The pieces until ``length`` characters are out: a large tensor's text is cut short anyway."""
    for piece in pieces:
        yield piece
        length -= len(piece)
        if length <= 0:
            return


def show(value: Any, limit: int = 200) -> str:
    """An output as one line, every float at full precision, its dtype named."""
    if isinstance(value, BaseException):
        return one_line(value, limit)
    if isinstance(value, (tuple, list)) and not isinstance(value, torch.Tensor):
        return "(" + ", ".join(show(v, limit) for v in value) + ")"
    if isinstance(value, torch.Tensor):
        data = value.detach().cpu()
        text = "".join(_pieces_up_to(_number_pieces(data.tolist()), limit + 1))
        if len(text) > limit:
            text = text[: limit - 3] + "..."
        shape = f" shape {list(data.shape)}" if data.numel() == 0 or data.dim() > 1 else ""
        return f"{text} ({dtype_name(data.dtype)}{shape})"
    return _show_number(value)


def _mismatch(literal: Any, got: Any, rtol: float | None) -> str | None:
    """Why ``got`` is not the literal's result (None when it is)."""
    agreement = element_agreement(literal, got, rtol)
    if isinstance(agreement, str):
        return agreement
    return None if bool(agreement.all()) else "values differ"


def element_agreement(literal: Any, got: Any, rtol: float | None) -> "torch.Tensor | str":
    """Which elements of ``got`` are the literal's (a bool tensor of its shape), or why they cannot be compared
    (another dtype or shape, not a tensor)."""
    if isinstance(got, (bool, int, float)):
        got = torch.tensor(got)
    if not isinstance(got, torch.Tensor):
        return f"{got!r} is not a tensor"
    got = got.detach().cpu()
    stated = literal.get("dtype") if isinstance(literal, dict) else None
    if stated and dtype_name(got.dtype) != stated:
        return f"dtype {dtype_name(got.dtype)}, expected {stated}"
    try:
        want, strict = tensor_literal(literal, got.dtype)
    except CaseError as err:
        return str(err)
    if tuple(got.shape) != tuple(want.shape):
        return f"shape {list(got.shape)}, expected {list(want.shape)}"
    if not (got.dtype.is_floating_point or got.dtype.is_complex):
        return got == want
    wide = torch.complex128 if got.dtype.is_complex else torch.float64
    # resolve_conj: a lazily conjugated result (_conj) has no real view until its conjugate bit is applied
    g, w = got.resolve_conj().to(wide), want.to(wide)
    if got.dtype.is_complex:
        g, w = torch.view_as_real(g), torch.view_as_real(w)
        strict = strict.unsqueeze(-1).expand(g.shape)
    ok = (g == w) | (torch.isnan(g) & torch.isnan(w))
    if rtol is not None:
        ok |= (g - w).abs() <= rtol * w.abs()
    ok &= ~strict | (torch.signbit(g) == torch.signbit(w))
    return ok.all(-1) if got.dtype.is_complex else ok


def outputs_of(outcome: Any) -> list:
    return list(outcome) if isinstance(outcome, (tuple, list)) else [outcome]


def _each_mismatch(literals: Iterable[Any], outcome: Any, rtol: float | None) -> str | None:
    literals = list(literals)
    outputs = outputs_of(outcome)
    if len(outputs) != len(literals):
        return f"{len(outputs)} outputs, the row states {len(literals)}"
    for position, (literal, got) in enumerate(zip(literals, outputs)):
        if literal is not None:
            why = _mismatch(literal, got, rtol)
            if why:
                return f"output {position}: {why}"
    return None


def expected_text(case: SpecialCase) -> str:
    if case.undefined:
        return "undefined (an error or any result)"
    if case.raises:
        return case.raises + (f" matching {case.match!r}" if case.match else "")
    if case.expect_each is not None:
        return "(" + ", ".join("-" if e is None else _show_literal(e) for e in case.expect_each) + ")"
    return _show_literal(case.expect) + (f" within rtol {case.rtol:g}" if case.rtol else "")


def judge_contained(case: SpecialCase, answer: Any) -> Judgement:
    """A row of inputs out of contract, judged on what its call did in a child process
    (:class:`opspec.testing.contained.Contained`): a row stating ``raises`` holds when the child raised it; a row
    stating ``undefined`` holds unless torch checked the inputs and raised, since then the row can state that."""
    expected, got = expected_text(case), str(answer)
    if case.undefined:
        if answer.kind == "raised":
            return Judgement(False, expected=expected, got=got,
                             reason="torch checks these inputs: the row can state what it raises")
        return Judgement(True, latitude=f"undefined: {case.undefined}", expected=expected, got=got)
    ok = answer.kind == "raised" and case.raises in answer.classes and \
        (not case.match or re.search(case.match, answer.detail) is not None)
    return Judgement(ok, "" if ok else f"expected {expected}, got {got}", expected=expected, got=got)


def judge(case: SpecialCase, dtype: "str | torch.dtype", outcome: Any, *, latitude: bool = True) -> Judgement:
    """Whether ``outcome`` (the op's output, or the exception it raised) is what the row says.

    With ``latitude`` (a backend's verdict) a result the row allows also passes, and the judgement
    says which; torch itself is judged with ``latitude=False``: it must give ``expect``, unless the row's
    latitude is ``torch_too`` (torch's answer depends on the build or CPU).
    """
    expected = expected_text(case)
    raised = isinstance(outcome, BaseException)
    if case.undefined:  # out of contract: any answer, an error included, is one a backend may give
        return Judgement(True, latitude=f"undefined: {case.undefined}", expected=expected, got=show(outcome))
    if case.raises:
        if not raised:
            return _failed(expected, outcome)
        classes = type(outcome).__mro__
        names = {cls.__name__ for cls in classes} | {f"{cls.__module__}.{cls.__name__}" for cls in classes}
        matches = not case.match or re.search(case.match, str(outcome)) is not None
        return Judgement(True, expected=expected) if case.raises in names and matches else _failed(expected, outcome)
    if raised:
        return _failed(expected, outcome)
    if case.expect_each is not None:
        check = lambda wanted: _each_mismatch(wanted, outcome, case.rtol)  # noqa: E731
        why = check(case.expect_each)
    else:
        def check(wanted: Any) -> str | None:
            outputs = outputs_of(outcome)
            if len(outputs) != 1:
                return f"{len(outputs)} outputs: a row states several with expect_each"
            return _mismatch(wanted, outputs[0], case.rtol)
        why = check(case.expect)
    if why is None:
        return Judgement(True, expected=expected)
    if latitude and case.latitude and _latitude_holds(case, dtype):
        for allowed in case.latitude.allowed:
            if check(allowed) is None:
                used = f"allowed result {_show_literal(allowed)} ({case.latitude.reason})"
                return Judgement(True, latitude=used, expected=expected, got=show(outcome))
    return _failed(expected, outcome, "" if why == "values differ" else why)


def _failed(expected: str, outcome: Any, reason: str = "") -> Judgement:
    got = show(outcome)
    return Judgement(False, f"expected {expected}, got {got}" + (f" ({reason})" if reason else ""),
                     expected=expected, got=got, reason=reason)


def _latitude_holds(case: SpecialCase, dtype: "str | torch.dtype") -> bool:
    """A latitude under the subnormal policy holds only in a dtype the policy lets flush; any other always."""
    if case.latitude.policy != "subnormals":
        return True
    return subnormal_latitude.policy_of(str(dtype).removeprefix("torch.")).flushes


def run(op: Any, args: tuple, kwargs: dict) -> Any:
    """The op's output, or the exception it raised (what ``judge`` takes)."""
    try:
        with torch.no_grad():
            return op(*args, **kwargs)
    except Exception as err:  # the exception is the outcome a row may state
        return err
